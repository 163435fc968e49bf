#include "pipeline/features/shingle_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace neardup::features_internal {
namespace {

// Each run of equal hashes summed in the order it stands, as features.cc counts them.
std::vector<std::pair<std::uint64_t, double>> group_sums(const std::vector<WeightedHash>& sorted) {
  std::vector<std::pair<std::uint64_t, double>> sums;
  for (std::size_t i = 0; i < sorted.size();) {
    double total = sorted[i].share;
    std::size_t j = i + 1;
    for (; j < sorted.size() && sorted[j].hash == sorted[i].hash; ++j) total += sorted[j].share;
    sums.emplace_back(sorted[i].hash, total);
    i = j;
  }
  return sums;
}

// Shingles as a page gives them: `distinct` hashes drawn with repeats (`repeats` of them
// frequent, as "of the" is), each with the share of a paragraph of 1 to 30 tokens.
std::vector<WeightedHash> random_shingles(std::mt19937_64& random, std::size_t count,
                                          std::size_t distinct, std::size_t repeats) {
  std::vector<std::uint64_t> hashes(distinct);
  for (std::uint64_t& h : hashes) h = random();
  std::vector<WeightedHash> shingles;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t pick =
        random() % 4 == 0 ? random() % std::min(repeats, distinct) : random() % distinct;
    const double length = static_cast<double>(1 + random() % 30);
    shingles.push_back({hashes[pick], std::min(1.0, length / 24)});
  }
  return shingles;
}

TEST(ShingleOrder, EveryGroupSumsAsAfterStdSort) {
  std::mt19937_64 random(7);
  ShingleOrderScratch scratch;
  for (int round = 0; round < 3000; ++round) {
    const std::size_t count = random() % 2000;
    std::vector<WeightedHash> shingles =
        random_shingles(random, count, 1 + random() % (count + 1), 1 + random() % 8);
    std::vector<WeightedHash> expected = shingles;
    order_shingles_by_std_sort(expected);
    order_shingles(shingles, scratch);
    ASSERT_EQ(shingles.size(), expected.size());
    const auto sums = group_sums(shingles), expected_sums = group_sums(expected);
    ASSERT_EQ(sums.size(), expected_sums.size()) << "round " << round;
    for (std::size_t i = 0; i < sums.size(); ++i) {
      ASSERT_EQ(sums[i].first, expected_sums[i].first) << "round " << round;
      // Bit for bit: a share summed in another order may round differently.
      ASSERT_EQ(sums[i].second, expected_sums[i].second) << "round " << round;
    }
  }
}

TEST(ShingleOrder, SharesWhoseOrderChangesTheSumKeepStdSortsOrder) {
  // 0.1 + 0.2 + 0.3 depends on the order: (0.1 + 0.2) + 0.3 != 0.1 + (0.2 + 0.3).
  ASSERT_NE((0.1 + 0.2) + 0.3, (0.3 + 0.2) + 0.1);
  std::vector<WeightedHash> shingles;
  for (std::uint64_t filler = 0; filler < 40; ++filler) {
    shingles.push_back({filler * 0x9E3779B97F4A7C15ull, 1.0});
    if (filler % 10 == 0) shingles.push_back({42, 0.1 * static_cast<double>(filler / 10 + 1)});
  }
  std::vector<WeightedHash> expected = shingles;
  order_shingles_by_std_sort(expected);
  ShingleOrderScratch scratch;
  order_shingles(shingles, scratch);
  for (std::size_t i = 0; i < shingles.size(); ++i) {
    EXPECT_EQ(shingles[i].hash, expected[i].hash);
    EXPECT_EQ(shingles[i].share, expected[i].share) << i;
  }
}

TEST(ShingleOrder, HashesComeOutAscending) {
  std::mt19937_64 random(11);
  ShingleOrderScratch scratch;
  for (std::size_t count : {0, 1, 2, 3, 17, 1000, 5000}) {
    std::vector<WeightedHash> shingles = random_shingles(random, count, count + 1, 3);
    order_shingles(shingles, scratch);
    EXPECT_EQ(shingles.size(), count);
    EXPECT_TRUE(std::is_sorted(
        shingles.begin(), shingles.end(),
        [](const WeightedHash& a, const WeightedHash& b) { return a.hash < b.hash; }));
  }
}

}  // namespace
}  // namespace neardup::features_internal
