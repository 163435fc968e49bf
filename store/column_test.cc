// A column (delta over sorted runs) against a brute-force list of its entries, in both run
// formats, across merges and a reopen.
#include "store/column.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "store/column_test_fixture.h"
#include "store/delta.h"
#include "store/test_util.h"

namespace neardup {
namespace {

// Exact keys (prefix 64 bits): a narrow column returns every doc of the key and, from its runs,
// at most the docs whose key shares the top 40 bits; a wide one exactly the key's docs.
void check_exact_keys(RunFormat format) {
  ColumnFixture f;
  Column column("b/0", 64, format, 12, 1000);
  f.create(column);
  std::mt19937_64 rng(1);
  std::vector<Entry> all;
  std::vector<std::uint64_t> keys;
  for (std::uint64_t doc = 1; doc <= 20000; ++doc) {
    // Some keys repeat (shared bands); some share only their top 40 bits.
    std::uint64_t key = rng();
    if (!keys.empty() && doc % 7 == 0) key = keys[rng() % keys.size()];
    if (!keys.empty() && doc % 11 == 0) key = (keys[rng() % keys.size()] & ~0xffffffull) | 5;
    keys.push_back(key);
    const Entry e{key, doc * 1000003 % (std::uint64_t{1} << 40)};  // docs up to 2^40
    all.push_back(e);
    column.add(e);
    column.delta().mark();
    if (column.full()) merge(column, f, doc, doc % 2 == 0 ? 5000 : ~0ull);
  }
  EXPECT_GE(column.state().runs.size(), 2u);
  for (int q = 0; q < 500; ++q) {
    const std::uint64_t key = q % 5 == 4 ? rng() : keys[rng() % keys.size()];
    std::vector<std::uint64_t> exact, top;
    for (const Entry& e : all) {
      if (e.key == key) exact.push_back(e.doc);
      if (e.key >> 24 == key >> 24) top.push_back(e.doc);
    }
    std::sort(exact.begin(), exact.end());
    std::sort(top.begin(), top.end());
    std::vector<std::uint64_t> got = probe(column, f.env, key);
    if (format == RunFormat::kWide) {
      EXPECT_EQ(got, exact);
    } else {
      EXPECT_TRUE(std::includes(got.begin(), got.end(), exact.begin(), exact.end()));
      EXPECT_TRUE(std::includes(top.begin(), top.end(), got.begin(), got.end()));
    }
  }
}

TEST(Column, GallopingFindsWhatLowerBoundFinds) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {0, 1, 2, 3, 7, 64, 1000}) {
    std::vector<Entry> entries(n);
    for (Entry& e : entries) e = {rng() % 50, rng() % 4};
    std::sort(entries.begin(), entries.end());
    const Entry* first = entries.data();
    const Entry* last = first + n;
    for (std::uint64_t key = 0; key <= 50; ++key) {
      for (std::uint64_t doc = 0; doc <= 4; ++doc) {
        const Entry value{key, doc};
        EXPECT_EQ(gallop_lower_bound(first, last, value), std::lower_bound(first, last, value))
            << "n " << n << " key " << key << " doc " << doc;
      }
    }
  }
  // The 128-bit comparison orders as <=> does.
  const Entry a{1, ~0ull}, b{2, 0}, c{2, 1};
  EXPECT_TRUE(a < b && b < c && !(c < b) && !(b < b));
}

TEST(Column, WideRunsAnswerExactKeysExactly) { check_exact_keys(RunFormat::kWide); }
TEST(Column, NarrowRunsAnswerASupersetWithinTheTop40Bits) { check_exact_keys(RunFormat::kNarrow); }

