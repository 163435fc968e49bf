#include "store/index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "store/lmdb.h"
#include "store/records.h"
#include "store/test_util.h"

namespace neardup {
namespace {

using testing::at;
using testing::numbered;
using testing::page;
using testing::store_config;
using testing::TempDir;
using Status = Verdict::Status;

std::unique_ptr<Index> open_or_die(const StoreConfig& config, const OpenOptions& options = {}) {
  auto index = Index::open(config, options);
  EXPECT_TRUE(index.has_value()) << index.error();
  return index ? std::move(*index) : nullptr;
}

std::vector<Verdict> apply_or_die(Index& index, std::vector<IndexItem> items) {
  auto verdicts = index.apply(items);
  EXPECT_TRUE(verdicts.has_value()) << verdicts.error();
  return verdicts ? *verdicts : std::vector<Verdict>{};
}

constexpr std::uint64_t kA = 0x9f3a0c1d22e4b807;

TEST(Index, TwoNearDuplicatesInOneBatchGetOneUniqueAndOneDuplicate) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  auto v = apply_or_die(*index, {page("a", kA), page("b", kA ^ 0b101), page("c", ~kA)});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].status, Status::kUnique);
  EXPECT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_EQ(v[1].matched, "a");
  EXPECT_EQ(v[1].duplicate_of, "a");
  EXPECT_EQ(v[1].distance, 2);
  EXPECT_FALSE(v[1].replayed);
  EXPECT_EQ(v[2].status, Status::kUnique);
}

TEST(Index, VerdictCountsTheCandidatesItsProbeCompared) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  auto first = apply_or_die(*index, {page("a", kA)});
  EXPECT_EQ(first[0].candidates, 0u);  // an empty index has nothing to compare
  // b shares every table's prefix with a: each table offers a as a candidate.
  auto second = apply_or_die(*index, {page("b", kA ^ 1)});
  EXPECT_GE(second[0].candidates, 1u);
  auto replay = apply_or_die(*index, {page("b", kA ^ 1)});
  EXPECT_TRUE(replay[0].replayed);
  EXPECT_EQ(replay[0].candidates, 0u);
}

TEST(Index, DuplicateOfNamesTheFirstSeenPageOfTheMatchedCluster) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  // b is within 3 of a; c is within 3 of b but 5 from a: c matches b, whose cluster is a's.
  auto v = apply_or_die(*index, {page("a", kA), page("b", kA ^ 0b111), page("c", kA ^ 0b11111)});
  EXPECT_EQ(v[2].status, Status::kDuplicate);
  EXPECT_EQ(v[2].matched, "b");
  EXPECT_EQ(v[2].duplicate_of, "a");
  EXPECT_EQ(v[2].distance, 2);
}

TEST(Index, TiesGoToTheEarliestStoredPage) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  apply_or_die(*index, {page("first", kA ^ 1), page("second", kA ^ 2)});
  auto v = apply_or_die(*index, {page("q", kA)});
  EXPECT_EQ(v[0].matched, "first");
  EXPECT_EQ(v[0].distance, 1);
}

TEST(Index, LiveDistanceBelowTheDesignIsHonoured) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  apply_or_die(*index, {page("a", kA)});
  auto v =
      apply_or_die(*index, {page("b", kA ^ 0b111, "s-test", 2), page("c", kA ^ 0b11, "s-test", 2)});
  EXPECT_EQ(v[0].status, Status::kUnique);
  EXPECT_EQ(v[1].status, Status::kDuplicate);
}

TEST(Index, MaxDistanceAboveTheDesignIsADeadLetterAndTheBatchGoesOn) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  auto v = apply_or_die(*index, {page("a", kA), page("b", kA, "s-test", 4), page("c", kA ^ 1)});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].status, Status::kUnique);
  EXPECT_EQ(v[1].status, Status::kDeadLetter);
  EXPECT_EQ(v[1].reason, "invalid_index_item");
  EXPECT_NE(v[1].detail.find("max_distance 4"), std::string::npos) << v[1].detail;
  EXPECT_EQ(v[2].status, Status::kDuplicate);
  EXPECT_EQ(v[2].matched, "a");
  EXPECT_EQ(index->stats().documents, 2u);  // b was never stored
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

TEST(Index, SameIdAndFingerprintGetsItsFirstVerdictNeverADuplicateOfItself) {
  TempDir dir;
  auto config = store_config(dir.path());
  {
    auto index = open_or_die(config);
    apply_or_die(*index, {page("a", kA), page("b", kA ^ 1)});
  }
  auto index = open_or_die(config);
  auto v = apply_or_die(*index, {page("a", kA), page("b", kA ^ 1), page("a", kA)});
  EXPECT_EQ(v[0].status, Status::kUnique);
  EXPECT_TRUE(v[0].replayed);
  EXPECT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_EQ(v[1].matched, "a");
  EXPECT_TRUE(v[1].replayed);
  EXPECT_EQ(v[2].status, Status::kUnique);
  EXPECT_EQ(index->stats().documents, 2u);
}

