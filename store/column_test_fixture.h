// For the column tests: an LMDB environment with a meta table, and a column's probes and
// merges as the index makes them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "store/column.h"
#include "store/lmdb.h"
#include "store/test_util.h"

namespace neardup {

struct ColumnFixture {
  testing::TempDir dir;
  lmdb::Env env;
  lmdb::Dbi meta;
  ColumnFixture() {
    env = std::move(*lmdb::Env::open(dir.path(), {.map_size = 1ull << 28}));
    auto txn = lmdb::Txn::begin(env, 0);
    meta = *lmdb::Dbi::open(*txn, "meta", MDB_CREATE);
    EXPECT_TRUE(txn->commit());
  }
  // Loads `column` as a new one (its empty state written to meta).
  void create(Column& column) {
    auto txn = lmdb::Txn::begin(env, 0);
    ASSERT_TRUE(column.load(*txn, meta, true, 0));
    ASSERT_TRUE(txn->commit());
  }
};

// Every doc the column returns for key's range, sorted.
inline std::vector<std::uint64_t> probe(Column& column, const lmdb::Env& env, std::uint64_t key) {
  auto txn = lmdb::Txn::begin(env, MDB_RDONLY);
  EXPECT_TRUE(column.open_directories(*txn, 0));
  std::vector<RunProbe> probes;
  std::vector<std::uint64_t> docs;
  column.start(key, probes, [&](const Entry& e) { docs.push_back(e.doc); });
  for (RunProbe& p : probes) p.finish([&](std::uint64_t, auto doc) { docs.push_back(doc()); });
  std::sort(docs.begin(), docs.end());
  return docs;
}

// One committed slice of the running merge.
inline void slice(Column& column, ColumnFixture& f, std::uint64_t budget) {
  auto txn = lmdb::Txn::begin(f.env, 0);
  ASSERT_TRUE(column.open_directories(*txn, 0));
  auto written = column.merge_slice(*txn, f.meta, budget);
  ASSERT_TRUE(written.has_value()) << written.error().message;
  ASSERT_TRUE(txn->commit());
  column.recycle(column.adopt(std::move(*written)));  // as the index does
}

// A whole merge, in slices of `budget` entries.
inline void merge(Column& column, ColumnFixture& f, std::uint64_t watermark,
                  std::uint64_t budget = ~0ull, bool reclaim = false) {
  column.begin_merge(watermark, reclaim);
  while (column.merging()) slice(column, f, budget);
}

}  // namespace neardup
