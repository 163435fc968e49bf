#include "store/run_filter.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace neardup {
namespace {

// A bitmap answers exactly: a key may be present when and only when a key of its prefix was
// added, whatever the key's other bits.
TEST(RunFilter, ABitmapAnswersExactlyByPrefix) {
  constexpr std::uint32_t kBits = 20;
  auto filter = RunFilter::bitmap(kBits);
  EXPECT_TRUE(filter->exact());
  EXPECT_EQ(filter->memory(), (std::size_t{1} << kBits) / 8);
  EXPECT_EQ(RunFilter::bitmap_bytes(kBits), filter->memory());
  std::mt19937_64 rng(1);
  std::set<std::uint64_t> prefixes;
  for (int i = 0; i < 300'000; ++i) {
    const std::uint64_t key = rng();
    filter->add(key);
    prefixes.insert(key >> (64 - kBits));
  }
  std::size_t present = 0;
  for (int i = 0; i < 200'000; ++i) {
    const std::uint64_t key = rng();
    const bool taken = prefixes.count(key >> (64 - kBits)) != 0;
    ASSERT_EQ(filter->may_contain(key), taken) << key;
    // The same prefix with other low bits answers the same.
    ASSERT_EQ(filter->may_contain(key ^ (rng() >> kBits)), taken) << key;
    present += taken;
  }
  // 300,000 keys over 2^20 prefixes take 1 - e^-0.286 = 25 % of them.
  EXPECT_NEAR(static_cast<double>(present) / 200'000, 0.249, 0.01);
}

// The smallest bitmap still holds a word; the widest prefixes and the narrowest both work.
TEST(RunFilter, BitmapsOfFewAndOfManyPrefixes) {
  auto one = RunFilter::bitmap(1);
  EXPECT_FALSE(one->may_contain(0));
  one->add(~std::uint64_t{0});
  EXPECT_TRUE(one->may_contain(std::uint64_t{1} << 63));
  EXPECT_FALSE(one->may_contain(0));
  auto wide = RunFilter::bitmap(26);
  EXPECT_EQ(wide->memory(), std::size_t{8} << 20);
  wide->add(0);
  wide->add(~std::uint64_t{0});
  EXPECT_TRUE(wide->may_contain(0xff));
  EXPECT_TRUE(wide->may_contain(~std::uint64_t{0} - 0xff));
  EXPECT_FALSE(wide->may_contain(std::uint64_t{1} << 38));
}

// A Bloom filter holds every key added and lets few absent ones through.
TEST(RunFilter, ABloomFilterHoldsEveryKeyAdded) {
  auto filter = RunFilter::bloom(100'000);
  EXPECT_FALSE(filter->exact());
  std::mt19937_64 rng(2);
  std::vector<std::uint64_t> keys(100'000);
  for (auto& key : keys) filter->add(key = rng());
  for (std::uint64_t key : keys) ASSERT_TRUE(filter->may_contain(key));
  int passed = 0;
  for (int i = 0; i < 100'000; ++i) passed += filter->may_contain(rng());
  EXPECT_LT(passed, 3'000);
  EXPECT_EQ(filter->memory(), kHugePage);  // one 2 MiB page at least
}

}  // namespace
}  // namespace neardup
