// A table column's prefix filters (Column::filter_prefixes): what a probe returns is what a
// column without them returns, across merges and a reopen, and a probe of a range that no run
// holds reads no run.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "store/column.h"
#include "store/column_test_fixture.h"

namespace neardup {
namespace {

constexpr std::uint32_t kPrefixBits = 16;

// The run probes a key starts (each reads a record of its run).
std::size_t runs_read(Column& column, const lmdb::Env& env, std::uint64_t key) {
  auto txn = lmdb::Txn::begin(env, MDB_RDONLY);
  EXPECT_TRUE(column.open_directories(*txn, 0));
  std::vector<RunProbe> probes;
  column.start(key, probes, [](const Entry&) {});
  return probes.size();
}

std::vector<std::uint64_t> brute_force(const std::vector<Entry>& all, std::uint64_t key) {
  std::vector<std::uint64_t> docs;
  for (const Entry& e : all) {
    if (e.key >> (64 - kPrefixBits) == key >> (64 - kPrefixBits)) docs.push_back(e.doc);
  }
  std::sort(docs.begin(), docs.end());
  return docs;
}

// Fills a filtered table column and one without filters with the same entries, merging as
// they fill: `entries` random keys over 2^16 prefixes.
struct TwoColumns {
  ColumnFixture filtered_fixture, plain_fixture;
  Column filtered{"t/0/0", kPrefixBits, RunFormat::kWide, 12, 4096};
  Column plain{"t/0/0", kPrefixBits, RunFormat::kWide, 12, 4096};
  std::vector<Entry> all;

