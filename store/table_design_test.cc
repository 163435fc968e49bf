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
  // k = 3: r = 1 (4 tables, 16-bit prefixes) up to 16.7M pages, then r = 2 (10 tables).
  EXPECT_EQ(TableDesign::for_store(3, 10'000'000, 0)->r, 1u);
  EXPECT_EQ(TableDesign::for_store(3, 100'000'000, 0)->r, 2u);
  EXPECT_EQ(TableDesign::for_store(3, 100'000'000, 0)->tables(), 10u);
  EXPECT_EQ(TableDesign::for_store(3, 100'000'000'000, 0)->r, 3u);
  EXPECT_EQ(TableDesign::for_store(2, 100'000'000, 0)->tables(), 3u);
  EXPECT_LE(TableDesign::for_store(4, 1'000'000'000, 0)->bucket_entries(1'000'000'000), 256);
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
  EXPECT_EQ(TableDesign::for_store(5, 100'000'000, 0)->tables(), 56u);
}

}  // namespace
}  // namespace neardup
