#include "pipeline/passages/passages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

namespace neardup {
namespace {

// n distinct words w0 w1 ... as one paragraph, from `first`.
std::string words(int first, int n) {
  std::string out;
  for (int i = first; i < first + n; ++i) {
    const char word[] = {' ', 'w', static_cast<char>('a' + i % 26), 'x',
                         static_cast<char>('a' + (i / 26) % 26),
                         static_cast<char>('a' + (i / 676) % 26)};
    out.append(word + (out.empty() ? 1 : 0), word + sizeof word);
  }
  return out;
}

// The defaults with containment on (it is off by default).
Config on() {
  Config config;
  config.containment.enabled = true;
  return config;
}

Passages of(const std::string& text, const Config& config = on()) {
  return passages_of(hash_tokens(text, config.features, config.fingerprint.seed), config);
}

TEST(Passages, AnchorsAreDistinctSortedAndAboutTwoPerWindow) {
  const Passages p = of(words(0, 2000));
  EXPECT_TRUE(std::is_sorted(p.anchors.begin(), p.anchors.end()));
  EXPECT_EQ(std::adjacent_find(p.anchors.begin(), p.anchors.end()), p.anchors.end());
  EXPECT_EQ(p.tokens, 2000u);
  // Winnowing's density on random hashes: 2 / (w + 1) of the shingles, w = 16.
  const double expected = 2.0 * 1996 / 17;
  EXPECT_GT(static_cast<double>(p.anchors.size()), 0.85 * expected);
  EXPECT_LT(static_cast<double>(p.anchors.size()), 1.15 * expected);
}

TEST(Passages, AnySharedRunOfWindowPlusShingleTokensSharesAnAnchor) {
  // The guarantee: a run of w + k - 1 = 20 tokens inside unrelated text on both sides.
  const Config config = on();
  const std::size_t run = config.containment.window + config.minhash.shingle - 1;
  for (int start = 0; start < 200; start += 7) {
    const std::string shared = words(10000 + start, static_cast<int>(run));
    const Passages a = of(words(0, 50) + " " + shared + " " + words(500, 50));
    const Passages b = of(words(2000, 80) + " " + shared + " " + words(3000, 10));
    EXPECT_GT(containment(a.anchors, b.anchors), 0) << start;
  }
}

TEST(Passages, ContainmentOfAnExcerptAndOfUnrelatedText) {
  const std::string article = words(0, 600);
  const std::string excerpt = words(200, 200);
  const Passages a = of(article), e = of(excerpt), u = of(words(5000, 600));
  EXPECT_GT(containment(e.anchors, a.anchors), 0.9);   // nearly all of the excerpt is in it
  EXPECT_LT(containment(a.anchors, e.anchors), 0.45);  // a third of the article is in it
  EXPECT_GT(containment(a.anchors, e.anchors), 0.2);
  EXPECT_EQ(containment(u.anchors, a.anchors), 0);
  EXPECT_EQ(containment(a.anchors, a.anchors), 1);
  EXPECT_EQ(containment({}, a.anchors), 0);
}

TEST(Passages, ParagraphsAreHashedByTheirTokensAndPlace) {
  Config config = on();
  config.containment.paragraph_tokens = 3;
  const Passages p = of("One two three four.\nShort one.\n\nOne, two: THREE four!\nfive six seven", config);
  // "Short one" has 2 tokens; the third paragraph repeats the first (same tokens) and is kept
  // once; the empty line still counts as a place.
  ASSERT_EQ(p.paragraphs.size(), 2u);
  EXPECT_EQ(p.paragraphs[0].index, 0u);
  EXPECT_EQ(p.paragraphs[0].tokens, 4u);
  EXPECT_EQ(p.paragraphs[1].index, 4u);
  EXPECT_EQ(p.paragraphs[1].tokens, 3u);
  const Passages q = of("five six seven", config);
  ASSERT_EQ(q.paragraphs.size(), 1u);
  EXPECT_EQ(q.paragraphs[0].hash, p.paragraphs[1].hash);
}

TEST(Passages, ShortTextsAndDisabled) {
  EXPECT_TRUE(of("").empty());
  const Passages few = of("just three words");  // fewer tokens than a shingle
  EXPECT_TRUE(few.anchors.empty());
  const Passages one = of(words(0, 8));  // fewer shingles than a window: its smallest
  EXPECT_EQ(one.anchors.size(), 1u);
  Config off = on();
  off.containment.enabled = false;
  EXPECT_TRUE(of(words(0, 100), off).empty());
}

TEST(Passages, SeenParagraphsAreDroppedFromLaterTextsOnly) {
  Config config = on();
  config.containment.paragraph_tokens = 3;
  std::unordered_set<std::uint64_t> seen;
  const std::string first = "A shared notice about cookies here.\nThe first story itself.";
  const std::string second =
      "The second story, new.\nA SHARED notice about cookies here!\nok\nThe first story itself.";
  KeptText a = drop_seen_paragraphs(first, of(first, config), seen);
  EXPECT_EQ(a.text, first);  // nothing seen before: the first occurrence stays
  EXPECT_EQ(a.dropped_paragraphs, 0u);
  KeptText b = drop_seen_paragraphs(second, of(second, config), seen);
  EXPECT_EQ(b.text, "The second story, new.\nok");  // "ok" is too short to be tracked
  EXPECT_EQ(b.dropped_paragraphs, 2u);
  EXPECT_EQ(b.dropped_bytes, second.size() - b.text.size() - 2);  // less the two line breaks
  KeptText c = drop_seen_paragraphs(second, of(second, config), seen);
  EXPECT_EQ(c.text, "ok");
}

TEST(Passages, ParagraphsAreDroppedByTheirPlaceAmongTheTracked) {
  Config config = on();
  config.containment.paragraph_tokens = 3;
  const std::string text = "One two three four.\nok\nFive six seven.\nEight nine ten eleven.";
  const Passages p = of(text, config);
  ASSERT_EQ(p.paragraphs.size(), 3u);  // lines 0, 2, 3
  EXPECT_EQ(drop_paragraphs(text, p, {1}).text, "One two three four.\nok\nEight nine ten eleven.");
  EXPECT_EQ(drop_paragraphs(text, p, {2, 0}).text, "ok\nFive six seven.");
  EXPECT_EQ(drop_paragraphs(text, p, {}).text, text);
  EXPECT_EQ(drop_paragraphs(text, p, {9}).text, text);  // no such paragraph
}

TEST(Passages, TheSeedChangesEveryHash) {
  Config a = on(), b = on();
  b.fingerprint.seed = a.fingerprint.seed + 1;
  const std::string text = words(0, 100);
  EXPECT_NE(passages_of(hash_tokens(text, a.features, a.fingerprint.seed), a).anchors,
            passages_of(hash_tokens(text, b.features, b.fingerprint.seed), b).anchors);
}

}  // namespace
}  // namespace neardup