// The merge policy (Column::kWideMergeRatio, Column::kNarrowFanout): seven merges of a full
// delta leave wide runs of 5 and 2 deltas (ratio 2: 1, 2, 3, 3+1, 5, 5+1, 5+2), and narrow runs
// of 4, 1, 1 and 1 (tiers of 4: 1, 1+1, 1+1+1, 4, 4+1, 4+1+1, 4+1+1+1). The reused delta tables
// (recycle) come back empty.
TEST(Column, WideRunsMergeAtRatio2AndNarrowOnesInTiersOf4) {
  for (RunFormat format : {RunFormat::kWide, RunFormat::kNarrow}) {
    ColumnFixture f;
    Column column("b/0", 64, format, 12, 1000);
    f.create(column);
    std::mt19937_64 rng(5);
    std::uint64_t doc = 0;
    for (int m = 0; m < 7; ++m) {
      while (!column.full()) column.add({rng(), ++doc});
      column.delta().mark();
      merge(column, f, doc);
      EXPECT_EQ(column.delta().size(), 0u);
    }
    std::vector<std::uint64_t> sizes;
    for (const auto& run : column.state().runs) sizes.push_back(run.entries);
    if (format == RunFormat::kWide) {
      EXPECT_EQ(sizes, (std::vector<std::uint64_t>{5000, 2000}));
    } else {
      EXPECT_EQ(sizes, (std::vector<std::uint64_t>{4000, 1000, 1000, 1000}));
    }
  }
}

// Narrow runs stop growing at 16 deltas (the next tier, 64, would pass kNarrowRunDeltas): 64
// merges leave four runs of 16 deltas; a merge that reclaims dropped documents is not held to
// the limit, and the 64th then gathers every tier into one run.
TEST(Column, NarrowRunsStopGrowingAtTheirLimitUnlessAMergeReclaims) {
  for (bool reclaim : {false, true}) {
    ColumnFixture f;
    Column column("b/0", 64, RunFormat::kNarrow, 8, 100);
    f.create(column);
    std::mt19937_64 rng(7);
    std::uint64_t doc = 0;
    const std::uint64_t deltas = 64;
    for (std::uint64_t m = 0; m < deltas; ++m) {
      while (!column.full()) column.add({rng(), ++doc});
      column.delta().mark();
      merge(column, f, doc, ~0ull, reclaim && m + 1 == deltas);
    }
    std::vector<std::uint64_t> sizes;
    for (const auto& run : column.state().runs) sizes.push_back(run.entries);
    if (reclaim) {
      EXPECT_EQ(sizes, (std::vector<std::uint64_t>{deltas * 100}));
    } else {
      EXPECT_EQ(sizes, (std::vector<std::uint64_t>(4, 16 * 100)));
    }
  }
}

