#include "common/cjk.h"

#include <gtest/gtest.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>

namespace neardup {
namespace {

bool icu_han_or_kana_letter(UChar32 c) {
  UErrorCode status = U_ZERO_ERROR;
  const UScriptCode script = uscript_getScript(c, &status);
  return U_SUCCESS(status) && u_charType(c) == U_OTHER_LETTER &&
         (script == USCRIPT_HAN || script == USCRIPT_HIRAGANA || script == USCRIPT_KATAKANA);
}

// Every code point in the ranges is, by ICU's properties, a Han, hiragana or katakana letter;
// callers rely on that to skip the lookup.
TEST(IsCommonHanOrKana, EveryCodePointInTheRangesIsAHanOrKanaLetter) {
  for (UChar32 c = 0; c <= 0x10FFFF; ++c) {
    if (is_common_han_or_kana(static_cast<char32_t>(c))) {
      ASSERT_TRUE(icu_han_or_kana_letter(c)) << std::hex << c;
    }
  }
}

// The ranges are whole: no code point next to one of them is such a letter too, so a range
// does not stop short of its block's letters.
TEST(IsCommonHanOrKana, TheRangesAreBoundedByCodePointsOutsideThem) {
  for (UChar32 c : {0x4DFF, 0x3040, 0x3097, 0x30A0, 0x30FB}) {
    EXPECT_FALSE(is_common_han_or_kana(static_cast<char32_t>(c))) << std::hex << c;
  }
  EXPECT_FALSE(icu_han_or_kana_letter(0x3040));  // unassigned
  EXPECT_FALSE(icu_han_or_kana_letter(0x30A0));  // the double hyphen, punctuation
  EXPECT_FALSE(icu_han_or_kana_letter(0x30FB));  // the middle dot, punctuation
  EXPECT_TRUE(is_common_han_or_kana(U'\u4E00'));
  EXPECT_TRUE(is_common_han_or_kana(U'\u9FFF'));
  EXPECT_TRUE(is_common_han_or_kana(U'\u3042'));
  EXPECT_TRUE(is_common_han_or_kana(U'\u30A2'));
  EXPECT_FALSE(is_common_han_or_kana(U'A'));
  EXPECT_FALSE(is_common_han_or_kana(U'\uAC00'));  // Hangul
}

}  // namespace
}  // namespace neardup