TEST(Index, ChangedFingerprintReindexesThePageUnderTheNewOne) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()), {.delta_entries = 64});
  apply_or_die(*index, {page("a", kA)});
  for (int i = 0; i < 200; ++i) apply_or_die(*index, {page(numbered("x", i), kA * (i + 3))});
  // Same id, fingerprint 2 bits away: judged without itself, so unique.
  auto v = apply_or_die(*index, {page("a", kA ^ 0b11)});
  EXPECT_EQ(v[0].status, Status::kUnique);
  EXPECT_FALSE(v[0].replayed);
  auto old_fp = testing::lookup(*index, kA ^ (1ull << 40), "s-test", 1);
  ASSERT_TRUE(old_fp.has_value());
  EXPECT_FALSE(old_fp->has_value()) << "old fingerprint still indexed";
  auto new_fp = testing::lookup(*index, kA ^ 0b11, "s-test", 0);
  ASSERT_TRUE(new_fp.has_value() && new_fp->has_value());
  EXPECT_EQ((*new_fp)->id, "a");
  EXPECT_EQ(index->stats().documents, 201u);
  // The new fingerprint is now the one replayed.
  auto again = apply_or_die(*index, {page("a", kA ^ 0b11)});
  EXPECT_TRUE(again[0].replayed);
}

