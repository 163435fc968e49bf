// Opening a store: designs, format versions, map growth, read-only opens, idle and busy deltas at open.
#include "store/index.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "store/lmdb.h"
#include "store/records.h"
#include "store/test_util.h"

namespace neardup {
namespace {

// The store tests' helpers (store/test_util.h).
using namespace testing;  // NOLINT(google-build-using-namespace)
using Status = Verdict::Status;

TEST(Index, DesignMismatchAtOpenIsAClearError) {
  TempDir dir;
  open_or_die(store_config(dir.path(), 3, 4));
  auto other = Index::open(store_config(dir.path(), 3, 10));
  ASSERT_FALSE(other.has_value());
  EXPECT_NE(other.error().message.find("stored design is k=3 r=1"), std::string::npos) << other.error();
  auto other_k = Index::open(store_config(dir.path(), 4, 0));
  ASSERT_FALSE(other_k.has_value());
}

TEST(Index, AStoreKeepsItsDesignWhenTheConfigDerivesOne) {
  // store.tables 0 derives a new store's design; a store made with 10 tables keeps them, and a
  // store made with 4 keeps them where the expected size would now derive 10.
  TempDir ten, four;
  {
    auto index = open_or_die(store_config(ten.path(), 3, 10));
    apply_or_die(*index, {page("https://a.example/1", 0xF0F0F0F0F0F0F0F0ull)});
  }
  open_or_die(store_config(four.path(), 3, 4));
  StoreConfig derived = store_config(ten.path());
  {
    auto reopened = open_or_die(derived);
    EXPECT_EQ(reopened->stats().tables, 10u);
    auto found = apply_or_die(*reopened, {page("https://b.example/1", 0xF0F0F0F0F0F0F0F1ull)});
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].status, Status::kDuplicate);
  }
  derived = store_config(four.path());
  derived.expected_documents = 1'000'000'000;
  EXPECT_EQ(open_or_die(derived)->stats().tables, 4u);
  // Another k is still refused: it changes what the store finds.
  auto other_k = Index::open(store_config(ten.path(), 4, 0));
  ASSERT_FALSE(other_k.has_value());
  EXPECT_NE(other_k.error().message.find("stored design is k=3 r=2"), std::string::npos)
      << other_k.error();
}

TEST(Index, InvalidTableCountIsAClearError) {
  TempDir dir;
  auto index = Index::open(store_config(dir.path(), 3, 7));
  ASSERT_FALSE(index.has_value());
  EXPECT_NE(index.error().message.find("store.tables"), std::string::npos) << index.error();
}

TEST(Index, FormatVersionMismatchAtOpenIsAClearError) {
  TempDir dir;
  auto config = store_config(dir.path());
  open_or_die(config);
  {
    auto env = lmdb::Env::open(dir.path(), {});
    ASSERT_TRUE(env.has_value());
    auto txn = lmdb::Txn::begin(*env, 0);
    auto meta = lmdb::Dbi::open(*txn, "meta", 0);
    ASSERT_TRUE(meta.has_value());
    std::uint32_t version = 99;
    ASSERT_TRUE(meta->put(*txn, "format", std::string_view(reinterpret_cast<char*>(&version), 4)));
    ASSERT_TRUE(txn->commit());
  }
  auto index = Index::open(config);
  ASSERT_FALSE(index.has_value());
  EXPECT_NE(index.error().message.find("format version 99"), std::string::npos) << index.error();
  auto read_only = Index::open(config, {.read_only = true});
  EXPECT_FALSE(read_only.has_value());
}

TEST(Index, AStoreOfBlocksWithoutWhereTheyStartIsReportedDamagedNotMisread) {
  TempDir dir;
  auto config = store_config(dir.path());
  {
    auto index = open_or_die(config);
    apply_or_die(*index, {at(page("a", kA), "pages/0", 1)});
  }
  {
    auto env = lmdb::Env::open(dir.path(), {});
    auto txn = lmdb::Txn::begin(*env, 0);
    auto meta = lmdb::Dbi::open(*txn, "meta", 0);
    ASSERT_TRUE(meta->del(*txn, "docs_block_from"));
    ASSERT_TRUE(txn->commit());
  }
  expect_refused_as_damaged(config, "docs_block_from");
}