// The union filter of a narrow column (Column::build_union), driven as the index drives it: each
// batch its slice of the union's build, then the running merge's. Builds start as runs are left
// out and run while merges do (a merge's inputs not read yet are read again as the merged run);
// at the end a union covers every run, and probes through it return every entry of the key, for
// keys stored in runs and keys stored nowhere, as they do once the column is opened again (the
// union built anew). The union is outgrown as the column grows, so several builds run.
TEST(Column, TheUnionFilterCoversEveryRunAndProbesStayExact) {
  ColumnFixture f;
  std::mt19937_64 rng(8);
  std::vector<Entry> all;
  auto check = [&](Column& column) {
    ASSERT_GE(column.state().runs.size(), 3u);
    // Deltas a little over their capacity: runs settle at 16 of them (two would pass 32).
    int full = 0;
    for (std::size_t i = 0; i < column.state().runs.size(); ++i) {
      EXPECT_TRUE(column.covered(i)) << i;
      const std::uint64_t entries = column.state().runs[i].entries;
      EXPECT_LE(entries, 16 * (5000 + 2)) << i;
      full += entries > 16 * 5000;
    }
    EXPECT_EQ(full, 4);
    for (int q = 0; q < 600; ++q) {
      const std::uint64_t key = q % 2 == 0 ? all[rng() % all.size()].key : rng();
      std::vector<std::uint64_t> expected;
      for (const Entry& e : all) {
        if (e.key == key) expected.push_back(e.doc);
      }
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(probe(column, f.env, key), expected);
    }
  };
  {
    Column column("b/0", 64, RunFormat::kNarrow, 10, 5000);
    f.create(column);
    int batches_building_while_merging = 0, builds = 0;
    auto batch = [&](std::uint64_t union_budget) {
      auto txn = lmdb::Txn::begin(f.env, 0);
      ASSERT_TRUE(column.open_directories(*txn, 0));
      // A narrow merge fills its new run's filter while its inputs keep theirs.
      EXPECT_EQ(column.merge_filter_memory() > 0, column.merging());
      const bool building = column.building_union();
      column.build_union(union_budget);
      builds += !building && column.building_union();
      if (column.merging()) {
        batches_building_while_merging += column.building_union();
        auto written = column.merge_slice(*txn, f.meta, 20000);
        ASSERT_TRUE(written.has_value()) << written.error().message;
        ASSERT_TRUE(txn->commit());
        column.recycle(column.adopt(std::move(*written)));
      } else {
        ASSERT_TRUE(txn->commit());
      }
    };
    // 70 deltas of 5000 entries and up to two more (three a document, as a page adds its
    // bands).
    for (std::uint64_t doc = 1; doc <= 70 * 5000 / 3; ++doc) {
      for (int band = 0; band < 3; ++band) {
        const Entry e{rng(), doc};
        all.push_back(e);
        column.add(e);
      }
      if (column.full()) {
        column.delta().mark();
        column.begin_merge(doc);
      }
      if (doc % 333 == 0) batch(1);  // a record a batch
    }
    while (column.merging() || column.building_union()) batch(1);
    EXPECT_GT(batches_building_while_merging, 0);
    EXPECT_GE(builds, 3);
    check(column);
  }
  Column column("b/0", 64, RunFormat::kNarrow, 10, 5000);
  auto txn = lmdb::Txn::begin(f.env, 0);
  ASSERT_TRUE(column.load(*txn, f.meta, false, 0));
  ASSERT_TRUE(txn->commit());
  for (const Entry& e : all) {
    if (e.doc > column.watermark()) column.add(e);
  }
  check(column);
}

// A busy column keeps the merged delta's table for the next delta; once it merges a partial
// delta (an idle column's), it holds only a small new one.
TEST(Column, AFullDeltasTableIsReusedAndFreedWhenTheColumnGoesIdle) {
  ColumnFixture f;
  Column column("t/0/0", 16, RunFormat::kWide, 12, 4096);
  f.create(column);
  std::mt19937_64 rng(6);
  std::uint64_t doc = 0;
  auto fill = [&](std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) column.add({rng(), ++doc});
    column.delta().mark();
  };
  fill(4096);
  const std::size_t one_table = column.delta().memory();
  const std::size_t buckets = column.delta().buckets();
  merge(column, f, doc);
  EXPECT_GE(column.memory(), one_table);  // a new, empty delta and the kept table
  fill(4096);
  column.begin_merge(doc);
  EXPECT_EQ(column.delta().size(), 0u);
  EXPECT_EQ(column.delta().buckets(), buckets);  // the kept table, at its size (a new one: 256)
  while (column.merging()) slice(column, f, ~0ull);
  fill(100);
  merge(column, f, doc);  // an idle column's partial delta
  EXPECT_LT(column.memory() * 4, one_table);
  ASSERT_EQ(column.state().runs.size(), 2u);
  EXPECT_EQ(column.state().runs[0].entries, 8192u);
  EXPECT_EQ(column.state().runs[1].entries, 100u);
}