TEST(Index, DesignMismatchAtOpenIsAClearError) {
  TempDir dir;
  open_or_die(store_config(dir.path(), 3, 4));
  auto other = Index::open(store_config(dir.path(), 3, 10));
  ASSERT_FALSE(other.has_value());
  EXPECT_NE(other.error().message.find("stored design is k=3 r=1"), std::string::npos) << other.error();
  auto other_k = Index::open(store_config(dir.path(), 4, 0));
  ASSERT_FALSE(other_k.has_value());
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

TEST(Index, AVersionFourStoreIsReadAndAWritableOpenMarksItVersionFive) {
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
  EXPECT_EQ(format_on_disk(), 5u);
  auto replay = apply_or_die(*index, {at(page("a", kA), "pages/0", 1)});
  EXPECT_TRUE(replay[0].replayed);
}

std::vector<IndexItem> numbered_pages(std::size_t from, std::size_t count) {
  std::vector<IndexItem> items;
  for (std::size_t i = from; i < from + count; ++i) {
    items.push_back(page(numbered("https://example.com/", i), std::mt19937_64(i)()));
  }
  return items;
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

TEST(Index, ReplayedOffsetsReturnTheStoredVerdictAndApplyNothing) {
  TempDir dir;
  auto config = store_config(dir.path());
  {
    auto index = open_or_die(config);
    IndexItem skipped;
    skipped.decided.status = Status::kSkipped;
    skipped.decided.reason = "low_content";
    apply_or_die(*index, {at(page("a", kA), "pages/0", 10), at(page("b", kA ^ 1), "pages/0", 11),
                          at(skipped, "pages/0", 12), at(page("z", ~kA), "pages/1", 5)});
    EXPECT_EQ(index->applied_offset("pages/0").value(), 12);
    EXPECT_EQ(index->applied_offset("pages/1").value(), 5);
    EXPECT_EQ(index->applied_offset("pages/2").value(), std::nullopt);
  }
  auto index = open_or_die(config);
  // Re-delivered 11 and 12 carry different content now: the stored verdicts win.
  IndexItem dead;
  dead.decided.status = Status::kDeadLetter;
  auto v = apply_or_die(*index, {at(page("b2", 0x1234), "pages/0", 11), at(dead, "pages/0", 12),
                                 at(page("c", kA ^ 3), "pages/0", 13)});
  EXPECT_EQ(v[0].status, Status::kDuplicate);
  EXPECT_EQ(v[0].matched, "a");
  EXPECT_TRUE(v[0].replayed);
  EXPECT_EQ(v[1].status, Status::kSkipped);
  EXPECT_EQ(v[1].reason, "low_content");
  EXPECT_TRUE(v[1].replayed);
  EXPECT_EQ(v[2].status, Status::kDuplicate);
  EXPECT_FALSE(v[2].replayed);
  EXPECT_EQ(index->applied_offset("pages/0").value(), 13);
  EXPECT_EQ(index->stats().documents, 4u);  // a, b, z, c: b2 was never applied
}

TEST(Index, TrimPendingDropsVerdictsBelowTheCommittedOffset) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  std::vector<IndexItem> items;
  for (int i = 0; i < 100; ++i) {
    items.push_back(at(page(numbered("p", i), std::mt19937_64(i)()), "t/0", i));
    items.push_back(at(page(numbered("q", i), std::mt19937_64(i + 1000)()), "t/1", i));
  }
  apply_or_die(*index, items);
  EXPECT_EQ(index->stats().pending_verdicts, 200u);
  ASSERT_TRUE(index->trim_pending("t/0", 60).has_value());
  EXPECT_EQ(index->stats().pending_verdicts, 140u);
  ASSERT_TRUE(index->trim_pending("t/0", 60).has_value());
  EXPECT_EQ(index->stats().pending_verdicts, 140u);
  ASSERT_TRUE(index->trim_pending("t/1", 1000).has_value());
  EXPECT_EQ(index->stats().pending_verdicts, 40u);
  // Offsets above the trim point still replay.
  auto v = apply_or_die(*index, {at(page("other", 1), "t/0", 70)});
  EXPECT_TRUE(v[0].replayed);
  EXPECT_EQ(index->applied_offset("t/0").value(), 99);
}

TEST(Index, SchemesAreIsolated) {
  TempDir dir;
  auto config = store_config(dir.path());
  {
    auto index = open_or_die(config);
    auto v = apply_or_die(
        *index, {page("a", kA, "s-one"), page("b", kA, "s-two"), page("c", kA ^ 1, "s-two")});
    EXPECT_EQ(v[1].status, Status::kUnique);
    EXPECT_EQ(v[2].matched, "b");
  }
  auto index = open_or_die(config);
  auto v = apply_or_die(*index, {page("d", kA ^ 1, "s-one")});
  EXPECT_EQ(v[0].matched, "a");
  auto stats = index->stats();
  ASSERT_EQ(stats.schemes.size(), 2u);
  EXPECT_EQ(stats.schemes[0].id, "s-one");
  EXPECT_EQ(stats.schemes[1].id, "s-two");
  EXPECT_EQ(stats.schemes[0].bands, 0u);
}

// ---- The second signature ----

constexpr std::uint32_t kBands = 42, kRows = 3;
constexpr double kThreshold = 0.45;

Sketch random_sketch(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Sketch s(128);
  for (auto& v : s) v = static_cast<std::uint16_t>(rng());
  return s;
}

// A copy of `from` whose values at positions i % period == 0 are replaced (a partial copy).
Sketch changed(Sketch from, std::size_t period, std::uint16_t salt = 1) {
  for (std::size_t i = 0; i < from.size(); i += period) from[i] ^= static_cast<std::uint16_t>(salt | 0x100);
  return from;
}

IndexItem sketched(std::string id, std::uint64_t fp, Sketch sketch, std::string scheme = "s-mh") {
  return testing::sketched(std::move(id), fp, std::move(sketch), kBands, kRows, kThreshold,
                           std::move(scheme));
}

TEST(Index, MinHashFindsACopyThatSimHashMisses) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch original = random_sketch(1);
  // A quarter of the values differ (estimated J 3/4) and the fingerprints are far apart.
  auto v = apply_or_die(*index, {sketched("a", kA, original), sketched("b", ~kA, changed(original, 4)),
                                 sketched("c", kA ^ 0xff00ff, random_sketch(2))});
  EXPECT_EQ(v[0].status, Status::kUnique);
  ASSERT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_EQ(v[1].matched, "a");
  EXPECT_EQ(v[1].duplicate_of, "a");
  EXPECT_EQ(v[1].method, Verdict::kMinHash);
  EXPECT_NEAR(v[1].similarity, 96.0 / 128, 0.0001);
  EXPECT_EQ(v[1].distance, 64);
  EXPECT_GE(v[1].candidates, 1u);
  EXPECT_EQ(v[2].status, Status::kUnique);
}

TEST(Index, BothSignaturesAgreeingSayBothAndSimHashChoosesTheMatch) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch s = random_sketch(3);
  auto v = apply_or_die(*index, {sketched("a", kA, s), sketched("b", kA ^ 1, s),
                                 // SimHash points at b (1 bit); MinHash at a and b alike.
                                 sketched("c", kA ^ 0b11, changed(s, 4))});
  EXPECT_EQ(v[1].method, Verdict::kBoth);
  EXPECT_DOUBLE_EQ(v[1].similarity, 1.0);
  EXPECT_EQ(v[2].method, Verdict::kBoth);
  EXPECT_EQ(v[2].matched, "b");  // the SimHash match, the nearest
  EXPECT_EQ(v[2].duplicate_of, "a");
  EXPECT_EQ(v[2].distance, 1);
  EXPECT_NEAR(v[2].similarity, 96.0 / 128, 0.0001);
}