// (A store of version 5 written by that build: store/format_upgrade_test.py.)
TEST(Index, AVersionFourStoreIsReadAndAWritableOpenMarksItTheCurrentVersion) {
  TempDir dir;
  auto config = store_config(dir.path());
  auto format_on_disk = [&] {
    auto env = lmdb::Env::open(dir.path(), {});
    auto txn = lmdb::Txn::begin(*env, MDB_RDONLY);
    auto meta = lmdb::Dbi::open(*txn, "meta", 0);
    auto value = meta->get(*txn, "format");
    return records::decode_u32(*value).value_or(0);
  };
  {
    auto index = open_or_die(config);
    apply_or_die(*index, {at(page("a", kA), "pages/0", 1)});
  }
  {
    auto env = lmdb::Env::open(dir.path(), {});
    auto txn = lmdb::Txn::begin(*env, 0);
    auto meta = lmdb::Dbi::open(*txn, "meta", 0);
    ASSERT_TRUE(meta->put(*txn, "format", records::encode_u32(4)));
    ASSERT_TRUE(txn->commit());
  }
  ASSERT_EQ(format_on_disk(), 4u);
  {
    auto read_only = open_or_die(config, {.read_only = true});
    EXPECT_EQ(read_only->stats().documents, 1u);
  }
  EXPECT_EQ(format_on_disk(), 4u);
  auto index = open_or_die(config);
  EXPECT_EQ(format_on_disk(), records::kFormatVersion);
  auto replay = apply_or_die(*index, {at(page("a", kA), "pages/0", 1)});
  EXPECT_TRUE(replay[0].replayed);
}

TEST(Index, GrowsTheMapWhenFullAndKeepsEverything) {
  TempDir dir;
  auto config = store_config(dir.path());
  config.map_size = 64 * 1024;
  constexpr std::size_t kPages = 20000;
  {
    auto index = open_or_die(config, {.delta_entries = 2048});
    for (std::size_t i = 0; i < kPages; i += 500) apply_or_die(*index, numbered_pages(i, 500));
    EXPECT_GT(index->stats().map_size, 64u * 1024);
  }
  // Reopened, LMDB maps just the file; the index grows the map at once, not when a batch fails.
  auto index = open_or_die(config, {.delta_entries = 2048});
  EXPECT_EQ(index->stats().documents, kPages);
  EXPECT_GT(index->stats().map_size * 3, index->stats().bytes_on_disk * 4);
  auto items = numbered_pages(0, kPages);
  for (std::size_t i = 0; i < kPages; i += 37) {
    auto match = testing::lookup(*index, items[i].page->fingerprint, "s-test", 0);
    ASSERT_TRUE(match.has_value() && match->has_value()) << i;
    EXPECT_EQ((*match)->id, items[i].page->id);
  }
}

TEST(Index, ReachingMaxMapSizeIsAClearErrorAndLosesNothingCommitted) {
  TempDir dir;
  auto config = store_config(dir.path());
  config.map_size = 64 * 1024;
  config.max_map_size = 1024 * 1024;
  std::size_t committed = 0;
  std::string error;
  {
    auto index = open_or_die(config, {.delta_entries = 1024});
    for (std::size_t i = 0; i < 100000 && error.empty(); i += 500) {
      auto v = index->apply(numbered_pages(i, 500));
      if (v)
        committed += 500;
      else
        error = v.error().message;
    }
  }
  EXPECT_NE(error.find("max_map_size"), std::string::npos) << error;
  ASSERT_GT(committed, 0u);
  config.max_map_size = 1ull << 30;
  auto index = open_or_die(config, {.delta_entries = 1024});
  EXPECT_EQ(index->stats().documents, committed);
  auto items = numbered_pages(0, committed);
  for (std::size_t i = 0; i < committed; i += 13) {
    auto match = testing::lookup(*index, items[i].page->fingerprint, "s-test", 0);
    ASSERT_TRUE(match.has_value() && match->has_value()) << i;
  }
  // Replaying the same pages reports them as already seen.
  auto v = apply_or_die(*index, numbered_pages(0, 10));
  for (const auto& verdict : v) EXPECT_TRUE(verdict.replayed);
}

