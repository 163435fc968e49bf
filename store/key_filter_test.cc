#include "store/key_filter.h"

#include <gtest/gtest.h>

#include <random>

namespace neardup {
namespace {

// The share of absent keys a filter holding `n` random keys lets through. `narrow` keys have
// their low 24 bits zero, as a narrow run's stored keys do.
template <typename Filter>
double pass_rate(bool narrow) {
  constexpr std::uint64_t n = 1'000'000;
  Filter filter(n);
  std::mt19937_64 rng(7);
  auto key = [&] { return narrow ? rng() & ~0xffffffull : rng(); };
  std::vector<std::uint64_t> added(n);
  for (auto& k : added) filter.add(k = key());
  for (std::uint64_t k : added) EXPECT_TRUE(filter.may_contain(k)) << k;  // no false negatives
  std::uint64_t passed = 0;
  constexpr int kAbsent = 200'000;
  for (int i = 0; i < kAbsent; ++i) passed += filter.may_contain(key());
  return static_cast<double>(passed) / kAbsent;
}

TEST(KeyFilter, HoldsEveryKeyAddedAndLetsFewAbsentOnesThrough) {
  // Sized in whole 2 MiB pages, so a million keys get more bits than asked: the rates are
  // those of about 16.8 bits a key: well under 1 % get through.
  EXPECT_LT(pass_rate<IdFilter>(false), 0.01);
  EXPECT_LT(pass_rate<BandFilter>(true), 0.01);
}

TEST(KeyFilter, AtItsSizedLoadTheBandDesignLetsAboutOneInFortyThrough) {
  // 8 bits a key, 5 bits set: a Bloom filter's (1 - e^(-5/8))^5 = 2.2 %; blocking costs a
  // little more. 4 million keys fill 2 MiB pages exactly (4 MiB).
  constexpr std::uint64_t n = 4'194'304;
  BandFilter filter(n);
  ASSERT_EQ(filter.memory(), n * BandFilter::kBitsPerKey / 8);
  std::mt19937_64 rng(8);
  for (std::uint64_t i = 0; i < n; ++i) filter.add(rng() & ~0xffffffull);
  std::uint64_t passed = 0;
  constexpr int kAbsent = 400'000;
  for (int i = 0; i < kAbsent; ++i) passed += filter.may_contain(rng() & ~0xffffffull);
  const double rate = static_cast<double>(passed) / kAbsent;
  EXPECT_GT(rate, 0.015);
  EXPECT_LT(rate, 0.04);
}

TEST(KeyFilter, AnEmptyFilterSaysMaybe) {
  BandFilter none;
  EXPECT_TRUE(none.may_contain(42));
}

}  // namespace
}  // namespace neardup