// At open (a new Column, loaded, its delta rebuilt by adding): a column with runs whose delta
// holds a sixteenth of its capacity or more gets its full-size tables at once, with its entries
// kept, so that filling it never grows it; one with fewer, or without runs, keeps a small table.
TEST(Column, ABusyColumnsTablesAreFullSizeAtOpenAndAnIdleOnesStaySmall) {
  ColumnFixture f;
  std::mt19937_64 rng(9);
  std::uint64_t doc = 0;
  std::size_t full_buckets = 0;
  {
    Column column("t/0/0", 16, RunFormat::kWide, 12, 4096);
    f.create(column);
    for (int i = 0; i < 4096; ++i) column.add({rng(), ++doc});
    column.delta().mark();
    full_buckets = column.delta().buckets();
    merge(column, f, doc);
  }
  auto reopened = [&](std::uint64_t pending) {
    auto column = std::make_unique<Column>("t/0/0", 16, RunFormat::kWide, 12, 4096);
    auto txn = lmdb::Txn::begin(f.env, 0);
    EXPECT_TRUE(column->load(*txn, f.meta, false, 0));
    EXPECT_TRUE(txn->commit());
    std::uint64_t next = doc;
    for (std::uint64_t i = 0; i < pending; ++i) column->add({rng(), ++next});
    column->delta().mark();
    column->presize_if_busy();
    return column;
  };
  auto busy = reopened(4096 / Column::kBusyShare);
  EXPECT_EQ(busy->delta().buckets(), full_buckets);
  EXPECT_EQ(busy->delta().size(), 4096 / Column::kBusyShare);
  EXPECT_GE(busy->memory(), 2 * busy->delta().memory());  // the next merge's table too
  for (std::uint64_t i = 0; i < 4096 - 4096 / Column::kBusyShare; ++i) busy->add({rng(), 1 << 20});
  busy->delta().mark();
  EXPECT_EQ(busy->delta().buckets(), full_buckets);  // filled without growing
  auto idle = reopened(4096 / Column::kBusyShare - 1);
  EXPECT_FALSE(idle->busy());
  EXPECT_LT(idle->delta().buckets(), full_buckets);
  EXPECT_EQ(idle->delta().size(), 4096 / Column::kBusyShare - 1);
  // Beside a busy column (a sibling that merged just before the store closed), a small delta is
  // made at its full size too.
  auto beside = reopened(1);
  beside->presize_if_busy(true);
  EXPECT_EQ(beside->delta().buckets(), full_buckets);
  EXPECT_GE(beside->memory(), 2 * beside->delta().memory());
}

