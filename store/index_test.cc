// The verdicts: SimHash and MinHash matches, their rules and ties, schemes, exact and near copies.
#include "store/index.h"

#include <gtest/gtest.h>

#include <random>

#include "store/test_util.h"

namespace neardup {
namespace {

// The store tests' helpers (store/test_util.h).
using namespace testing;  // NOLINT(google-build-using-namespace)
using Status = Verdict::Status;

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
  // 96 of 128 values equal, corrected for the 2^-8 chance agreement of stored bits.
  EXPECT_NEAR(v[1].similarity, (96.0 / 128 - 1.0 / 256) / (1 - 1.0 / 256), 0.0001);
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
  EXPECT_NEAR(v[2].similarity, (96.0 / 128 - 1.0 / 256) / (1 - 1.0 / 256), 0.0001);
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

TEST(Index, APageThatLeavesTheDesignToTheStoreGetsItsSchemesOrTheDefault) {
  TempDir dir;
  const Sketch s = random_sketch(3);
  // Every value at a multiple of 3 changed: no band of 42 x 3 is left whole, while bands of
  // 21 x 2 such as values (4, 5) are; two thirds of the values agree.
  const Sketch partial = changed(s, 3);
  auto store_design = [](Index& index, const std::string& scheme) {
    return index.stats().lsh_of(scheme);
  };
  {
    auto index = open_or_die(store_config(dir.path()));
    // A scheme written with 42 x 3 (a store of a build before the store chose) and a new one.
    apply_or_die(*index, {sketched("old", kA, s, "s-old")});
    auto v = apply_or_die(*index, {sketched("new", kA, s, 0, 0, kThreshold, "s-new")});
    EXPECT_EQ(v[0].status, Status::kUnique);
    EXPECT_EQ(store_design(*index, "s-old"), kFormerDefaultLsh);
    EXPECT_EQ(store_design(*index, "s-new"), kDefaultLsh);
  }
  auto index = open_or_die(store_config(dir.path()));  // reopened: the designs are stored
  EXPECT_EQ(store_design(*index, "s-old"), kFormerDefaultLsh);
  EXPECT_EQ(store_design(*index, "s-new"), kDefaultLsh);
  auto v = apply_or_die(*index,
                        {sketched("old part", kA * 3, partial, 0, 0, kThreshold, "s-old"),
                         sketched("new part", kA * 3, partial, 0, 0, kThreshold, "s-new"),
                         sketched("asks 42 x 3", kA * 5, s, kBands, kRows, kThreshold, "s-new")});
  EXPECT_EQ(v[0].status, Status::kUnique);     // banded 42 x 3: no band shared
  EXPECT_EQ(v[1].status, Status::kDuplicate);  // banded 21 x 2
  EXPECT_EQ(v[1].matched, "new");
  EXPECT_EQ(v[1].method, Verdict::kMinHash);
  // A page naming a design its scheme was not stored with is refused, naming both.
  EXPECT_EQ(v[2].status, Status::kDeadLetter);
  EXPECT_NE(v[2].detail.find("scheme s-new stores 128-value sketches in 21 x 2 bands; the page "
                             "has 128 values in 42 x 3"),
            std::string::npos)
      << v[2].detail;
}

TEST(Index, APageLeavingTheDesignToTheStoreGetsTheDesignAnEarlierPageOfItsBatchGaveItsScheme) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch s = random_sketch(4);
  // One batch on an empty store. The first page names 42 x 3, the design an unset one hashes
  // into the scheme id as, so the second page, which leaves the design to the store, is of the
  // same scheme, and the store holds it as 42 x 3 by then. Their fingerprints are far apart:
  // only a band can match them.
  auto v = apply_or_die(*index, {sketched("named", kA, s, kBands, kRows, kThreshold, "s-mixed"),
                                 sketched("left", kA * 3, s, 0, 0, kThreshold, "s-mixed")});
  EXPECT_EQ(v[0].status, Status::kUnique);
  EXPECT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_EQ(v[1].matched, "named");
  EXPECT_EQ(v[1].method, Verdict::kMinHash);
  EXPECT_EQ(index->stats().lsh_of("s-mixed"), kFormerDefaultLsh);
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

TEST(Index, AFirstSeenTimeInTheFutureCountsAsTheTimeItWasStored) {
  TempDir dir;
  auto config = store_config(dir.path());
  config.retention_seconds = 3600;
  std::int64_t now = 1'800'000'000'000;
  auto index = open_or_die(config, {.now_ms = [&] { return now; }});
  IndexItem future = page("future", kA);
  future.page->seen_at_ms = 253402300799000;  // 9999-12-31T23:59:59Z
  apply_or_die(*index, {future});
  auto stored = index->find("future");
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  EXPECT_EQ((*stored)->first_seen_ms, now);
  now += 7'200'000;  // past retention, as a page first seen when it was stored
  EXPECT_FALSE(index->find("future")->has_value());
  auto later = apply_or_die(*index, {page("copy", kA ^ 1)});
  EXPECT_EQ(later[0].status, Status::kUnique);  // no longer the root of a cluster
}

TEST(Index, ANearCopyStormKeepsEachPagesProbeBounded) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  std::mt19937_64 random(3);
  const Sketch base = random_sketch(9);
  std::vector<Verdict> last;
  constexpr std::size_t kCopies = 3000;
  for (std::size_t i = 0; i < kCopies; i += 100) {
    std::vector<IndexItem> items;
    for (std::size_t j = i; j < i + 100; ++j) {
      Sketch sketch = base;
      for (int c = 0; c < 3; ++c)
        sketch[random() % sketch.size()] = static_cast<std::uint16_t>(random());
      items.push_back(sketched(numbered("trap", j), kA ^ (std::uint64_t{1} << (random() % 64)),
                               std::move(sketch)));
    }
    last = apply_or_die(*index, items);
  }
  for (const Verdict& v : last) {
    EXPECT_EQ(v.status, Status::kDuplicate);
    EXPECT_EQ(v.duplicate_of, "trap0");
    // Every copy indexed, a page would compare each table's thousands of near copies and take
    // every one of its bands' documents: the copies beyond kIndexedCopies neighbours of the
    // cluster are stored unindexed, and a band key takes at most kBandCandidates documents.
    EXPECT_LT(v.candidates, 2000u) << v.candidates;
  }
}

}  // namespace
}  // namespace neardup