TEST(Index, WithASimHashMatchTheSimilarityIsTheMatchsEvenWhenAnEarlierPageMatchesByMinHash) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch s = random_sketch(4);
  // a: far in SimHash, a MinHash match of c at 7/8; b: c's SimHash match (1 bit), the same sketch.
  auto v = apply_or_die(
      *index, {sketched("a", ~kA, changed(s, 8)), sketched("b", kA ^ 1, s), sketched("c", kA, s)});
  EXPECT_EQ(v[2].method, Verdict::kBoth);
  EXPECT_EQ(v[2].matched, "b");
  EXPECT_EQ(v[2].distance, 1);
  EXPECT_DOUBLE_EQ(v[2].similarity, 1.0);  // b's, not a's
}

TEST(Index, BelowTheThresholdOrWithoutASharedBandIsUnique) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch s = random_sketch(4);
  // Every second value changed: J 1/2, but no three consecutive values agree, so no band.
  auto no_band = apply_or_die(*index, {sketched("a", kA, s), sketched("b", ~kA, changed(s, 2))});
  EXPECT_EQ(no_band[1].status, Status::kUnique);
  // Shares bands but J 0.40 < 0.45.
  Sketch low = s;
  for (std::size_t i = 0; i < low.size(); ++i) {
    if (i % 5 < 3) low[i] ^= 0x155;
  }
  auto below = apply_or_die(*index, {sketched("c", kA ^ 0xf0f0f0f0, low)});
  EXPECT_EQ(below[0].status, Status::kUnique);
}

TEST(Index, MostSimilarMatchWinsAndTiesGoToTheEarliest) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch s = random_sketch(5);
  auto v = apply_or_die(*index, {sketched("far", kA, changed(s, 4, 7)),
                                 sketched("near1", kA * 3, changed(s, 16, 9)),
                                 sketched("near2", kA * 5, changed(s, 16, 11)),
                                 sketched("q", kA * 7, s)});
  ASSERT_EQ(v[1].status, Status::kDuplicate);  // near1 matches far
  EXPECT_EQ(v[3].method, Verdict::kMinHash);
  EXPECT_EQ(v[3].matched, "near1");
}

TEST(Index, MinHashVerdictsPersistReplayAndStayInTheirScheme) {
  TempDir dir;
  auto config = store_config(dir.path());
  const Sketch s = random_sketch(6);
  std::vector<Verdict> first;
  {
    auto index = open_or_die(config, {.delta_entries = 256});
    // Enough pages that the band column merges into runs before and after "a".
    std::vector<IndexItem> items;
    for (int i = 0; i < 300; ++i) items.push_back(sketched(numbered("x", i), kA * (i + 7), random_sketch(100 + i)));
    apply_or_die(*index, items);
    first = apply_or_die(*index, {at(sketched("a", kA, s), "p/0", 1),
                                  at(sketched("b", ~kA, changed(s, 4)), "p/0", 2)});
    EXPECT_EQ(first[1].method, Verdict::kMinHash);
    EXPECT_GT(index->stats().runs, 0u);
  }
  auto index = open_or_die(config, {.delta_entries = 256});
  // The same offsets replay the stored verdicts, whatever they carry now.
  auto replay = apply_or_die(*index, {at(sketched("a", kA, s), "p/0", 1),
                                      at(sketched("b", 5, random_sketch(9)), "p/0", 2)});
  EXPECT_TRUE(replay[1].replayed);
  EXPECT_EQ(replay[1].method, first[1].method);
  EXPECT_EQ(replay[1].similarity, first[1].similarity);
  EXPECT_EQ(replay[1].matched, "a");
  // The same id and signatures again (no offset): the first verdict.
  auto again = apply_or_die(*index, {sketched("b", ~kA, changed(s, 4))});
  EXPECT_TRUE(again[0].replayed);
  EXPECT_EQ(again[0].method, Verdict::kMinHash);
  EXPECT_EQ(again[0].similarity, first[1].similarity);
  // The band entries were rebuilt from the sketches at open: a new copy is found...
  auto copy = apply_or_die(*index, {sketched("c", 77, changed(s, 8))});
  EXPECT_EQ(copy[0].method, Verdict::kMinHash);
  EXPECT_EQ(copy[0].duplicate_of, "a");
  // ...but never in another scheme.
  auto other = apply_or_die(*index, {sketched("d", 78, s, "s-other")});
  EXPECT_EQ(other[0].status, Status::kUnique);
  auto stats = index->stats();
  ASSERT_EQ(stats.schemes.size(), 2u);
  EXPECT_EQ(stats.schemes[0].hashes, 128u);
  EXPECT_EQ(stats.schemes[0].bands, kBands);
  EXPECT_EQ(stats.schemes[0].rows, kRows);
}