TEST(Column, PrefixRangesAcrossDeltaAndRunsAndAReopen) {
  ColumnFixture f;
  std::mt19937_64 rng(2);
  std::vector<Entry> all;
  {
    Column column("t/0/0", 16, RunFormat::kWide, 12, 4096);
    auto txn = lmdb::Txn::begin(f.env, 0);
    ASSERT_TRUE(column.load(*txn, f.meta, true, 0));
    ASSERT_TRUE(txn->commit());
    for (std::uint64_t doc = 1; doc <= 30000; ++doc) {
      const Entry e{rng(), doc};
      all.push_back(e);
      column.add(e);
      if (column.full()) merge(column, f, doc);
    }
    // Seven merges of 4096 at kWideMergeRatio: runs of five and two deltas.
    EXPECT_EQ(column.state().runs.size(), 2u);
    EXPECT_GT(column.delta().size(), 0u);
  }
  // Reopened: the runs come back from meta; the delta would be rebuilt by the index.
  Column column("t/0/0", 16, RunFormat::kWide, 12, 4096);
  auto txn = lmdb::Txn::begin(f.env, 0);
  ASSERT_TRUE(column.load(*txn, f.meta, false, 0));
  ASSERT_TRUE(txn->commit());
  const std::uint64_t watermark = column.watermark();
  for (const Entry& e : all) {
    if (e.doc > watermark) column.add(e);
  }
  for (int q = 0; q < 300; ++q) {
    const std::uint64_t key = all[rng() % all.size()].key;
    std::vector<std::uint64_t> expected;
    for (const Entry& e : all) {
      if (e.key >> 48 == key >> 48) expected.push_back(e.doc);
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(probe(column, f.env, key), expected);
  }
}

TEST(Column, ProbesDuringAMergeInSlicesSeeEveryEntryOnce) {
  ColumnFixture f;
  Column column("t/0/1", 16, RunFormat::kWide, 12, 20000);
  f.create(column);
  std::mt19937_64 rng(3);
  std::vector<Entry> all;
  auto add = [&](std::uint64_t doc) {
    const Entry e{rng(), doc};
    all.push_back(e);
    column.add(e);
  };
  auto check = [&] {
    for (int q = 0; q < 50; ++q) {
      const std::uint64_t key = all[rng() % all.size()].key;
      std::vector<std::uint64_t> expected;
      for (const Entry& e : all) {
        if (e.key >> 48 == key >> 48) expected.push_back(e.doc);
      }
      std::sort(expected.begin(), expected.end());
      ASSERT_EQ(probe(column, f.env, key), expected);
    }
  };
  std::uint64_t doc = 0;
  while (doc < 20000) add(++doc);
  merge(column, f, doc);  // one run of 20000
  while (doc < 40000) add(++doc);
  column.delta().mark();
  column.begin_merge(doc);  // 20000 frozen + the run of 20000
  EXPECT_EQ(column.delta().size(), 0u);
  EXPECT_EQ(column.merge_remaining(), 40000u);
  int slices = 0;
  while (column.merging()) {
    slice(column, f, 4096);
    ++slices;
    for (int i = 0; i < 100; ++i) add(++doc);  // the next delta fills meanwhile
    column.delta().mark();
    check();
  }
  EXPECT_GE(slices, 40000 / entries_per_record(RunFormat::kWide));  // a record or more a slice
  ASSERT_EQ(column.state().runs.size(), 1u);
  EXPECT_EQ(column.state().runs[0].entries, 40000u);
  EXPECT_EQ(column.watermark(), 40000u);
  check();
}

TEST(Column, AnAbortedSliceChangesNothingAndAnInterruptedMergeIsDroppedAtOpen) {
  ColumnFixture f;
  Column column("ids", 64, RunFormat::kWide, 12, 30000);
  f.create(column);
  for (std::uint64_t doc = 1; doc <= 30000; ++doc) column.add({doc * 77, doc});
  column.delta().mark();
  column.begin_merge(30000);
  {
    auto txn = lmdb::Txn::begin(f.env, 0);
    ASSERT_TRUE(column.open_directories(*txn, 0));
    auto written = column.merge_slice(*txn, f.meta, ~0ull);
    ASSERT_TRUE(written.has_value() && written->done);
    txn->abort();  // never adopted
  }
  EXPECT_TRUE(column.merging());
  EXPECT_EQ(column.merge_remaining(), 30000u);
  EXPECT_EQ(probe(column, f.env, 77 * 5), std::vector<std::uint64_t>{5});
  slice(column, f, 4095);  // one committed slice: a half-written run 1 on disk
  EXPECT_TRUE(column.merging());
  // The process stops here. Reopened, the state is the old one and run 1 is gone.
  Column reopened("ids", 64, RunFormat::kWide, 12, 30000);
  {
    auto txn = lmdb::Txn::begin(f.env, 0);
    ASSERT_TRUE(reopened.load(*txn, f.meta, false, 0));
    ASSERT_TRUE(txn->commit());
  }
  EXPECT_TRUE(reopened.state().runs.empty());
  EXPECT_EQ(reopened.watermark(), 0u);
  {
    auto txn = lmdb::Txn::begin(f.env, MDB_RDONLY);
    EXPECT_EQ(lmdb::Dbi::open(*txn, "ids/1", 0).error().code, MDB_NOTFOUND);
  }
  for (std::uint64_t doc = 1; doc <= 30000; ++doc) reopened.add({doc * 77, doc});
  reopened.delta().mark();
  merge(reopened, f, 30000);
  EXPECT_EQ(reopened.state().runs.size(), 1u);
  EXPECT_EQ(probe(reopened, f.env, 77 * 5), std::vector<std::uint64_t>{5});
}

}  // namespace
}  // namespace neardup
