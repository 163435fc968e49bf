#include "pipeline/decode/text_runs.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/cjk.h"

namespace neardup::decode_internal {
namespace {

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += {static_cast<char>(0xC0 | c >> 6), static_cast<char>(0x80 | (c & 0x3F))};
  } else if (c < 0x10000) {
    out += {static_cast<char>(0xE0 | c >> 12), static_cast<char>(0x80 | (c >> 6 & 0x3F)),
            static_cast<char>(0x80 | (c & 0x3F))};
  } else {
    out += {static_cast<char>(0xF0 | c >> 18), static_cast<char>(0x80 | (c >> 12 & 0x3F)),
            static_cast<char>(0x80 | (c >> 6 & 0x3F)), static_cast<char>(0x80 | (c & 0x3F))};
  }
}

int32_t skip(const std::string& s, int32_t i) {
  return skip_kanji_and_kana(reinterpret_cast<const uint8_t*>(s.data()), i,
                             static_cast<int32_t>(s.size()));
}

int32_t skip_portable(const std::string& s, int32_t i) {
  return skip_kanji_and_kana_portable(reinterpret_cast<const uint8_t*>(s.data()), i,
                                      static_cast<int32_t>(s.size()));
}

TEST(SkipKanjiAndKana, StopsAtTheFirstCharacterOutsideTheRanges) {
  std::string s;
  for (char32_t c : {U'\u65E5', U'\u672C', U'\u3072', U'\u30AB'}) append_utf8(s, c);
  append_utf8(s, U'\u3002');  // 。 punctuation
  append_utf8(s, U'\u4E2D');
  EXPECT_EQ(skip_portable(s, 0), 12);
  EXPECT_EQ(skip(s, 0), 12);
  EXPECT_EQ(skip(s, 15), 18);
  EXPECT_EQ(skip(s, 18), 18);
  EXPECT_EQ(skip("abc", 0), 0);
}

// Every code point is judged as is_common_han_or_kana judges it, wherever it falls in the
// vectorised loop's 48-byte steps: each BMP code point from U+2000 to U+A100 is put after runs
// of 0 to 20 ideographs, and must end the run exactly when it is not in the ranges.
TEST(SkipKanjiAndKana, JudgesEveryCodePointAsTheRangesDo) {
  for (char32_t c = 0x2000; c < 0xA100; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    for (int before : {0, 15, 16, 20}) {
      std::string s;
      for (int k = 0; k < before; ++k) append_utf8(s, U'\u6587');
      append_utf8(s, c);
      s.append(64, 'x');  // room for a full load after the character
      const int32_t expected = 3 * before + (is_common_han_or_kana(c) ? 3 : 0);
      ASSERT_EQ(skip(s, 0), expected)
          << std::hex << static_cast<uint32_t>(c) << " after " << std::dec << before;
      ASSERT_EQ(skip_portable(s, 0), expected) << std::hex << static_cast<uint32_t>(c);
    }
  }
}

// Random text of kanji, kana, their neighbours, ASCII, other scripts, stray continuation bytes,
// truncated sequences: the vectorised loop ends every run where the portable one does, from
// every start.
TEST(SkipKanjiAndKana, EqualsThePortableLoopOnRandomText) {
  std::mt19937 rng(7);
  const std::vector<char32_t> pool = {0x4E00, 0x4DFF, 0x9FFF, 0xA000, 0x3040, 0x3041,
                                      0x3096, 0x3097, 0x30A0, 0x30A1, 0x30FA, 0x30FB,
                                      0x30FC, 0x3002, 0xFF0C, 0x4E2D, 0x6587, 0x3042,
                                      0x30AB, 0xAC00, 'a',    ' ',    0x00E9, 0x1F600};
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const int n = std::uniform_int_distribution<int>(0, 80)(rng);
    for (int k = 0; k < n; ++k) {
      const int kind = std::uniform_int_distribution<int>(0, 19)(rng);
      if (kind == 0) {
        s += static_cast<char>(std::uniform_int_distribution<int>(0x80, 0xFF)(rng));  // stray
      } else if (kind == 1) {
        std::string c;
        append_utf8(c, 0x4E2D);
        s += c.substr(0, 2);  // truncated
      } else if (kind < 12) {
        append_utf8(s, U'\u5B57');
      } else {
        append_utf8(s, pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)]);
      }
    }
    for (int32_t i = 0; i <= static_cast<int32_t>(s.size()); ++i) {
      ASSERT_EQ(skip(s, i), skip_portable(s, i)) << "round " << round << " from " << i;
    }
  }
}

// The first byte >= 0x80 ends the run, wherever it falls in the vectorised loop's 64-byte steps
// and the portable loop's 8-byte ones, from every start.
TEST(SkipAscii, StopsAtTheFirstNonAsciiByteFromEveryStart) {
  for (std::size_t size : {0u, 1u, 7u, 8u, 63u, 64u, 65u, 130u, 200u}) {
    for (std::size_t high = 0; high <= size; ++high) {
      std::string s(size, 'a');
      if (high < size) s[high] = static_cast<char>(0x80 | (high & 0x7F));
      const auto* text = reinterpret_cast<const uint8_t*>(s.data());
      const auto length = static_cast<int32_t>(s.size());
      for (int32_t i = 0; i <= length; ++i) {
        const int32_t expected =
            static_cast<std::size_t>(i) <= high ? static_cast<int32_t>(high) : length;
        ASSERT_EQ(skip_ascii(text, i, length), expected) << size << " " << high << " " << i;
        ASSERT_EQ(skip_ascii_portable(text, i, length), expected)
            << size << " " << high << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace neardup::decode_internal
