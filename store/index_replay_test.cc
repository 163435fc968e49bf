// Replayed offsets: stored verdicts, their trims, and records that name another record's offset.
#include "store/index.h"

#include <gtest/gtest.h>

#include <random>

#include "store/records.h"
#include "store/test_util.h"

namespace neardup {
namespace {

// The store tests' helpers (store/test_util.h).
using namespace testing;  // NOLINT(google-build-using-namespace)
using Status = Verdict::Status;

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

// An offset delivered again within its batch gets the verdict it got first, as stored (what a
// later batch would read), marked replayed, and applies nothing.
TEST(Index, AnOffsetSeenAgainInItsBatchGetsTheVerdictItGotFirst) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  IndexItem skipped;
  skipped.decided.status = Status::kSkipped;
  skipped.decided.reason = "low_content";
  auto with_digest = [](IndexItem item, std::uint64_t digest) {
    item.source->digest = digest;
    return item;
  };
  auto v = apply_or_die(*index, {with_digest(at(page("a", kA), "pages/0", 10), 1),
                                 at(page("b", kA ^ 1), "pages/0", 11), at(skipped, "pages/0", 12),
                                 at(page("b", kA ^ 1), "pages/0", 11), at(skipped, "pages/0", 12),
                                 with_digest(at(page("c", kA ^ 3), "pages/0", 10), 2)});
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_FALSE(v[1].replayed);
  EXPECT_EQ(v[3].status, Status::kDuplicate);
  EXPECT_EQ(v[3].matched, "a");
  EXPECT_EQ(v[3].duplicate_of, "a");
  EXPECT_EQ(v[3].distance, 1);
  EXPECT_EQ(v[3].method, v[1].method);
  EXPECT_TRUE(v[3].replayed);
  EXPECT_EQ(v[3].candidates, 0u);  // not stored
  EXPECT_EQ(v[4].status, Status::kSkipped);
  EXPECT_EQ(v[4].reason, "low_content");
  EXPECT_TRUE(v[4].replayed);
  // Offset 10 again with another record: answered afresh, not recorded.
  EXPECT_EQ(v[5].status, Status::kDuplicate);
  EXPECT_FALSE(v[5].replayed);
  EXPECT_TRUE(v[5].offset_conflict);
  EXPECT_EQ(index->stats().documents, 3u);  // a, b, c
  EXPECT_EQ(index->applied_offset("pages/0").value(), 12);
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

}  // namespace
}  // namespace neardup