TEST(Index, ASketchThatDoesNotFitItsSchemeIsADeadLetterAndTheBatchGoesOn) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  apply_or_die(*index, {sketched("a", kA, random_sketch(1))});
  Sketch shorter = random_sketch(2);
  shorter.resize(64);
  Sketch five(5, 7);
  auto v = apply_or_die(
      *index,
      {at(testing::sketched("b", kA, shorter, 21, 3, kThreshold, "s-mh"), "p/0", 1),
       at(testing::sketched("x", kA, five, kBands, kRows, kThreshold, "s-mh"), "p/0", 2),
       at(page("c", kA, "s-mh"), "p/0", 3), at(sketched("d", kA ^ 1, random_sketch(1)), "p/0", 4)});
  ASSERT_EQ(v.size(), 4u);
  for (int i : {0, 1, 2}) {
    EXPECT_EQ(v[i].status, Status::kDeadLetter) << i;
    EXPECT_EQ(v[i].reason, "invalid_index_item") << i;
  }
  EXPECT_NE(v[0].detail.find("scheme s-mh stores 128-value sketches in 42 x 3 bands"),
            std::string::npos)
      << v[0].detail;
  EXPECT_NE(v[1].detail.find("a sketch of 5 values cannot hold 42 bands of 3 rows"),
            std::string::npos)
      << v[1].detail;
  EXPECT_EQ(v[3].status, Status::kDuplicate);
  EXPECT_EQ(v[3].matched, "a");
  // Replayed, a dead letter stays one.
  auto again = apply_or_die(*index, {at(page("c", kA, "s-mh"), "p/0", 3)});
  EXPECT_EQ(again[0].status, Status::kDeadLetter);
  EXPECT_TRUE(again[0].replayed);
}

TEST(Index, OnAnEmptyStoreAMalformedFirstPageDoesNotDefineItsScheme) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  Sketch five(5, 7);
  auto v =
      apply_or_die(*index, {testing::sketched("x", kA, five, kBands, kRows, kThreshold, "s-mh"),
                            sketched("a", kA, random_sketch(1))});
  EXPECT_EQ(v[0].status, Status::kDeadLetter);
  EXPECT_EQ(v[1].status, Status::kUnique);
  auto stats = index->stats();
  ASSERT_EQ(stats.schemes.size(), 1u);
  EXPECT_EQ(stats.schemes[0].hashes, 128u);
}

TEST(Index, AnAppliedOffsetNamedByAnotherRecordNeverGivesItTheStoredVerdict) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  auto with_digest = [](IndexItem item, std::int64_t offset, std::uint64_t digest) {
    item = at(std::move(item), "pages/0", offset);
    item.source->digest = digest;
    return item;
  };
  // A record claims offset 7 before the one that is really there.
  auto first = apply_or_die(*index, {with_digest(page("forged", ~kA), 7, 111)});
  EXPECT_EQ(first[0].status, Status::kUnique);
  auto real = apply_or_die(*index, {with_digest(page("real7", kA), 7, 222)});
  EXPECT_EQ(real[0].status, Status::kUnique);
  EXPECT_FALSE(real[0].replayed);
  EXPECT_TRUE(real[0].offset_conflict);
  // It was stored: a copy of it is its duplicate.
  auto copy = apply_or_die(*index, {with_digest(page("copy", kA ^ 1), 8, 333)});
  EXPECT_EQ(copy[0].status, Status::kDuplicate);
  EXPECT_EQ(copy[0].matched, "real7");
  // The record the offset was applied with still gets its verdict back.
  auto replay = apply_or_die(*index, {with_digest(page("forged", ~kA), 7, 111)});
  EXPECT_TRUE(replay[0].replayed);
  EXPECT_FALSE(replay[0].offset_conflict);
  // So does the real record when replayed: by its id, the verdict it got.
  auto real_again = apply_or_die(*index, {with_digest(page("real7", kA), 7, 222)});
  EXPECT_EQ(real_again[0].status, Status::kUnique);
  EXPECT_TRUE(real_again[0].replayed);
  EXPECT_EQ(index->stats().documents, 3u);
}

// ---- Questions to the index ----

