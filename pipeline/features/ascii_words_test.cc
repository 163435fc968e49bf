#include "pipeline/features/ascii_words.h"

#include <gtest/gtest.h>
#include <unicode/brkiter.h>
#include <unicode/ubrk.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace neardup::features_internal {
namespace {

using Segments = std::vector<std::pair<std::int32_t, std::int32_t>>;

// The segments ICU's root word break iterator gives a word or number status.
Segments icu_segments(const std::u16string& text) {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::BreakIterator> breaker(
      icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
  EXPECT_TRUE(U_SUCCESS(status));
  icu::UnicodeString chars(text.data(), static_cast<int32_t>(text.size()));
  breaker->setText(chars);
  Segments out;
  for (int32_t start = breaker->first(), end = breaker->next(); end != icu::BreakIterator::DONE;
       start = end, end = breaker->next()) {
    if (breaker->getRuleStatus() >= UBRK_WORD_NONE_LIMIT) out.emplace_back(start, end);
  }
  return out;
}

std::optional<Segments> ascii_segments(const std::u16string& text) {
  Segments out;
  if (!ascii_words(text.data(), static_cast<std::int32_t>(text.size()),
                   [&](std::int32_t start, std::int32_t end) { out.emplace_back(start, end); })) {
    return std::nullopt;
  }
  return out;
}

TEST(AsciiWords, SplitsLikeIcuOnTheCasesTheRulesName) {
  for (const std::u16string text :
       {u"", u"word", u"two words", u"can't won't", u"e.g. i.e.", u"3.14 1,000,000 1;2",
        u"a.1 1.a a,b a;b", u"a..b 1..2 a''b", u"covid19 mp3 19th 2x4", u"a1.2 1.2a",
        u"x:y 12:30 http://example.com/a-b?c=d&e=f", u"\"quoted\" (paren) [b] {c} <d>",
        u"end. 'start quote' 'tis", u"tab\tseparated\rcarriage", u"trailing.", u".leading",
        u"UPPER Case MiXeD", u"--- ... ,,, ;;; '''", u"a.b.c.d 1.2.3.4 a'b.c"}) {
    const auto ours = ascii_segments(text);
    ASSERT_TRUE(ours.has_value());
    EXPECT_EQ(*ours, icu_segments(text)) << std::string(text.begin(), text.end());
  }
}

// Every ASCII character the function takes, in every kind of place.
TEST(AsciiWords, SplitsLikeIcuWithEveryAsciiCharacterAnywhere) {
  int taken = 0;
  for (char16_t x = 1; x < 128; ++x) {
    for (const std::u16string pattern : {u"aXb", u"1X2", u"X", u"Xa", u"aX", u"X1", u"1X", u"a X b",
                                         u"aXXb", u"1XX2", u"a1Xb2", u"Xab cd", u"ab cdX"}) {
      std::u16string text = pattern;
      for (char16_t& c : text) c = c == u'X' ? x : c;
      const auto ours = ascii_segments(text);
      if (!ours) continue;
      ++taken;
      EXPECT_EQ(*ours, icu_segments(text)) << "character " << static_cast<int>(x);
    }
  }
  EXPECT_EQ(taken, (127 - 3) * 13);  // all but '_', '@' and the line break
}

// Random lines over the characters the rules treat differently, and some they do not.
TEST(AsciiWords, SplitsLikeIcuOnRandomAsciiLines) {
  const std::u16string alphabet = u"ab9 .',;:-\"!/?\t\r(A0z";
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1), size(0, 24);
  for (int n = 0; n < 20000; ++n) {
    std::u16string text(size(rng), u' ');
    for (char16_t& c : text) c = alphabet[pick(rng)];
    const auto ours = ascii_segments(text);
    ASSERT_TRUE(ours.has_value());
    ASSERT_EQ(*ours, icu_segments(text)) << std::string(text.begin(), text.end());
  }
}

TEST(AsciiWords, LeavesOtherLinesToIcu) {
  int calls = 0;
  auto count = [&](std::int32_t, std::int32_t) { ++calls; };
  for (const std::u16string text :
       {u"snake_case", u"user@example.com", u"caf\u00e9", u"line\nbreak", u"\u2014dash"}) {
    EXPECT_FALSE(ascii_words(text.data(), static_cast<std::int32_t>(text.size()), count))
        << std::string(text.begin(), text.end());
  }
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace neardup::features_internal
