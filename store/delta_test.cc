// The in-memory part of a column against brute force: buckets that overflow, undo, growth and
// sorting.
#include "store/delta.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace neardup {
namespace {

// Copies of a page add equal keys, more than a bucket has slots: the overflow is scanned with
// the bucket, an aborted batch's entries are undone from the overflow first, and every entry
// is visited once.
TEST(Delta, OverflowingBucketsAreScannedAndUndone) {
  Delta delta(20, 1 << 21);  // four slots a bucket
  std::mt19937_64 rng(5);
  std::vector<Entry> kept;
  const std::uint64_t copied = 0x1234567890abcdefull;
  for (std::uint64_t doc = 1; doc <= 2000; ++doc) {
    const Entry e{doc % 3 == 0 ? copied + doc % 2 : rng(), doc};
    delta.add(e);
    kept.push_back(e);
  }
  delta.mark();
  for (std::uint64_t doc = 2001; doc <= 2100; ++doc) delta.add({copied, doc});
  delta.undo();
  auto scanned = [&](std::uint64_t lo, std::uint64_t hi) {
    std::vector<Entry> found;
    delta.scan(lo, hi, [&](const Entry& e) { found.push_back(e); });
    std::sort(found.begin(), found.end());
    return found;
  };
  std::vector<Entry> expected;
  for (const Entry& e : kept) {
    if (e.key >= copied && e.key <= copied + 1) expected.push_back(e);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(scanned(copied, copied + 1), expected);
  EXPECT_EQ(delta.size(), kept.size());
  std::vector<Entry> visited;
  delta.for_each([&](const Entry& e) { visited.push_back(e); });
  std::sort(visited.begin(), visited.end());
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(visited, kept);
  EXPECT_EQ(delta.sorted(), kept);
  // Bucket by bucket (what a merge asks the union filter's lines for), the spilled entries of a
  // full bucket with the rest: each bucket gives what sorted_bucket() gives.
  std::vector<Entry> bucket, sorted_bucket;
  std::size_t largest = 0;
  for (std::size_t b = 0; b <= delta.buckets(); ++b) {  // and one past the last: none
    bucket.clear();
    delta.for_each_in_bucket(b, [&](const Entry& e) { bucket.push_back(e); });
    largest = std::max(largest, bucket.size());
    std::sort(bucket.begin(), bucket.end());
    if (b < delta.buckets()) {
      delta.sorted_bucket(b, sorted_bucket);
      ASSERT_EQ(bucket, sorted_bucket) << b;
    } else {
      EXPECT_TRUE(bucket.empty());
    }
  }
  EXPECT_GT(largest, 4u);  // the copied keys' bucket spilled
  for (std::uint64_t doc = 2101; doc <= 2110; ++doc) delta.add({copied, doc});
  expected.clear();
  for (const Entry& e : delta.sorted()) {
    if (e.key == copied) expected.push_back(e);
  }
  EXPECT_EQ(scanned(copied, copied), expected);
  EXPECT_EQ(expected.back().doc, 2110u);
}

// reserve(n) makes the table mark() would grow to once n entries are added (not larger), and
// n entries then fill it without growing it: as the grown table holds them.
TEST(Delta, ReservedForNEntriesItHoldsThemAsGrowingWouldHave) {
  std::mt19937_64 rng(31);
  for (std::size_t n : {0, 100, 5000, 60000}) {
    std::vector<Entry> entries;
    for (std::uint64_t doc = 1; doc <= n; ++doc) entries.push_back({rng(), doc});
    Delta grown(20, 1 << 21);
    for (const Entry& e : entries) grown.add(e);
    grown.mark();
    Delta reserved(20, 1 << 21);
    reserved.reserve(n);
    const std::size_t buckets = reserved.buckets();
    for (const Entry& e : entries) reserved.add(e);
    reserved.mark();
    EXPECT_EQ(buckets, grown.buckets()) << n;
    EXPECT_EQ(reserved.buckets(), buckets) << n;
    EXPECT_EQ(reserved.memory(), grown.memory()) << n;
    EXPECT_EQ(reserved.sorted(), grown.sorted()) << n;
  }
}

// A batch far larger than any a writer makes (a rebuild at open adds millions of entries as one)
// gives its undo list back when it ends, and the delta still undoes the next batch; a batch of
// a writer's size keeps its list for the next one.
TEST(Delta, ALargeBatchsUndoListIsGivenBackWhenItEnds) {
  std::mt19937_64 rng(37);
  constexpr std::uint64_t kEntries = 600'000;  // an undo list of 4.8 MB or more
  Delta delta(20, 1 << 21);
  delta.reserve(kEntries);
  for (std::uint64_t doc = 1; doc <= kEntries; ++doc) delta.add({rng(), doc});
  EXPECT_GE(delta.undo_memory(), kEntries * sizeof(std::uint64_t));
  delta.mark();
  EXPECT_EQ(delta.undo_memory(), 0u);
  EXPECT_EQ(delta.size(), kEntries);
  delta.add({rng(), kEntries + 1});
  delta.undo();
  EXPECT_EQ(delta.size(), kEntries);
  for (std::uint64_t doc = 1; doc <= 21'000; ++doc) delta.add({rng(), kEntries + doc});
  delta.mark();
  EXPECT_GE(delta.undo_memory(), 21'000 * sizeof(std::uint64_t));
}

// Keys that are document numbers (the index's `members` column) all fall in a delta's first
// bucket, mostly ascending: that bucket, and buckets in any order, sort exactly as std::sort
// would (equal entries included).
TEST(Delta, ALargeBucketSortsAsAWholeSortWould) {
  std::mt19937_64 rng(21);
  for (int share_out_of_order : {0, 1, 4, 10}) {  // tenths of the entries not in order
    Delta delta(20, 1 << 16);
    std::vector<Entry> all;
    for (std::uint64_t doc = 1; doc <= 50000; ++doc) {
      const bool old_root = static_cast<int>(rng() % 10) < share_out_of_order;
      const std::uint64_t key = old_root ? rng() % doc : doc;
      all.push_back({key, doc % 7 == 0 ? doc - 1 : doc});  // some equal (key, doc) pairs too
      if (doc % 997 == 0) all.push_back(all.back());
    }
    for (const Entry& e : all) delta.add(e);
    delta.mark();
    std::sort(all.begin(), all.end());
    std::vector<Entry> bucket;
    delta.sorted_bucket(0, bucket);
    EXPECT_EQ(bucket, all) << share_out_of_order;
    EXPECT_EQ(delta.sorted(), all) << share_out_of_order;
  }
}

}  // namespace
}  // namespace neardup
