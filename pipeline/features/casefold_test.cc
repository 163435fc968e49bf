#include "pipeline/features/casefold.h"

#include <gtest/gtest.h>
#include <unicode/normalizer2.h>

#include <random>
#include <string>
#include <vector>

namespace neardup::features_internal {
namespace {

icu::UnicodeString icu_casefold(const std::u16string& text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc_cf = icu::Normalizer2::getNFKCCasefoldInstance(status);
  EXPECT_TRUE(U_SUCCESS(status));
  icu::UnicodeString out;
  nfkc_cf->normalize(icu::UnicodeString(text.data(), static_cast<int32_t>(text.size())), out,
                     status);
  EXPECT_TRUE(U_SUCCESS(status));
  return out;
}

std::vector<char16_t> simple_characters() {
  std::vector<char16_t> all;
  for (char16_t c = 0; c < 0x80; ++c) all.push_back(c);
  for (char16_t c = 0x4E00; c <= 0x9FFF; ++c) all.push_back(c);
  for (char16_t c = 0x3041; c <= 0x3096; ++c) all.push_back(c);
  for (char16_t c = 0x30A1; c <= 0x30FA; ++c) all.push_back(c);
  all.push_back(0x3001);
  all.push_back(0x3002);
  return all;
}

// Each character the fast path takes, alone, comes out as ICU's nfkc_cf has it.
TEST(SimpleCasefold, EveryCharacterItTakesIsWhatIcuMakesOfIt) {
  for (char16_t c : simple_characters()) {
    const std::u16string text(1, c);
    icu::UnicodeString out;
    ASSERT_TRUE(simple_casefold(text, out)) << static_cast<int>(c);
    EXPECT_EQ(out, icu_casefold(text)) << static_cast<int>(c);
  }
}

// And so does any text of them (nothing composes across characters), including the empty one,
// written over what `out` held.
TEST(SimpleCasefold, TextsOfThemAreWhatIcuMakesOfThem) {
  const std::vector<char16_t> all = simple_characters();
  std::mt19937 rng(9);
  icu::UnicodeString out("left over");
  for (int round = 0; round < 2000; ++round) {
    std::u16string text;
    for (int n = rng() % 80; n > 0; --n) {
      text += rng() % 2 ? all[rng() % 128] : all[rng() % all.size()];
    }
    ASSERT_TRUE(simple_casefold(text, out));
    ASSERT_EQ(out, icu_casefold(text)) << round;
  }
}

// Anything else is left to ICU, with `out` untouched: letters with case or compatibility
// mappings outside ASCII, the ideographic space, half-width katakana, combining marks.
TEST(SimpleCasefold, OtherTextIsLeftToIcu) {
  for (const std::u16string text : {u"Stra\u00DFe", u"\u00C9t\u00E9", u"a\u3000b", u"\uFF76\uFF9E",
                                    u"e\u0301", u"\u0416", u"\uD55C", u"\u30FC", u"\u2026"}) {
    icu::UnicodeString out("kept");
    EXPECT_FALSE(simple_casefold(text, out));
    EXPECT_EQ(out, icu::UnicodeString("kept"));
  }
}

}  // namespace
}  // namespace neardup::features_internal