TEST(Index, ExactCopiesPastKIndexedCopiesAreStoredWithoutEntriesAndStillMatched) {
  TempDir dir;
  const auto config = store_config(dir.path());
  auto index = open_or_die(config);
  const Sketch sketch = random_sketch(5);
  const std::size_t copies = 2 * kIndexedCopies + 8;
  std::vector<Verdict> v;
  for (std::size_t i = 0; i < copies; ++i) {
    v.push_back(apply_or_die(*index, {sketched(numbered("c", i), kA, sketch)})[0]);
  }
  for (std::size_t i = 1; i < copies; ++i) {
    ASSERT_EQ(v[i].status, Status::kDuplicate) << i;
    EXPECT_EQ(v[i].matched, "c0") << i;
    EXPECT_EQ(v[i].duplicate_of, "c0") << i;
  }
  // Copy i compares the copies indexed before it: their number grows up to kIndexedCopies and
  // then stays.
  EXPECT_LT(v[kIndexedCopies - 1].candidates, v[kIndexedCopies].candidates);
  EXPECT_EQ(v[kIndexedCopies + 1].candidates, v[kIndexedCopies].candidates);
  EXPECT_EQ(v[copies - 1].candidates, v[kIndexedCopies].candidates);
  for (std::size_t i = 0; i < copies; ++i) {
    EXPECT_TRUE(index->find(numbered("c", i))->has_value()) << i;  // every copy is stored
  }

  // Reopened, the deltas are rebuilt from the documents without the unindexed copies' entries.
  index.reset();
  index = open_or_die(config);
  auto reopened = apply_or_die(*index, {sketched("r", kA, sketch)});
  EXPECT_EQ(reopened[0].matched, "c0");
  EXPECT_EQ(reopened[0].candidates, v[kIndexedCopies].candidates);

  // When an indexed copy leaves (its page re-crawled with other content), the next copy is
  // indexed in its place: the count of indexed copies is back at kIndexedCopies.
  apply_or_die(*index, {sketched("c0", ~kA, random_sketch(6))});
  auto next = apply_or_die(*index, {sketched("n", kA, sketch), sketched("after", kA, sketch)});
  EXPECT_EQ(next[0].matched, "c1");
  EXPECT_EQ(next[0].duplicate_of, "c0");  // the cluster keeps its first page's name
  EXPECT_EQ(next[1].matched, "c1");
  // Compared: n and the 15 copies indexed with it, and c0's entries under its old signatures.
  const std::uint32_t per_copy = v[kIndexedCopies].candidates / kIndexedCopies;
  EXPECT_EQ(next[1].candidates, (kIndexedCopies + 1) * per_copy);

  // What the bound changes. With the earliest indexed copies gone, a copy matches the one
  // indexed in their place (n), not the earliest unindexed one (c16): the same cluster.
  std::vector<IndexItem> recrawls;
  for (std::size_t i = 1; i < kIndexedCopies; ++i) {
    recrawls.push_back(sketched(numbered("c", i), ~kA ^ i, random_sketch(100 + i)));
  }
  apply_or_die(*index, recrawls);
  auto m = apply_or_die(*index, {sketched("m", kA, sketch)});
  EXPECT_EQ(m[0].matched, "n");
  EXPECT_EQ(m[0].duplicate_of, "c0");
  // Once every indexed copy has left (n, and m indexed beside it), a copy finds none of the
  // unindexed ones, is unique, and is indexed (the next copy is its duplicate).
  apply_or_die(*index, {sketched("n", ~kA ^ 0xffff, random_sketch(99)),
                        sketched("m", ~kA ^ 0xfffe, random_sketch(98))});
  auto alone = apply_or_die(*index, {sketched("x", kA, sketch), sketched("y", kA, sketch)});
  EXPECT_EQ(alone[0].status, Status::kUnique);
  EXPECT_EQ(alone[1].matched, "x");
}

TEST(Index, FindReportsAStoredPageWithItsClusterAndClustersListTheirMembers) {
  TempDir dir;
  auto config = store_config(dir.path());
  {
    auto index = open_or_die(config);
    apply_or_die(*index, {sketched("a", kA, random_sketch(1)), sketched("b", kA ^ 1, random_sketch(2)),
                          sketched("c", ~kA, random_sketch(3)), sketched("d", kA ^ 3, random_sketch(4))});
    auto b = index->find("b");
    ASSERT_TRUE(b.has_value()) << b.error();
    ASSERT_TRUE(b->has_value());
    EXPECT_EQ((*b)->cluster, "a");
    EXPECT_EQ((*b)->verdict.status, Status::kDuplicate);
    EXPECT_EQ((*b)->verdict.matched, "a");
    EXPECT_EQ((*b)->verdict.method, Verdict::kSimHash);
    EXPECT_EQ((*b)->fingerprint, kA ^ 1);
    EXPECT_EQ((*b)->sketch, random_sketch(2));
    EXPECT_EQ((*b)->scheme, "s-mh");
    EXPECT_FALSE(index->find("nobody")->has_value());
    auto cluster = index->cluster((*b)->cluster_doc);
    ASSERT_TRUE(cluster.has_value()) << cluster.error();
    ASSERT_EQ(cluster->members.size(), 3u);
    EXPECT_EQ(cluster->root, "a");
    EXPECT_EQ(cluster->members[0].id, "a");
    EXPECT_EQ(cluster->members[1].id, "b");
    EXPECT_EQ(cluster->members[2].id, "d");
  }
  // Read-only, as `neardup clusters` opens it: every cluster, in order, sizes filtered.
  auto index = open_or_die(config, {.read_only = true});
  std::vector<std::pair<std::string, std::size_t>> seen;
  auto walked = index->for_each_cluster(1, "", [&](const Cluster& c) {
    seen.emplace_back(c.root, c.members.size());
    return true;
  });
  ASSERT_TRUE(walked.has_value()) << walked.error();
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::size_t>>{{"a", 3}, {"c", 1}}));
  seen.clear();
  ASSERT_TRUE(index->for_each_cluster(2, "s-mh", [&](const Cluster& c) {
    seen.emplace_back(c.root, c.members.size());
    return true;
  }));
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::size_t>>{{"a", 3}}));
  ASSERT_TRUE(index->for_each_cluster(1, "s-other", [&](const Cluster&) {
    ADD_FAILURE() << "no cluster of s-other";
    return true;
  }));
  // Read-only lookups see the stored pages (their deltas are rebuilt from the snapshot).
  auto v = index->lookup(*sketched("q", kA ^ 7, random_sketch(9)).page);
  ASSERT_TRUE(v.has_value()) << v.error();
  EXPECT_EQ(v->status, Status::kDuplicate);
  EXPECT_EQ(v->duplicate_of, "a");
  EXPECT_FALSE(index->apply(std::vector{page("x", 1)}).has_value());
  EXPECT_FALSE(index->forget(std::vector<std::string>{"a"}).has_value());
}

