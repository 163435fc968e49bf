// A column's run directories across merges and map moves, and its runs read ahead into the
// page cache.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "store/column.h"
#include "store/column_test_fixture.h"

namespace neardup {
namespace {

// A merge's new run gets its directory read; the runs it kept keep theirs as they were, and
// every entry is still found. A new map generation reads them all again.
TEST(Column, AMergeReadsTheNewRunsDirectoryAndKeepsTheOthers) {
  ColumnFixture f;
  Column column("t/0/0", 64, RunFormat::kWide, 12, 100000);
  f.create(column);
  std::vector<Entry> all;
  auto add = [&](std::uint64_t doc) {
    const Entry e{doc * 0x9e3779b97f4a7c15ull, doc};
    all.push_back(e);
    column.add(e);
    column.delta().mark();
  };
  std::uint64_t doc = 0;
  while (doc < 20000) add(++doc);
  merge(column, f, doc);
  ASSERT_EQ(probe(column, f.env, all[0].key), std::vector<std::uint64_t>{1});
  ASSERT_EQ(column.directories().size(), 1u);
  const std::uint64_t read = column.directories_read();
  while (doc < 21000) add(++doc);
  merge(column, f, doc);  // 1000 against a run of 20000: a run of its own beside it
  ASSERT_EQ(column.state().runs.size(), 2u);
  for (const Entry& e : all) {
    ASSERT_EQ(probe(column, f.env, e.key), std::vector<std::uint64_t>{e.doc}) << e.doc;
  }
  ASSERT_EQ(column.directories().size(), 2u);
  EXPECT_EQ(column.directories_read(), read + 1);  // the new run's alone
  EXPECT_EQ(column.directories()[1].sizes.size(), column.directories()[1].records.size());
  std::uint64_t in_second = 0;
  for (std::uint32_t n : column.directories()[1].sizes) in_second += n;
  EXPECT_EQ(in_second, 1000u);
  // The map moved (a new generation): every directory is read again, and answers the same.
  auto txn = lmdb::Txn::begin(f.env, MDB_RDONLY);
  ASSERT_TRUE(column.open_directories(*txn, 1));
  ASSERT_EQ(column.directories().size(), 2u);
  EXPECT_EQ(column.directories_read(), read + 3);
  std::vector<RunProbe> probes;
  column.start(all[20500].key, probes, [](const Entry&) {});
  std::vector<std::uint64_t> docs;
  for (RunProbe& p : probes) p.finish([&](std::uint64_t, auto d) { docs.push_back(d()); });
  EXPECT_EQ(docs, std::vector<std::uint64_t>{20501});
}

// Writes the store's file back and drops its clean pages from the page cache (pages mapped
// into the process, which the kernel keeps, aside).
void drop_from_page_cache(const ColumnFixture& f) {
  const int fd = ::open((f.dir.path() + "/data.mdb").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fdatasync(fd), 0);
  ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
}

// A band run of 300,000 uniform keys, one a document, merged from the delta.
void fill_band_run(ColumnFixture& f, Column& column) {
  std::uint64_t doc = 0;
  while (doc < 300000) {
    ++doc;
    column.add({doc * 0x9e3779b97f4a7c15ull, doc});
    column.delta().mark();
  }
  merge(column, f, doc);
}

// Pages in [begin, end) of the map: resident, of all.
std::pair<std::size_t, std::size_t> resident_pages(const char* begin, const char* end) {
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto from = reinterpret_cast<std::uintptr_t>(begin) & ~(page - 1);
  const auto to = reinterpret_cast<std::uintptr_t>(end);
  std::vector<unsigned char> in((to - from + page - 1) / page);
  EXPECT_EQ(::mincore(reinterpret_cast<void*>(from), to - from, in.data()), 0);
  std::size_t resident = 0;
  for (unsigned char c : in) resident += c & 1;
  return {resident, in.size()};
}

// Pages of a column's runs in the page cache: resident, of all.
std::pair<std::size_t, std::size_t> resident_pages(const Column& column) {
  std::size_t resident = 0, all = 0;
  for (const RunDirectory& dir : column.directories()) {
    for (std::size_t r = 0; r < dir.records.size(); ++r) {
      const auto [in, of] = resident_pages(dir.records[r], dir.records[r] + dir.bytes[r]);
      resident += in;
      all += of;
    }
  }
  return {resident, all};
}

// A column's runs, dropped from the page cache, are read back into it when asked ahead.
TEST(Column, ReadingRunsAheadBringsThemIntoThePageCache) {
  ColumnFixture f;
  Column column("t/0/0", 64, RunFormat::kWide, 12, 100000);
  f.create(column);
  for (std::uint64_t doc = 1; doc <= 60000; ++doc) {
    column.add({doc * 0x9e3779b97f4a7c15ull, doc});
    column.delta().mark();
  }
  merge(column, f, 60000);
  ASSERT_EQ(probe(column, f.env, 0x9e3779b97f4a7c15ull), std::vector<std::uint64_t>{1});
  // Written back, then dropped from the cache (clean pages go).
  drop_from_page_cache(f);
  const auto [before, all] = resident_pages(column);
  ASSERT_GE(all, 8u);
  ASSERT_LT(before, all) << "the run's pages stayed in the page cache";
  auto txn = lmdb::Txn::begin(f.env, MDB_RDONLY);
  ASSERT_TRUE(column.read_runs_ahead(*txn, 0));
  // The reads are the kernel's to finish: wait for them (a few milliseconds here).
  std::size_t now = before;
  for (int i = 0; i < 500 && now < all; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    now = resident_pages(column).first;
  }
  EXPECT_EQ(now, all) << before << " resident before";
}

// A band column's runs, dropped from the page cache: asked ahead for their keys' high parts,
// those come back into it, and the docs, which no probe reads before a key matches, do not.
TEST(Column, ReadingHighPartsAheadBringsThemAloneIntoThePageCache) {
  ColumnFixture f;
  Column column("b/0", 64, RunFormat::kNarrow, 12, 400000);
  f.create(column);
  fill_band_run(f, column);
  ASSERT_EQ(probe(column, f.env, 0x9e3779b97f4a7c15ull), std::vector<std::uint64_t>{1});
  drop_from_page_cache(f);
  // Per record: its high part, and its docs less the page they share with the high part.
  auto parts = [&](bool high) {
    std::size_t resident = 0, all = 0;
    for (const RunDirectory& dir : column.directories()) {
      for (std::size_t r = 0; r < dir.records.size(); ++r) {
        const RecordForm& form = dir.forms[r];
        EXPECT_TRUE(form.elias_fano);
        const char* record = dir.records[r];
        const char* keys_end = record + form.key_region(form.count);
        const char* end = record + dir.bytes[r];
        if (!high && keys_end + 4096 >= end) continue;
        auto [in, of] = high ? resident_pages(record + form.field_region(form.count), keys_end)
                             : resident_pages(keys_end + 4096, end);
        resident += in;
        all += of;
      }
    }
    return std::pair{resident, all};
  };
  ASSERT_GE(column.directories().front().records.size(), 4u);
  const auto [high_before, high_all] = parts(true);
  const auto [docs_before, docs_all] = parts(false);
  ASSERT_LT(docs_before, docs_all) << "the docs stayed in the page cache";
  ASSERT_LT(high_before, high_all) << "the high parts stayed in the page cache";
  auto txn = lmdb::Txn::begin(f.env, MDB_RDONLY);
  ASSERT_TRUE(column.read_high_parts_ahead(*txn, 0));
  std::size_t high_now = high_before;
  for (int i = 0; i < 500 && high_now < high_all; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    high_now = parts(true).first;
  }
  EXPECT_EQ(high_now, high_all) << high_before << " resident before";
  EXPECT_EQ(parts(false).first, docs_before) << "the docs were read too";
}

// Whether `ranges` hold the byte at p.
bool advised(const std::vector<iovec>& ranges, const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return std::ranges::any_of(ranges, [&](const iovec& r) {
    const auto from = reinterpret_cast<std::uintptr_t>(r.iov_base);
    return at >= from && at < from + r.iov_len;
  });
}

// A band column's prefetch a page ahead, with advice: a key held in a run gets the pages of its
// record that its probe will read (the entry's low part and its 1 in the high part); a key that
// the filters keep from every run gets none; flushed, the advised pages come into the page cache.
TEST(Column, PrefetchWithAdviceNamesThePagesAProbeReads) {
  ColumnFixture f;
  Column column("b/0", 64, RunFormat::kNarrow, 12, 400000);
  f.create(column);
  fill_band_run(f, column);
  auto txn = lmdb::Txn::begin(f.env, MDB_RDONLY);
  ASSERT_TRUE(column.open_directories(*txn, 0));
  ASSERT_EQ(column.directories().size(), 1u);
  const RunDirectory& dir = column.directories().front();
  drop_from_page_cache(f);
  // In one call (process_madvise), and a call a range (where that is refused).
  PageAdvice batched(true), single(true, /*batched=*/false);
  ASSERT_TRUE(batched.enabled() && single.enabled());
  int checked = 0;
  std::size_t cold = 0;  // advised pages not in the page cache when advised
  for (std::uint64_t d = 1000; d <= 300000; d += 29999) {
    const std::uint64_t key = d * 0x9e3779b97f4a7c15ull;
    PageAdvice& advice = checked % 2 == 0 ? batched : single;
    column.prefetch(key, Column::Lookahead::kRecords, &advice);
    ASSERT_FALSE(advice.ranges().empty()) << d;
    // Flushed before anything reads the record: the advised pages come into the page cache.
    const std::vector<iovec> asked = advice.ranges();
    auto resident = [&] {
      std::size_t in = 0, all = 0;
      for (const iovec& range : asked) {
        const char* p = static_cast<const char*>(range.iov_base);
        const auto [n, of] = resident_pages(p, p + range.iov_len);
        in += n;
        all += of;
      }
      return std::pair{in, all};
    };
    const auto [before, all] = resident();
    cold += all - before;
    advice.flush();
    EXPECT_TRUE(advice.ranges().empty());
    std::size_t now = before;
    for (int i = 0; i < 500 && now < all; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      now = resident().first;
    }
    EXPECT_EQ(now, all) << d;
    // They hold what the probe reads: the entry's low part and its 1 in the high part.
    const std::uint64_t stored = stored_key(RunFormat::kNarrow, key);
    const std::size_t r = std::lower_bound(dir.last_keys.begin(), dir.last_keys.end(), stored) -
                          dir.last_keys.begin();
    ASSERT_LT(r, dir.records.size());
    const RecordForm& form = dir.forms[r];
    std::size_t index = dir.sizes[r];
    dir.for_each_key(r, [&](std::size_t i, std::uint64_t k) {
      if (k == stored && index == dir.sizes[r]) index = i;
    });
    ASSERT_LT(index, dir.sizes[r]) << d;
    const elias_fano::Reader keys = form.keys(dir.records[r]);
    const Entry e{.key = stored, .doc = d};
    EXPECT_TRUE(advised(asked, keys.low_address(index))) << d;
    EXPECT_TRUE(advised(asked, keys.high_address({.bit = high_position(form, e, index)}))) << d;
    ++checked;
  }
  EXPECT_EQ(checked, 10);
  EXPECT_GT(cold, 0u) << "every advised page was in the page cache already";
  // Keys in no run: the filters (the run's own) let few through, and those get no pages.
  std::size_t advised_keys = 0;
  PageAdvice& advice = batched;
  for (std::uint64_t d = 300001; d <= 301000; ++d) {
    column.prefetch(d * 0x9e3779b97f4a7c15ull, Column::Lookahead::kRecords, &advice);
    advised_keys += !advice.ranges().empty();
    advice.flush();
  }
  EXPECT_LT(advised_keys, 100u);
}

}  // namespace
}  // namespace neardup
