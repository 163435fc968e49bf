#include "pipeline/compare.h"

#include <gtest/gtest.h>

namespace neardup {
namespace {

// A fingerprinted page with these signatures.
PageFingerprint page(std::uint64_t fingerprint, Sketch sketch = {}) {
  PageFingerprint p;
  p.fingerprint = fingerprint;
  p.sketch = std::move(sketch);
  return p;
}

Config simhash_only() {
  Config config;
  config.minhash.enabled = false;
  return config;
}

}  // namespace

TEST(Compare, FingerprintsWithinMaxDistanceAreNearDuplicatesBySimHash) {
  Comparison c = compare_pages(page(0), page(0b111), simhash_only());
  EXPECT_TRUE(c.comparable);
  EXPECT_EQ(c.distance, 3);
  EXPECT_TRUE(c.near_duplicate());
  EXPECT_EQ(c.method(), "simhash");
  EXPECT_FALSE(c.similarity.has_value());

  Comparison far = compare_pages(page(0), page(0b1111), simhash_only());
  EXPECT_FALSE(far.near_duplicate());
  EXPECT_EQ(far.method(), "");
}

TEST(Compare, SketchesSharingABandAtMinSimilarityAreNearDuplicatesByMinHash) {
  Config config;
  config.minhash = {.enabled = true, .shingle = 5, .hashes = 4, .bands = 2, .rows = 2};
  config.dedup.min_similarity = 0.45;
  // Band 0 agrees, band 1 does not: an estimated similarity of (just under) one half.
  Comparison c = compare_pages(page(0, {1, 2, 3, 4}), page(~0ull, {1, 2, 9, 9}), config);
  EXPECT_TRUE(c.shares_band);
  // Half the values equal, corrected for the 2^-8 chance agreement of the compared bits.
  EXPECT_NEAR(*c.similarity, (0.5 - 1.0 / 256) / (1 - 1.0 / 256), 1e-4);
  EXPECT_EQ(c.method(), "minhash");

  config.dedup.min_similarity = 0.75;
  EXPECT_FALSE(
      compare_pages(page(0, {1, 2, 3, 4}), page(~0ull, {1, 2, 9, 9}), config).near_duplicate());
  EXPECT_EQ(compare_pages(page(0, {1, 2, 3, 4}), page(1, {1, 2, 3, 4}), config).method(), "both");
}

TEST(Compare, SkippedPageIsNotComparable) {
  PageFingerprint skipped;
  skipped.skip = Skip{"low_content", ""};
  Comparison c = compare_pages(page(0), skipped, Config{});
  EXPECT_FALSE(c.comparable);
  EXPECT_FALSE(c.near_duplicate());
}

TEST(Compare, ContainmentSaysWhichTextHoldsTheOther) {
  Config config;
  config.containment.enabled = true;
  PageFingerprint whole = page(0), part = page(~0ull), other = page(0x0f0f);
  whole.passages.anchors = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  whole.passages.paragraphs = {{.hash = 100, .index = 0, .tokens = 9}, {.hash = 200}};
  part.passages.anchors = {2, 3, 4, 99};  // 3 of 4 found in whole; 3 of 10 of whole in it
  part.passages.paragraphs = {{.hash = 200, .index = 3, .tokens = 12}};
  other.passages.anchors = {50, 51};
  Comparison c = compare_pages(part, whole, config);
  EXPECT_DOUBLE_EQ(*c.a_in_b, 0.75);
  EXPECT_DOUBLE_EQ(*c.b_in_a, 0.3);
  EXPECT_TRUE(c.a_contained);
  EXPECT_FALSE(c.b_contained);
  EXPECT_EQ(c.contained(), "a_in_b");
  EXPECT_EQ(c.paragraphs_shared, 1u);
  EXPECT_EQ(compare_pages(whole, part, config).contained(), "b_in_a");
  EXPECT_EQ(compare_pages(whole, whole, config).contained(), "a_in_b");  // both: either
  EXPECT_EQ(compare_pages(other, whole, config).contained(), "");
  config.dedup.min_containment = 0.8;
  EXPECT_EQ(compare_pages(part, whole, config).contained(), "");
  config.containment.enabled = false;
  EXPECT_FALSE(compare_pages(part, whole, config).a_in_b.has_value());
}

}  // namespace neardup
