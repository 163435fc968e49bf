#include "store/table_design.h"

#include <gtest/gtest.h>

#include <bit>
#include <numeric>
#include <random>

namespace neardup {
namespace {

TEST(TableDesign, SplitsSixtyFourBitsIntoNearEqualBlocks) {
  auto design = TableDesign::make(3, 2);
  EXPECT_EQ(design.block_width, (std::vector<std::uint32_t>{13, 13, 13, 13, 12}));
  EXPECT_EQ(design.tables(), 10u);
  EXPECT_EQ(design.prefix_bits(0), 26u);
  EXPECT_EQ(design.prefix_bits(9), 25u);
  EXPECT_EQ(std::accumulate(design.block_width.begin(), design.block_width.end(), 0u), 64u);
}

TEST(TableDesign, PermutingKeepsHammingDistance) {
  auto design = TableDesign::make(4, 2);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) {
    std::uint64_t a = rng(), b = rng();
    for (std::size_t t = 0; t < design.tables(); ++t) {
      EXPECT_EQ(std::popcount(design.permute(t, a) ^ design.permute(t, b)), std::popcount(a ^ b));
    }
  }
}

TEST(TableDesign, EveryNeighbourWithinKSharesSomeTablePrefix) {
  for (auto [k, r] : {std::pair{3u, 1u}, {3u, 2u}, {2u, 1u}, {4u, 2u}}) {
    auto design = TableDesign::make(k, r);
    std::mt19937_64 rng(k * 10 + r);
    for (int i = 0; i < 2000; ++i) {
      std::uint64_t a = rng(), b = a;
      for (std::uint32_t flips = 0; flips < k; ++flips) b ^= 1ull << (rng() % 64);
      bool shared = false;
      for (std::size_t t = 0; t < design.tables(); ++t) {
        std::uint32_t drop = 64 - design.prefix_bits(t);
        shared |= (design.permute(t, a) >> drop) == (design.permute(t, b) >> drop);
      }
      EXPECT_TRUE(shared) << "k=" << k << " r=" << r;
    }
  }
}

TEST(TableDesign, ChoosesTheFewestTablesWhoseBucketsStaySmall) {
  // k = 3: r = 1 (4 tables, 16-bit prefixes) up to 134M pages (2,048 a bucket), then r = 2.
  EXPECT_EQ(TableDesign::for_store(3, 10'000'000, 0)->r, 1u);
  EXPECT_EQ(TableDesign::for_store(3, 100'000'000, 0)->tables(), 4u);
  EXPECT_EQ(TableDesign::for_store(3, 134'000'000, 0)->r, 1u);
  EXPECT_EQ(TableDesign::for_store(3, 135'000'000, 0)->r, 2u);
  EXPECT_EQ(TableDesign::for_store(3, 1'000'000'000, 0)->tables(), 10u);
  EXPECT_EQ(TableDesign::for_store(3, 100'000'000'000, 0)->r, 3u);
  EXPECT_EQ(TableDesign::for_store(2, 100'000'000, 0)->tables(), 3u);
  EXPECT_LE(TableDesign::for_store(4, 1'000'000'000, 0)->bucket_entries(1'000'000'000),
            TableDesign::kMaxBucketEntries);
}

TEST(TableDesign, KeepsTheBitsThatHoldFalseCandidatesUnderATenthAPage) {
  // Within 3 of 24 random bits: 2,325 / 2^24.
  EXPECT_DOUBLE_EQ(TableDesign::false_candidate_chance(3, 24), 2325.0 / (1 << 24));
  EXPECT_DOUBLE_EQ(TableDesign::false_candidate_chance(0, 8), 1.0 / 256);
  // 10 tables at 100M (1.5–3 a bucket) keep 24 bits below their 26-bit prefixes.
  EXPECT_EQ(TableDesign::for_store(3, 100'000'000, 10)->kept_key_bits(), 50u);
  // 4 tables: 153 a bucket at 10M keep 24 (40 bits in all), 1,526 at 100M keep 28 (44).
  EXPECT_EQ(TableDesign::for_store(3, 10'000'000, 0)->kept_key_bits(), 40u);
  EXPECT_EQ(TableDesign::for_store(3, 100'000'000, 0)->kept_key_bits(), 44u);
  EXPECT_EQ(TableDesign::make(3, 1).kept_key_bits(), 40u);
  for (std::uint32_t k = 1; k <= 4; ++k) {
    for (std::uint64_t n : {1'000'000ull, 30'000'000ull, 100'000'000ull, 1'000'000'000ull}) {
      auto design = TableDesign::for_store(k, n, 0);
      ASSERT_TRUE(design) << k << " " << n;
      const double candidates = static_cast<double>(design->tables()) * design->bucket_entries(n);
      const std::uint32_t bits = design->checked_bits;
      EXPECT_LT(candidates * TableDesign::false_candidate_chance(k, bits),
                TableDesign::kFalseCandidates)
          << k << " " << n;
      if (bits > TableDesign::kCheckedBits) {
        EXPECT_GE(candidates * TableDesign::false_candidate_chance(k, bits - 1),
                  TableDesign::kFalseCandidates)
            << k << " " << n;
      }
    }
  }
}

TEST(TableDesign, ExplicitTableCountPicksItsR) {
  EXPECT_EQ(TableDesign::for_store(3, 0, 10)->r, 2u);
  EXPECT_EQ(TableDesign::for_store(3, 0, 20)->r, 3u);
  auto bad = TableDesign::for_store(3, 0, 7);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().find("4, 10"), std::string::npos) << bad.error();
  EXPECT_FALSE(TableDesign::for_store(3, 0, 120));  // C(10, 3): over kMaxTables
}

TEST(TableDesign, DerivedBucketSizeAgreesWithTheBuiltDesign) {
  // for_store sizes buckets before building tables; the built design must agree.
  for (std::uint32_t k = 0; k <= 6; ++k) {
    for (std::uint64_t n : {1'000ull, 1'000'000ull, 100'000'000ull, 10'000'000'000ull}) {
      auto design = TableDesign::for_store(k, n, 0);
      if (!design) continue;
      EXPECT_LE(design->bucket_entries(n), TableDesign::kMaxBucketEntries) << k << " " << n;
      if (design->r > 1) {
        EXPECT_GT(TableDesign::make(k, design->r - 1).bucket_entries(n),
                  TableDesign::kMaxBucketEntries) << k << " " << n;
      }
    }
  }
}

TEST(TableDesign, DesignsOfTooManyTablesAreRefusedAtOnce) {
  // k = 16 would need hundreds of thousands of tables: refused without enumerating them.
  for (std::uint32_t k : {8u, 12u, 16u}) {
    auto design = TableDesign::for_store(k, 100'000'000, 0);
    ASSERT_FALSE(design) << k;
    EXPECT_NE(design.error().find("store.design_k: " + std::to_string(k)), std::string::npos)
        << design.error();
    EXPECT_NE(design.error().find("more than 100"), std::string::npos) << design.error();
  }
  EXPECT_EQ(TableDesign::for_store(5, 100'000'000, 0)->tables(), 21u);
  EXPECT_FALSE(TableDesign::for_store(7, 100'000'000, 0));  // C(10, 3) = 120
}

}  // namespace
}  // namespace neardup
