#include "store/spill_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace neardup {
namespace {

// Random additions to random buckets (few and many distinct, near and far apart, so that
// probe sequences collide and the table grows), each checked against std::map: every bucket's
// list is found with its entries in order, a bucket never added is not found, and for_each
// visits each list once.
TEST(SpillMap, HoldsTheListsAStdMapDoes) {
  std::mt19937_64 rng(11);
  for (std::size_t distinct : {1u, 7u, 100u, 5000u}) {
    SpillMap map;
    std::map<std::size_t, std::vector<Entry>> reference;
    for (int i = 0; i < 20000; ++i) {
      const std::size_t b = rng() % distinct * (i % 2 == 0 ? 1 : 65536);
      const Entry e{rng(), static_cast<std::uint64_t>(i)};
      map[b].push_back(e);
      reference[b].push_back(e);
    }
    for (const auto& [b, list] : reference) {
      const std::vector<Entry>* found = map.find(b);
      ASSERT_NE(found, nullptr) << b;
      EXPECT_EQ(*found, list) << b;
    }
    for (int i = 0; i < 1000; ++i) {
      const std::size_t b = rng();
      EXPECT_EQ(map.find(b) == nullptr, !reference.contains(b)) << b;
    }
    std::map<std::size_t, std::vector<Entry>> visited;
    map.for_each([&](std::size_t b, const std::vector<Entry>& list) {
      EXPECT_TRUE(visited.emplace(b, list).second) << "bucket " << b << " visited twice";
    });
    EXPECT_EQ(visited, reference);
  }
}

TEST(SpillMap, ClearForgetsEveryBucketAndAnEmptiedListStaysFound) {
  SpillMap map;
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.find(0), nullptr);
  map[0].push_back(Entry{1, 2});
  map[3].push_back(Entry{4, 5});
  EXPECT_FALSE(map.empty());
  map.find(3)->pop_back();
  ASSERT_NE(map.find(3), nullptr);
  EXPECT_TRUE(map.find(3)->empty());
  map.clear();
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.find(0), nullptr);
  EXPECT_EQ(map.find(3), nullptr);
  map[3].push_back(Entry{6, 7});
  EXPECT_EQ(*map.find(3), (std::vector<Entry>{{6, 7}}));
}

}  // namespace
}  // namespace neardup