TEST(Index, ForgottenPagesAreNotMatchedFoundOrListedAndTheirIdCanComeBack) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  apply_or_die(*index, {page("a", kA), page("b", kA ^ 1)});
  auto n = index->forget(std::vector<std::string>{"a", "zzz"});
  ASSERT_TRUE(n.has_value()) << n.error();
  EXPECT_EQ(*n, 1u);
  EXPECT_FALSE(index->find("a")->has_value());
  EXPECT_EQ(index->stats().documents, 1u);
  auto v = apply_or_die(*index, {page("c", kA ^ 2)});
  EXPECT_EQ(v[0].matched, "b");       // a is gone
  EXPECT_EQ(v[0].duplicate_of, "a");  // b's cluster is still named by its first page
  auto again = apply_or_die(*index, {page("a", kA)});
  EXPECT_FALSE(again[0].replayed);  // a new page now
  EXPECT_EQ(again[0].matched, "b");
  EXPECT_EQ(index->stats().documents, 3u);
  EXPECT_EQ(index->stats().last_doc, 4u);  // a, b, c and a again: forgotten ones keep their number
}

TEST(Index, PagesPastRetentionAreNotMatchedAndTheirIdIsSeenAnew) {
  TempDir dir;
  auto config = store_config(dir.path());
  config.retention_seconds = 3600;
  std::int64_t now = 1'800'000'000'000;
  auto index = open_or_die(config, {.now_ms = [&] { return now; }});
  IndexItem old = page("a", kA);
  old.page->seen_at_ms = now - 7'200'000;  // first seen two hours ago
  IndexItem fresh = page("b", ~kA);
  fresh.page->seen_at_ms = now;
  apply_or_die(*index, {old, fresh});
  auto v = apply_or_die(*index, {page("c", kA ^ 1), page("d", ~kA ^ 1)});
  EXPECT_EQ(v[0].status, Status::kUnique);  // a is past retention
  EXPECT_EQ(v[1].matched, "b");
  EXPECT_FALSE(index->find("a")->has_value());
  now += 4'000'000;  // b too, now
  EXPECT_FALSE(index->find("b")->has_value());
  IndexItem again = page("b", ~kA);
  again.page->seen_at_ms = now;
  auto seen = apply_or_die(*index, {again});
  EXPECT_FALSE(seen[0].replayed);  // stored again, as a new page
  EXPECT_TRUE(index->find("b")->has_value());
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

TEST(Index, ReaderOnAnotherThreadDoesNotBlockTheWriter) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::uint64_t last_seen = 0;
  bool monotonic = true;
  std::thread reader([&] {
    while (!stop) {
      std::uint64_t documents = index->stats().documents;
      monotonic = monotonic && documents >= last_seen;
      last_seen = documents;
      ++reads;
    }
  });
  for (std::size_t i = 0; i < 20000; i += 1000) apply_or_die(*index, numbered_pages(i, 1000));
  stop = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(index->stats().documents, 20000u);
}

