#include "pipeline/features/typography.h"

#include <gtest/gtest.h>

#include <string>

namespace neardup {
namespace {

std::u16string fold(std::u16string text) {
  text.resize(fold_typography(text));
  return text;
}

TEST(Typography, ApostrophesAndSingleQuotesBecomeTheAsciiApostrophe) {
  EXPECT_EQ(fold(u"don\u2019t \u2018x\u2019 \u201Ax\u201B 5\u2032 do\u02BCnt don\u00B4t don`t"),
            u"don't 'x' 'x' 5' do'nt don't don't");
}

TEST(Typography, DoubleQuotesBecomeTheAsciiQuote) {
  EXPECT_EQ(fold(u"\u201Ca\u201D \u201Eb\u201F \u00ABc\u00BB \u2039d\u203A 6\u2033"),
            u"\"a\" \"b\" \"c\" \"d\" 6\"");
}

TEST(Typography, DashesAndMinusSignsBecomeTheHyphenMinus) {
  EXPECT_EQ(fold(u"a\u2010b\u2011c\u2012d\u2013e\u2014f\u2015g \u22121 \uFE58\uFE63\uFF0D"),
            u"a-b-c-d-e-f-g -1 ---");
}

TEST(Typography, Utf8ReadAsWindows1252IsRepaired) {
  // "—", "’", "“", "…", "€", "™" read as windows-1252, then folded like any other dash or quote.
  EXPECT_EQ(fold(u"a \u00E2\u20AC\u201D b"), u"a - b");
  EXPECT_EQ(fold(u"it\u00E2\u20AC\u2122s"), u"it's");
  EXPECT_EQ(fold(u"\u00E2\u20AC\u0153hi"), u"\"hi");
  EXPECT_EQ(fold(u"so\u00E2\u20AC\u00A6"), u"so\u2026");
  EXPECT_EQ(fold(u"5 \u00E2\u201A\u00AC, Acme\u00E2\u201E\u00A2"), u"5 \u20AC, Acme\u2122");
  // Latin-1 and Latin Extended-A letters and signs.
  EXPECT_EQ(
      fold(u"caf\u00C3\u00A9 \u00C3\u2030t\u00C3\u00A9 \u00C5\u201Ad\u00C5\u00BA \u00C2\u00A9"),
      u"caf\u00E9 \u00C9t\u00E9 \u0142d\u017A \u00A9");
}

TEST(Typography, Utf8ReadAsLatin1IsRepaired) {
  // ISO-8859-1 reads bytes 0x80-0x9F as C1 controls.
  EXPECT_EQ(fold(u"age\" \u00E2\u0080\u0094 defined"), u"age\" - defined");
}

TEST(Typography, LostOrReplacedLastByteOfTheClosingQuoteIsRepaired) {
  EXPECT_EQ(fold(u"\u00E2\u20AC\u0153word\u00E2\u20AC next"), u"\"word\" next");
  EXPECT_EQ(fold(u"word\u00E2\u20AC\uFFFD next"), u"word\" next");
  EXPECT_EQ(fold(u"word\u00E2\u20AC\u009D next"), u"word\" next");
}

TEST(Typography, NoBreakSpaceReadAsWindows1252BecomesASpace) {
  EXPECT_EQ(fold(u"10\u00C2\u00A0km and\u00C2 more"), u"10\u00A0km and more");
}

TEST(Typography, TextReadAsWindows1252TwiceIsRepaired) {
  // "’" -> "â€™" -> "Ã¢â‚¬â„¢"
  EXPECT_EQ(fold(u"it\u00C3\u00A2\u00E2\u201A\u00AC\u00E2\u201E\u00A2s"), u"it's");
}

TEST(Typography, CorrectAccentedTextIsLeftAlone) {
  const std::u16string text =
      u"Ch\u00E2teau \u00E2g\u00E9, \u00C2me, \u00C3O, \u00C4rger, \u00C5se, na\u00EFve, "
      u"Gru\u00DF, CAF\u00C9 \u0142\u00F3d\u017A \u4E2D\u6587 \u0430\u0431\u0432 \u00C2";
  EXPECT_EQ(fold(text), text);
  // A capital before closing punctuation is not a lead this repairs.
  EXPECT_EQ(fold(u"CAF\u00C9\u201D Gru\u00DF\u201C"), u"CAF\u00C9\" Gru\u00DF\"");
}

TEST(Typography, TextWithoutTypographyIsUnchanged) {
  const std::u16string text = u"Plain ASCII, with 'quotes', \"doubles\" - and dashes.";
  EXPECT_EQ(fold(text), text);
  EXPECT_EQ(fold(u""), u"");
}

}  // namespace
}  // namespace neardup
