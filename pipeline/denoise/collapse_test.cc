#include "pipeline/denoise/collapse.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace neardup::denoise_internal {
namespace {

using collapse_internal::append_collapsed_portable;

struct Written {
  std::string out;
  Collapsed result;
};

template <typename Append>
Written write(Append append, std::string_view text, bool space, std::string out = "") {
  Collapsed result = append(text, out, space);
  return {std::move(out), result};
}

const auto kPortable = [](std::string_view t, std::string& o, bool s) {
  return append_collapsed_portable(t, o, s);
};
const auto kDispatched = [](std::string_view t, std::string& o, bool s) {
  return append_collapsed(t, o, s);
};

// The rule itself, in both loops: whitespace runs (with no-break spaces) become one space, a
// leading run after whitespace is dropped, characters and commas are those appended.
TEST(Collapse, WhitespaceRunsBecomeOneSpace) {
  for (const auto& append : {+kPortable, +kDispatched}) {
    Written w = write(append, " \t a \n\r\f b\xC2\xA0\xC2\xA0 c ", true, "x ");
    EXPECT_EQ(w.out, "x a b c ");
    EXPECT_TRUE(w.result.space);
    EXPECT_EQ(w.result.chars, 6u);  // "a b c "
    w = write(append, " a", false);
    EXPECT_EQ(w.out, " a");
    EXPECT_FALSE(w.result.space);
    // A lone C2 at the end, or A0 at the start, is not a no-break space.
    w = write(append, "\xA0z\xC2", true);
    EXPECT_EQ(w.out, "\xA0z\xC2");
    EXPECT_EQ(w.result.chars, 2u);
    w = write(append, "", true, "kept");
    EXPECT_EQ(w.out, "kept");
    EXPECT_TRUE(w.result.space);
  }
}

TEST(Collapse, CommasOfFourScriptsAreCountedWholeWithinTheText) {
  for (const auto& append : {+kPortable, +kDispatched}) {
    // ',' U+FF0C U+3001 U+060C, then a U+FF0C cut short by the end of the text.
    Written w = write(append, "a,b\xEF\xBC\x8C\xE3\x80\x81\xD8\x8C\xEF\xBC", false);
    EXPECT_EQ(w.result.commas, 4u);
    EXPECT_EQ(w.result.chars, 7u);
  }
}

// Whichever loop append_collapsed takes here (64 bytes a step on a CPU with AVX-512 BW and
// VBMI2) writes the portable loop's bytes, counts and state: random text of the bytes that
// matter (whitespace, no-break spaces and commas split anywhere, UTF-8 lead and continuation
// bytes), of lengths around the 64-byte steps, after text that does or does not end in a space.
TEST(Collapse, EqualsThePortableLoop) {
  const std::string alphabet =
      std::string(" \t\n\r\f,ab.\xC2\xA0\xEF\xBC\x8C\xE3\x80\x81\xD8\xE4\xB8\xAD") + '\0';
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    const std::size_t length = rng() % 200;
    std::string text;
    const bool spacey = rng() % 2;  // mostly whitespace, or mostly other bytes
    for (std::size_t i = 0; i < length; ++i) {
      const std::size_t pick = spacey ? rng() % 8 : rng() % alphabet.size();
      text += alphabet[pick];
    }
    const bool space = rng() % 2;
    const std::string prefix = space ? "p " : "p";
    const Written fast = write(kDispatched, text, space, prefix);
    const Written portable = write(kPortable, text, space, prefix);
    ASSERT_EQ(fast.out, portable.out) << "round " << round;
    ASSERT_EQ(fast.result.space, portable.result.space) << "round " << round;
    ASSERT_EQ(fast.result.chars, portable.result.chars) << "round " << round;
    ASSERT_EQ(fast.result.commas, portable.result.commas) << "round " << round;
  }
}

// A no-break space across a 64-byte step, and whitespace runs across one.
TEST(Collapse, NoBreakSpacesAndRunsAcrossSteps) {
  for (std::size_t at = 60; at < 68; ++at) {
    std::string text(130, 'x');
    text.replace(at, 2, "\xC2\xA0");
    text[at + 2] = ' ';
    text[127] = ' ';
    text[128] = ' ';
    EXPECT_EQ(write(kDispatched, text, false).out, write(kPortable, text, false).out) << at;
  }
}

}  // namespace
}  // namespace neardup::denoise_internal