TEST(Index, PersistsAcrossReopenIncludingMergedRuns) {
  TempDir dir;
  auto config = store_config(dir.path());
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> fps(5000);
  for (auto& fp : fps) fp = rng();
  {
    auto index = open_or_die(config, {.delta_entries = 512});
    for (std::size_t i = 0; i < fps.size(); i += 250) {
      std::vector<IndexItem> batch;
      for (std::size_t j = i; j < i + 250; ++j) batch.push_back(page(numbered("p", j), fps[j]));
      apply_or_die(*index, batch);
    }
    EXPECT_GT(index->stats().runs, 0u);
  }
  auto index = open_or_die(config, {.delta_entries = 512});
  EXPECT_EQ(index->stats().documents, fps.size());
  for (std::size_t i = 0; i < fps.size(); i += 97) {
    auto match = testing::lookup(*index, fps[i] ^ 1, "s-test", 3);
    ASSERT_TRUE(match.has_value()) << match.error();
    ASSERT_TRUE(match->has_value());
    EXPECT_EQ((*match)->id, numbered("p", i));
    EXPECT_EQ((*match)->distance, 1);
  }
}

TEST(Index, ASchemeCreatedInAnAbortedBatchLeavesNoTrace) {
  TempDir dir;
  auto config = store_config(dir.path());
  config.map_size = config.max_map_size = 1 << 20;
  auto index = open_or_die(config);
  // The second page's id does not fit the map: the batch fails as a whole.
  auto failed = index->apply(
      std::vector{page("a", kA, "s-new"), page(std::string(4 << 20, 'b'), ~kA, "s-new")});
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, StoreError::Code::kFull) << failed.error();
  EXPECT_TRUE(index->stats().schemes.empty());
  auto v = apply_or_die(*index, {page("a", kA, "s-new")});
  EXPECT_FALSE(v[0].replayed);
}

TEST(Index, ReadOnlyOpenNeverCreatesAStore) {
  TempDir dir;
  auto config = store_config(dir.path() + "/missing");
  auto index = Index::open(config, {.read_only = true});
  ASSERT_FALSE(index.has_value());
  EXPECT_FALSE(std::filesystem::exists(config.path));
}

TEST(Index, ReadOnlyOpenReportsStatsOfAWrittenStore) {
  TempDir dir;
  auto config = store_config(dir.path());
  {
    auto index = open_or_die(config);
    apply_or_die(*index, {at(page("a", kA), "pages/3", 42)});
  }
  auto config_other = config;
  config_other.design_k = 5;  // read-only open takes the design from the store
  auto index = open_or_die(config_other, {.read_only = true});
  auto stats = index->stats();
  EXPECT_EQ(stats.design_k, 3u);
  EXPECT_EQ(stats.documents, 1u);
  EXPECT_EQ(stats.pending_verdicts, 1u);
  ASSERT_EQ(stats.applied_offsets.size(), 1u);
  EXPECT_EQ(stats.applied_offsets[0].second, 42);
  EXPECT_FALSE(index->apply(std::vector{page("b", 1)}).has_value());
}

// The bytes the scheme's columns hold in memory, as stats() reports them.
std::uint64_t scheme_memory(Index& index, const std::string& scheme) {
  for (const auto& s : index.stats().schemes) {
    if (s.id == scheme) return s.memory_bytes;
  }
  ADD_FAILURE() << "no scheme " << scheme;
  return 0;
}