TEST(Index, ALargeClusterIsReadWithoutHoldingUpTheWriter) {
  TempDir dir;
  auto config = store_config(dir.path());
  config.map_size = 1ull << 30;
  auto index = open_or_die(config);
  constexpr std::size_t kCopies = 60000;
  for (std::size_t i = 0; i < kCopies; i += 2000) {
    std::vector<IndexItem> items;
    for (std::size_t j = i; j < i + 2000; ++j) items.push_back(page(numbered("copy", j), kA));
    apply_or_die(*index, items);
  }
  auto root = index->find("copy0");
  ASSERT_TRUE(root.has_value() && root->has_value());
  const std::uint64_t root_doc = (*root)->cluster_doc;

  // Bounded: the first members read whole, all of them counted.
  auto few = index->cluster(root_doc, 10);
  ASSERT_TRUE(few.has_value()) << few.error();
  EXPECT_EQ(few->members.size(), 10u);
  EXPECT_EQ(few->size, kCopies);
  EXPECT_EQ(few->members[3].id, "copy3");

  // A whole walk on another thread: a batch applied meanwhile waits for the probe of the
  // members column at most, not for the members to be read.
  using Clock = std::chrono::steady_clock;
  std::atomic<bool> started{false};
  Clock::duration walk{};
  std::size_t walked = 0;
  std::thread reader([&] {
    const auto start = Clock::now();
    started = true;
    auto all = index->cluster(root_doc);
    walk = Clock::now() - start;
    walked = all ? all->members.size() : 0;
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto apply_start = Clock::now();
  apply_or_die(*index, {page("another", ~kA)});
  const Clock::duration apply = Clock::now() - apply_start;
  reader.join();
  EXPECT_EQ(walked, kCopies);
  EXPECT_LT(apply * 4, walk) << "the batch took " << std::chrono::duration<double>(apply).count()
                             << " s beside a walk of "
                             << std::chrono::duration<double>(walk).count() << " s";
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

TEST(Index, ADroppedSchemeLosesItsColumnsAndStartsAnewWhileOthersKeepMatching) {
  TempDir dir;
  const StoreConfig config = store_config(dir.path() + "/store");
  const OpenOptions options{.delta_entries = 1u << 12};  // small deltas: the columns have runs
  std::mt19937_64 rng(11);
  std::vector<std::uint64_t> a, b;
  auto index = open_or_die(config, options);
  std::vector<Verdict> first_a;
  for (int batch = 0; batch < 10; ++batch) {
    std::vector<IndexItem> items;
    for (int i = 0; i < 500; ++i) {
      a.push_back(rng());
      items.push_back(at(page(numbered("a", a.size() - 1), a.back(), "s-a"), "p0",
                         static_cast<std::int64_t>(a.size() - 1)));
    }
    for (const Verdict& v : apply_or_die(*index, items)) first_a.push_back(v);
    items.clear();
    for (int i = 0; i < 500; ++i) {
      b.push_back(rng());
      items.push_back(page(numbered("b", b.size() - 1), b.back(), "s-b"));
    }
    apply_or_die(*index, items);
  }
  auto has_columns_of = [&](const std::string& number) {
    for (const auto& column : index->stats().columns) {
      if (column.name.starts_with("t/" + number + "/")) return true;
    }
    return false;
  };
  ASSERT_TRUE(has_columns_of("0"));

  auto dropped = index->drop_scheme("s-a");
  ASSERT_TRUE(dropped.has_value()) << dropped.error();
  EXPECT_EQ(dropped->columns, 4u);
  EXPECT_GT(dropped->runs, 0u);
  EXPECT_GT(dropped->entries, 0u);
  EXPECT_FALSE(has_columns_of("0"));
  ASSERT_EQ(index->stats().schemes.size(), 1u);
  EXPECT_EQ(index->stats().schemes[0].id, "s-b");

  auto unknown = index->drop_scheme("s-zzz");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, StoreError::Code::kNotFound);
  EXPECT_NE(unknown.error().message.find("has no scheme s-zzz (its schemes: s-b)"),
            std::string::npos)
      << unknown.error().message;

  // s-b still matches; a page near a stored s-a page is unique (s-a starts anew), and a
  // replayed s-a record still gets its stored verdict.
  auto v = apply_or_die(*index, {page("b-copy", b[10] ^ 1, "s-b"),
                                 page("a-copy", a[10] ^ 1, "s-a"),
                                 at(page("a17", a[17], "s-a"), "p0", 17)});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].status, Status::kDuplicate);
  EXPECT_EQ(v[0].duplicate_of, "b10");
  EXPECT_EQ(v[1].status, Status::kUnique);
  EXPECT_EQ(v[2].status, first_a[17].status);
  EXPECT_EQ(v[2].duplicate_of, first_a[17].duplicate_of);

  // Reopened: the dropped number stays retired; both schemes answer.
  index.reset();
  index = open_or_die(config, options);
  const auto schemes = index->stats().schemes;
  ASSERT_EQ(schemes.size(), 2u);
  EXPECT_EQ(schemes[0].id, "s-b");
  EXPECT_EQ(schemes[1].id, "s-a");
  EXPECT_TRUE(has_columns_of("2"));
  v = apply_or_die(*index, {page("b-copy-2", b[20] ^ 2, "s-b"), page("a-copy-2", a[10] ^ 3, "s-a")});
  EXPECT_EQ(v[0].duplicate_of, "b20");
  EXPECT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_EQ(v[1].duplicate_of, "a-copy");
}

}  // namespace
}  // namespace neardup
