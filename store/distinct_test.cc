#include "store/distinct.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace neardup {
namespace {

TEST(SortDistinct, EqualsASetOfTheValues) {
  std::mt19937_64 random(3);
  std::vector<std::uint64_t> table;
  for (std::size_t size : {0, 1, 2, 255, 256, 257, 1000, 50000}) {
    for (std::uint64_t range :
         {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{3000}, std::uint64_t{1} << 40}) {
      std::vector<std::uint64_t> values(size);
      for (std::uint64_t& v : values) v = random() % range;
      const std::set<std::uint64_t> expected(values.begin(), values.end());
      sort_distinct(values, table);
      EXPECT_EQ(values, std::vector<std::uint64_t>(expected.begin(), expected.end()))
          << size << " values below " << range;
    }
  }
}

// Around kFewDistinct distinct values, repeated per band in a varying order: the values first
// kept by comparison and those seen after the count passes it end up sorted and distinct alike.
TEST(SortDistinct, FewDistinctValuesRepeatedPerBand) {
  std::mt19937_64 random(9);
  std::vector<std::uint64_t> table;
  for (std::size_t distinct = 0; distinct <= 2 * kFewDistinct + 1; ++distinct) {
    for (std::size_t bands : {1u, 3u, 42u, 300u}) {
      std::vector<std::uint64_t> docs(distinct);
      for (std::uint64_t& d : docs) d = random() % 100000;
      std::vector<std::uint64_t> values;
      for (std::size_t b = 0; b < bands; ++b) {
        std::shuffle(docs.begin(), docs.end(), random);
        values.insert(values.end(), docs.begin(), docs.begin() + random() % (docs.size() + 1));
      }
      const std::set<std::uint64_t> expected(values.begin(), values.end());
      sort_distinct(values, table);
      EXPECT_EQ(values, std::vector<std::uint64_t>(expected.begin(), expected.end()))
          << distinct << " distinct, " << bands << " bands";
    }
  }
}

TEST(SortDistinct, ConsecutiveDocumentsRepeatedPerBand) {
  // What a page with 3,000 exact copies in the index finds: every copy once per band.
  std::vector<std::uint64_t> values, table;
  for (int band = 0; band < 16; ++band) {
    for (std::uint64_t doc = 1000; doc < 4000; ++doc) values.push_back(doc);
  }
  sort_distinct(values, table);
  ASSERT_EQ(values.size(), 3000u);
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], 1000 + i);
}

}  // namespace
}  // namespace neardup