// Every scheme once kept its deltas in memory for good, also after a restart: six seed reloads
// took a daemon from 355 MB to 1.92 GB. An idle scheme's deltas are now merged and freed.
TEST(Index, AnIdleSchemesDeltasAreMergedAndFreedAndItsPagesStillMatch) {
  TempDir dir;
  const StoreConfig config = store_config(dir.path() + "/store");
  const OpenOptions options{.delta_entries = 1u << 16};
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> a_prints;
  auto index = open_or_die(config, options);
  for (int batch = 0; batch < 40; ++batch) {  // 20,000 pages of s-a: all in its deltas
    std::vector<IndexItem> items;
    for (int i = 0; i < 500; ++i) {
      a_prints.push_back(rng());
      items.push_back(page(numbered("a", a_prints.size() - 1), a_prints.back(), "s-a"));
    }
    apply_or_die(*index, items);
  }
  const std::uint64_t busy = scheme_memory(*index, "s-a");
  for (int batch = 0; batch < 70; ++batch) {  // then only s-b, 70 small batches
    std::vector<IndexItem> items;
    for (int i = 0; i < 10; ++i) items.push_back(page(numbered("b", batch * 10 + i), rng(), "s-b"));
    apply_or_die(*index, items);
  }
  const std::uint64_t idle = scheme_memory(*index, "s-a");
  EXPECT_GT(busy, 1u << 20);
  EXPECT_LT(idle * 8, busy) << "busy " << busy << " idle " << idle;
  // Its pages are in its runs now, and found.
  auto v = apply_or_die(*index, {page("a-copy", a_prints[1234] ^ 0b101, "s-a")});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].status, Status::kDuplicate);
  EXPECT_EQ(v[0].duplicate_of, "a1234");
  // Reopened, nothing of s-a is rebuilt into memory.
  index.reset();
  index = open_or_die(config, options);
  apply_or_die(*index, {page("b-last", rng(), "s-b")});
  EXPECT_LT(scheme_memory(*index, "s-a") * 8, busy);
  v = apply_or_die(*index, {page("a-copy-2", a_prints[77] ^ 0b11, "s-a")});
  EXPECT_EQ(v[0].status, Status::kDuplicate);
  EXPECT_EQ(v[0].duplicate_of, "a77");
}

// Opened without presizing (neardup dedup), a busy column's tables hold what its delta holds
// instead of its full capacity, and the index answers alike.
TEST(Index, OpenedWithoutPresizingABusyStoresTablesHoldWhatTheyHoldAndMatchAlike) {
  TempDir dir;
  const StoreConfig config = store_config(dir.path() + "/store");
  const OpenOptions presized{.delta_entries = 1u << 12};
  const OpenOptions lean{.delta_entries = 1u << 12, .presize_busy_deltas = false};
  std::mt19937_64 rng(13);
  std::vector<std::uint64_t> prints;
  {
    auto index = open_or_die(config, presized);
    for (int batch = 0; batch < 12; ++batch) {  // 6,000 pages: runs, and a delta in use
      std::vector<IndexItem> items;
      for (int i = 0; i < 500; ++i) {
        prints.push_back(rng());
        items.push_back(page(numbered("a", prints.size() - 1), prints.back(), "s-a"));
      }
      apply_or_die(*index, items);
    }
  }
  auto memory_after_open = [&](const OpenOptions& options) {
    auto index = open_or_die(config, options);
    apply_or_die(*index, {page(numbered("new", rng() % 1000), rng(), "s-a")});
    return scheme_memory(*index, "s-a");
  };
  const std::uint64_t full = memory_after_open(presized);
  const std::uint64_t held = memory_after_open(lean);
  EXPECT_LT(held * 2, full) << "held " << held << " full " << full;
  auto index = open_or_die(config, lean);
  auto v = apply_or_die(*index, {page("copy-newest", prints.back() ^ 0b101, "s-a"),
                                 page("copy-oldest", prints[3] ^ 0b11, "s-a")});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].status, Status::kDuplicate);
  EXPECT_EQ(v[0].duplicate_of, numbered("a", prints.size() - 1));
  EXPECT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_EQ(v[1].duplicate_of, "a3");
}

}  // namespace
}  // namespace neardup
