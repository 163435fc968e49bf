// Damage on disk is found and reported as an error naming what is damaged, never a signal:
// run records carry checksums that readers and merges check, and a truncated data.mdb is
// refused at open. Also the other forms of a record's key: its fences, and the shorter keys of
// records written before checksums or fences.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "store/column.h"
#include "store/index.h"
#include "store/run.h"
#include "store/test_util.h"

namespace neardup {
namespace {

// An environment whose map is writable (MDB_WRITEMAP), so that a test can damage committed
// pages in place, as a bad disk would.
struct WritableMap {
  testing::TempDir dir;
  lmdb::Env env;
  WritableMap() {
    env = std::move(*lmdb::Env::open(dir.path(), {.map_size = 1ull << 28, .flags = MDB_WRITEMAP}));
  }
};

std::vector<Entry> sorted_entries(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Entry> entries(n);
  for (std::size_t i = 0; i < n; ++i) entries[i] = Entry{rng(), i + 1};
  std::sort(entries.begin(), entries.end());
  return entries;
}

// Writes entries as a run named `name`, full records first.
lmdb::Dbi write_run(const lmdb::Env& env, const std::string& name,
                    const std::vector<Entry>& entries) {
  auto txn = lmdb::Txn::begin(env, 0);
  auto dbi = *lmdb::Dbi::open(*txn, name, MDB_CREATE);
  RunWriter writer(*txn, dbi, RunFormat::kWide);
  testing::write_records(writer, entries);
  EXPECT_TRUE(txn->commit());
  return dbi;
}

RunDirectory directory(const lmdb::Env& env, lmdb::Dbi dbi) {
  auto txn = lmdb::Txn::begin(env, MDB_RDONLY);
  return *RunDirectory::load(*txn, dbi, RunFormat::kWide);
}

// Reads the run whole; the first error, if any.
lmdb::Result<std::size_t> read_all(const lmdb::Env& env, lmdb::Dbi dbi, const std::string& name) {
  auto txn = lmdb::Txn::begin(env, MDB_RDONLY);
  auto reader = RunReader::open(*txn, dbi, RunFormat::kWide, name);
  if (!reader) return std::unexpected(reader.error());
  std::size_t n = 0;
  while (!reader->done()) {
    ++n;
    if (auto next = reader->next(); !next) return std::unexpected(next.error());
  }
  return n;
}

TEST(RunChecksums, AFlippedByteInARecordIsFoundByItsChecksum) {
  WritableMap map;
  const auto entries = sorted_entries(24000, 1);  // three records or more
  lmdb::Dbi run = write_run(map.env, "t/s-1/0/1", entries);
  RunDirectory dir = directory(map.env, run);
  ASSERT_GE(dir.records.size(), 3u);
  for (std::size_t i = 0; i < dir.records.size(); ++i) {
    EXPECT_NE(dir.checksums[i], 0u);
    EXPECT_TRUE(dir.intact(i));
  }
  auto whole = read_all(map.env, run, "t/s-1/0/1");
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  EXPECT_EQ(*whole, entries.size());

  const_cast<char*>(dir.records[1])[1000] ^= 0x04;  // one bit of a key in the second record
  EXPECT_TRUE(dir.intact(0));
  EXPECT_FALSE(dir.intact(1));
  EXPECT_TRUE(dir.intact(2));
  auto damaged = read_all(map.env, run, "t/s-1/0/1");
  ASSERT_FALSE(damaged.has_value());
  EXPECT_EQ(damaged.error().code, MDB_CORRUPTED);
  EXPECT_NE(damaged.error().message.find("run t/s-1/0/1: the record ending at key"),
            std::string::npos)
      << damaged.error().message;
  EXPECT_NE(damaged.error().message.find("does not match its checksum"), std::string::npos);
  EXPECT_EQ(from_lmdb(damaged.error()).code, StoreError::Code::kCorrupt);
}

TEST(RunChecksums, RecordsWrittenWithoutAChecksumAreReadUnchecked) {
  WritableMap map;
  const auto entries = sorted_entries(100, 2);
  lmdb::Dbi run;
  {
    auto txn = lmdb::Txn::begin(map.env, 0);
    run = *lmdb::Dbi::open(*txn, "ids/1", MDB_CREATE);
    char key[kRecordKeyBytesWithoutChecksum];
    coding::encode_be64(key, entries.back().key);
    coding::encode_be64(key + 8, entries.back().doc);
    std::string value;
    encode_record(fixed_form(RunFormat::kWide), entries, value);
    ASSERT_TRUE(run.put(*txn, std::string_view(key, sizeof key), value, MDB_APPEND));
    ASSERT_TRUE(txn->commit());
  }
  RunDirectory dir = directory(map.env, run);
  ASSERT_EQ(dir.records.size(), 1u);
  EXPECT_EQ(dir.checksums[0], 0u);
  EXPECT_TRUE(dir.fences.empty());
  EXPECT_TRUE(dir.intact(0));
  auto whole = read_all(map.env, run, "ids/1");
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  EXPECT_EQ(*whole, entries.size());
}

TEST(RunFences, RecordKeysCarryFencesAndProbesFindTheSameWithOrWithoutThem) {
  WritableMap map;
  const auto entries = sorted_entries(20000, 3);  // several records
  lmdb::Dbi run = write_run(map.env, "t/s-1/0/1", entries);
  const RunDirectory fenced = directory(map.env, run);
  ASSERT_GE(fenced.sizes.size(), 2u);
  ASSERT_EQ(fenced.fences.size(), fenced.sizes.size() * kFences);
  std::size_t start = 0;  // the record's first entry
  for (std::size_t r = 0; r < fenced.sizes.size(); ++r) {
    for (std::size_t j = 0; j < kFences; ++j) {
      // The entry's bit in the high part (Elias–Fano, what this build writes), else its key's
      // top 32 bits.
      const std::size_t i = fence_position(j, fenced.sizes[r]);
      const Entry& e = entries[start + i];
      const RecordForm& form = fenced.forms[r];
      EXPECT_EQ(fenced.fences[r * kFences + j],
                form.elias_fano ? high_position(form, e, i) : e.key >> 32)
          << r << " " << j;
    }
    start += fenced.sizes[r];
  }
  RunDirectory unfenced = fenced;  // as a run written before fences is probed
  unfenced.fences.clear();
  // Exact keys, the ranges of 20-bit prefixes (several entries) and absent keys.
  for (auto [lo, hi] : testing::probe_ranges(entries, 2000, 4, 44)) {
    const auto expected = testing::entries_between(entries, RunFormat::kWide, lo, hi);
    EXPECT_EQ(testing::probe_run(fenced, lo, hi, entries.size()), expected) << lo;
    EXPECT_EQ(testing::probe_run(unfenced, lo, hi, entries.size()), expected) << lo;
  }
}

TEST(RunChecksums, AMergeOverADamagedRunFailsAndCommitsNothing) {
  WritableMap map;
  lmdb::Dbi meta;
  {
    auto txn = lmdb::Txn::begin(map.env, 0);
    meta = *lmdb::Dbi::open(*txn, "meta", MDB_CREATE);
    ASSERT_TRUE(txn->commit());
  }
  Column column("t/s-1/0", 64, RunFormat::kWide, 12, 8000);
  {
    auto txn = lmdb::Txn::begin(map.env, 0);
    ASSERT_TRUE(column.load(*txn, meta, true, 0));
    ASSERT_TRUE(txn->commit());
  }
  auto merge = [&](std::uint64_t watermark) -> lmdb::Result<> {
    column.begin_merge(watermark);
    while (column.merging()) {
      auto txn = lmdb::Txn::begin(map.env, 0);
      if (auto r = column.open_directories(*txn, 0); !r) return r;
      auto slice = column.merge_slice(*txn, meta, ~0ull);
      if (!slice) return std::unexpected(slice.error());
      if (auto r = txn->commit(); !r) return r;
      column.adopt(std::move(*slice));
    }
    return {};
  };
  std::mt19937_64 rng(3);
  std::uint64_t doc = 0;
  auto fill = [&] {
    while (!column.full()) {
      column.add(Entry{rng(), ++doc});
      column.delta().mark();
    }
  };
  fill();
  ASSERT_TRUE(merge(doc).has_value());
  ASSERT_EQ(column.state().runs.size(), 1u);
  const records::ColumnState before = column.state();

  {  // damage the run's first record
    auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
    auto run = *lmdb::Dbi::open(*txn, "t/s-1/0/" + std::to_string(before.runs[0].id), 0);
    RunDirectory dir = *RunDirectory::load(*txn, run, RunFormat::kWide);
    const_cast<char*>(dir.records[0])[8] ^= 0x01;
  }
  fill();
  auto merged = merge(doc);
  ASSERT_FALSE(merged.has_value());
  EXPECT_EQ(merged.error().code, MDB_CORRUPTED);
  EXPECT_NE(merged.error().message.find("run t/s-1/0/1:"), std::string::npos)
      << merged.error().message;
  // The column's committed state is the one before the merge.
  auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
  auto stored = meta.get(*txn, "column/t/s-1/0");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(records::ColumnState::decode(*stored), before);
}

// A truncated data.mdb once crashed `stats`, `dedup` and the daemon with SIGBUS.
TEST(TruncatedStore, IsRefusedAtOpenNamingTheFile) {
  testing::TempDir dir;
  StoreConfig config = testing::store_config(dir.path() + "/store");
  {
    auto index = Index::open(config);
    ASSERT_TRUE(index.has_value()) << index.error().message;
    std::vector<IndexItem> items;
    for (int i = 0; i < 3000; ++i) {
      items.push_back(testing::page(testing::numbered("p", i), 0x9e3779b97f4a7c15ull * (i + 1)));
    }
    ASSERT_TRUE((*index)->apply(items).has_value());
  }
  const std::string file = config.path + "/data.mdb";
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size / 2);
  for (bool read_only : {true, false}) {
    SCOPED_TRACE(read_only ? "read-only" : "writable");
    auto index = Index::open(config, {.read_only = read_only});
    ASSERT_FALSE(index.has_value());
    EXPECT_EQ(index.error().code, StoreError::Code::kCorrupt);
    EXPECT_NE(index.error().message.find(file), std::string::npos) << index.error().message;
    EXPECT_NE(index.error().message.find("truncated"), std::string::npos);
  }
}

// LMDB may count in a commit pages it allocated and freed again in the same transaction
// ("loose" pages) without writing them, so data.mdb can end before the commit's last page, and
// the check above took such a store for a truncated one (seen on a 24M-page store; every page
// past its end was in the free list). Each write commit extends the file to its last page. Here
// the file is cut short by hand to stand for those pages: the next write commit covers them,
// even one that writes no page.
TEST(TruncatedStore, AWriteCommitLeavesTheFileCoveringItsLastPage) {
  testing::TempDir dir;
  auto env = lmdb::Env::open(dir.path(), {.map_size = 1ull << 26});
  ASSERT_TRUE(env.has_value());
  auto write = [&](const std::string& key) {
    auto txn = lmdb::Txn::begin(*env, 0);
    auto dbi = lmdb::Dbi::open(*txn, "scratch", MDB_CREATE);
    ASSERT_TRUE(dbi.has_value());
    ASSERT_TRUE(dbi->put(*txn, key, std::string(1 << 20, 'x')));
    ASSERT_TRUE(txn->commit());
  };
  write("a");
  const std::string file = dir.path() + "/data.mdb";
  auto used = env->used_bytes();
  ASSERT_TRUE(used.has_value());
  std::filesystem::resize_file(file, *used - 8 * 4096);
  EXPECT_FALSE(env->check_file_size(dir.path()));
  {
    auto txn = lmdb::Txn::begin(*env, 0);  // writes no page: only the extension can cover them
    ASSERT_TRUE(txn->commit());
  }
  used = env->used_bytes();
  ASSERT_TRUE(used.has_value());
  EXPECT_GE(std::filesystem::file_size(file), *used);
  EXPECT_TRUE(env->check_file_size(dir.path()));
}

}  // namespace
}  // namespace neardup
