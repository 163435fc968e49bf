#include "pipeline/explain.h"

#include <gtest/gtest.h>

#include <string>

namespace neardup {
namespace {

// n distinct words "w<from> w<from+1> …": text no other call shares unless asked to.
std::string words(int from, int n) {
  std::string out;
  for (int i = from; i < from + n; ++i) out += (out.empty() ? "w" : " w") + std::to_string(i) + "x";
  return out;
}

Explanation explain(const std::string& a, const std::string& b, ExplainOptions options = {}) {
  return explain_texts(a, b, FeaturesConfig{}, options);
}

TEST(Explain, AParagraphCopiedIntoAnotherPageIsNamedWithItsPositionInEach) {
  const std::string copied = "The council voted on Tuesday to close the old harbour bridge.";
  const std::string a = words(0, 5) + "\n" + copied + "\n" + words(100, 7);
  const std::string b = words(200, 3) + "\n" + words(300, 4) + "\n" + copied;
  const Explanation e = explain(a, b);
  ASSERT_EQ(e.paragraphs_shared, 1u);
  ASSERT_EQ(e.paragraphs.size(), 1u);
  EXPECT_EQ(e.paragraphs[0].a.paragraph, 1u);
  EXPECT_EQ(e.paragraphs[0].a.word, 5u);
  EXPECT_EQ(e.paragraphs[0].b.paragraph, 2u);
  EXPECT_EQ(e.paragraphs[0].b.word, 7u);
  EXPECT_EQ(e.paragraphs[0].words, 11u);
  EXPECT_EQ(e.paragraphs[0].text, copied);
  ASSERT_EQ(e.runs.size(), 1u);
  EXPECT_EQ(e.runs[0].words, 11u);
  EXPECT_EQ(e.runs[0].a.word, 5u);
  EXPECT_EQ(e.runs[0].b.word, 7u);
  EXPECT_EQ(e.runs[0].text.substr(0, 24), "the council voted on tue");
}

TEST(Explain, WordsAreComparedAsTheSignaturesSeeThem) {
  // Case, punctuation and spacing differ; the words do not.
  const Explanation e =
      explain("THE Council voted, on Tuesday, to close the old bridge", "the council voted on tuesday to close the old bridge");
  ASSERT_EQ(e.runs.size(), 1u);
  EXPECT_EQ(e.runs[0].words, 10u);
  EXPECT_EQ(e.paragraphs_shared, 1u);
}

TEST(Explain, AnExcerptIsCoveredWholeWhileTheLongerPageIsNot) {
  const std::string article = words(0, 200);
  const std::string excerpt = words(40, 30);
  const Explanation e = explain(excerpt, article);
  EXPECT_EQ(e.words_a, 30u);
  EXPECT_EQ(e.words_b, 200u);
  EXPECT_EQ(e.covered_a, 30u);
  EXPECT_EQ(e.covered_b, 30u);
  ASSERT_EQ(e.runs.size(), 1u);
  EXPECT_EQ(e.runs[0].b.word, 40u);
}

TEST(Explain, RunsShorterThanTheMinimumAreChanceAndRunsNeverOverlap) {
  // Two runs of 12 and 9 words shared, 5 words shared elsewhere (below 8), the rest different.
  const std::string a = words(0, 12) + " " + words(500, 3) + " " + words(100, 9) + " " + words(200, 5);
  const std::string b = words(100, 9) + " " + words(600, 2) + " " + words(0, 12) + " " + words(200, 5);
  const Explanation e = explain(a, b);
  ASSERT_EQ(e.runs.size(), 2u);
  EXPECT_EQ(e.runs[0].words, 12u);
  EXPECT_EQ(e.runs[1].words, 9u);
  EXPECT_EQ(e.covered_a, 21u);

  ExplainOptions shorter;
  shorter.min_run_words = 5;
  EXPECT_EQ(explain(a, b, shorter).covered_a, 26u);
}

TEST(Explain, ARepeatedPhraseIsReportedOnceWhereItsCopiesLineUp) {
  const std::string refrain = words(0, 10);
  const std::string a = refrain + "\n" + refrain + "\n" + refrain;
  const Explanation e = explain(a, refrain);
  // B holds one copy: one of A's three is matched, never the same B words twice.
  EXPECT_EQ(e.covered_b, 10u);
  EXPECT_EQ(e.covered_a, 10u);
}

TEST(Explain, DifferentTextsShareNothingAndEmptyTextsAreNotAnError) {
  EXPECT_TRUE(explain(words(0, 50), words(1000, 50)).runs.empty());
  const Explanation empty = explain("", "");
  EXPECT_EQ(empty.words_a, 0u);
  EXPECT_TRUE(empty.runs.empty());
  EXPECT_TRUE(empty.paragraphs.empty());
}

TEST(Explain, ListsAreBoundedButCountsAreWhole) {
  std::string a, b;
  for (int p = 0; p < 30; ++p) {
    const std::string paragraph = words(p * 100, 9);
    a += paragraph + "\n" + words(5000 + p * 10, 1) + "\n";
    b += words(9000 + p * 10, 1) + "\n" + paragraph + "\n";
  }
  ExplainOptions options;
  options.max_items = 4;
  const Explanation e = explain(a, b, options);
  EXPECT_EQ(e.paragraphs_shared, 30u);
  EXPECT_EQ(e.paragraphs.size(), 4u);
  EXPECT_EQ(e.runs.size(), 4u);
  EXPECT_EQ(e.covered_a, 270u);
}

TEST(Explain, PreviewsAreCutAtACharacterBoundary) {
  std::string paragraph;
  for (int i = 0; i < 40; ++i) paragraph += "événement ";
  ExplainOptions options;
  options.preview_bytes = 13;  // inside the "é" that starts the second word
  const Explanation e = explain(paragraph, paragraph, options);
  ASSERT_EQ(e.paragraphs.size(), 1u);
  const std::string& text = e.paragraphs[0].text;
  EXPECT_EQ(text.substr(text.size() - 3), "…");
  EXPECT_LE(text.size(), 13u + 3);
  EXPECT_NE(static_cast<unsigned char>(text[text.size() - 4]) & 0xC0, 0xC0);  // no cut lead byte
}

}  // namespace
}  // namespace neardup