  explicit TwoColumns(std::uint64_t entries) {
    filtered.filter_prefixes(8, 0);
    filtered_fixture.create(filtered);
    plain_fixture.create(plain);
    std::mt19937_64 rng(3);
    for (std::uint64_t doc = 1; doc <= entries; ++doc) {
      const Entry e{rng(), doc};
      all.push_back(e);
      for (auto [column, fixture] :
           {std::pair{&filtered, &filtered_fixture}, std::pair{&plain, &plain_fixture}}) {
        column->add(e);
        if (column->full()) merge(*column, *fixture, doc, doc % 2 == 0 ? 3000 : ~0ull);
      }
    }
  }
};

TEST(PrefixFilters, ProbesFindWhatAColumnWithoutThemFindsAndSkipEmptyRanges) {
  TwoColumns c(4096 * 7 + 100);  // seven merges: runs of five and two deltas, and a delta
  ASSERT_GE(c.filtered.state().runs.size(), 2u);
  const std::size_t runs = c.filtered.state().runs.size();
  std::mt19937_64 rng(4);
  std::size_t absent = 0, absent_reads = 0;
  for (int q = 0; q < 2000; ++q) {
    // Half the keys share a stored key's prefix, half are random (mostly an empty range).
    const std::uint64_t key =
        q % 2 == 0 ? c.all[rng() % c.all.size()].key ^ (rng() >> kPrefixBits) : rng();
    const std::vector<std::uint64_t> expected = brute_force(c.all, key);
    EXPECT_EQ(probe(c.filtered, c.filtered_fixture.env, key), expected);
    EXPECT_EQ(probe(c.plain, c.plain_fixture.env, key), expected);
    EXPECT_EQ(runs_read(c.plain, c.plain_fixture.env, key), runs);
    if (expected.empty()) {
      ++absent;
      absent_reads += runs_read(c.filtered, c.filtered_fixture.env, key);
    }
  }
  ASSERT_GT(absent, 500u);
  // 8 bits an entry: a few percent of the empty ranges get through a run's filter.
  EXPECT_LT(absent_reads, absent * runs / 10) << absent_reads << " of " << absent * runs;
  EXPECT_GT(c.filtered.memory(), c.plain.memory());
}

TEST(PrefixFilters, AreRebuiltAtOpenFromTheRuns) {
  TwoColumns c(4096 * 3);
  Column reopened("t/0/0", kPrefixBits, RunFormat::kWide, 12, 4096);
  reopened.filter_prefixes(8, 0);
  {
    auto txn = lmdb::Txn::begin(c.filtered_fixture.env, 0);
    ASSERT_TRUE(reopened.load(*txn, c.filtered_fixture.meta, false, 0));
    ASSERT_TRUE(txn->commit());
  }
  for (const Entry& e : c.all) {
    if (e.doc > reopened.watermark()) reopened.add(e);
  }
  std::mt19937_64 rng(5);
  std::size_t reads = 0;
  for (int q = 0; q < 1000; ++q) {
    const std::uint64_t key = q % 2 == 0 ? c.all[rng() % c.all.size()].key : rng();
    const std::vector<std::uint64_t> expected = brute_force(c.all, key);
    EXPECT_EQ(probe(reopened, c.filtered_fixture.env, key), expected);
    reads += runs_read(reopened, c.filtered_fixture.env, key);
  }
  EXPECT_LT(reads, 1000u * reopened.state().runs.size() * 3 / 4);  // the filters were built
}

// The runs read by 100 probes of random keys, and how many of those keys share a prefix with an
// entry, in a column of one run of 4096 entries whose keys keep `prefix_bits` and whose Bloom
// filters are made for runs of `min_entries` or more.
struct OneRun {
  std::size_t reads = 0, taken = 0;
};
OneRun reads_of_one_run(std::uint32_t prefix_bits, std::uint64_t min_entries) {
  ColumnFixture f;
  Column column("t/0/0", prefix_bits, RunFormat::kWide, 12, 4096);
  column.filter_prefixes(8, min_entries);
  f.create(column);
  std::mt19937_64 rng(6);
  std::set<std::uint64_t> prefixes;
  for (std::uint64_t doc = 1; doc <= 4096; ++doc) {
    const std::uint64_t key = rng();
    column.add({key, doc});
    prefixes.insert(key >> (64 - prefix_bits));
  }
  merge(column, f, 4096);
  EXPECT_EQ(column.state().runs.size(), 1u);
  OneRun one;
  for (int q = 0; q < 100; ++q) {
    const std::uint64_t key = rng();
    one.reads += runs_read(column, f.env, key);
    one.taken += prefixes.count(key >> (64 - prefix_bits));
  }
  return one;
}

// A run with more entries than its prefixes gets no filter: every probe reads it.
TEST(PrefixFilters, RunsOverTheirPrefixesAreReadByEveryProbe) {
  EXPECT_EQ(reads_of_one_run(11, 0).reads, 100u);  // 2048 prefixes
}

// A run whose bitmap of prefixes is no larger than its Bloom filter (4096 entries at 8 bits:
// 4 KiB, the bitmap of 2^15 prefixes) gets the bitmap, whatever the least entries for a Bloom
// filter: a probe reads the run exactly when its prefix is taken.
TEST(PrefixFilters, LargeRunsGetAnExactBitmap) {
  for (std::uint32_t bits : {12u, 13u, 15u}) {
    const OneRun one = reads_of_one_run(bits, 1u << 20);
    EXPECT_EQ(one.reads, one.taken) << bits;
    EXPECT_GT(one.reads, 0u) << bits;
    EXPECT_LT(one.reads, 100u) << bits;
  }
}

// Below that, a Bloom filter from the least entries it is made for.
TEST(PrefixFilters, SmallerRunsGetABloomFilterFromTheLeastEntries) {
  EXPECT_EQ(reads_of_one_run(16, 4097).reads, 100u);  // a Bloom filter from 4097 entries
  EXPECT_EQ(reads_of_one_run(20, 4097).reads, 100u);
  const OneRun bloom = reads_of_one_run(20, 4096);  // from 4096: 2^20 prefixes, few taken
  EXPECT_LT(bloom.reads, 10u);
  EXPECT_GE(bloom.reads, bloom.taken);
}

}  // namespace
}  // namespace neardup
