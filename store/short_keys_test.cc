// Table and `ids` entries that keep the top bits of their keys (formats 11 and 12,
// RunFormat::keeping): how many bits a store keeps, and that what they let through is confirmed
// against the document (its fingerprint, its id), in the deltas and in the runs alike.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <random>

#include "store/index.h"
#include "store/lmdb.h"
#include "store/records.h"
#include "store/test_util.h"

namespace neardup {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using Status = Verdict::Status;

// Small deltas, so that a few hundred pages make runs of every column.
OpenOptions small_deltas() {
  OpenOptions options;
  options.delta_entries = 64;
  return options;
}

// n pages of random fingerprints (none within 3 bits of kA or of each other, but by chance),
// applied in batches of 10, so that the merges they start run.
void apply_fillers(Index& index, const std::string& prefix, std::size_t n) {
  std::mt19937_64 rng(std::hash<std::string>()(prefix));
  for (std::size_t i = 0; i < n; i += 10) {
    std::vector<IndexItem> batch;
    for (std::size_t j = i; j < i + 10; ++j)
      batch.push_back(page(prefix + std::to_string(j), rng()));
    apply_or_die(index, batch);
  }
}

std::uint64_t table_runs(Index& index) {
  std::uint64_t runs = 0;
  for (const auto& column : index.stats().columns) {
    if (column.name.starts_with("t/") || column.name == "ids") runs += column.runs;
  }
  return runs;
}

TEST(ShortKeys, ANewStoreKeepsItsWidestPrefixAndTheBitsItsBucketsNeedOfATableKey) {
  struct Case {
    std::uint32_t k, tables, table_bits;
  };
  // Prefixes of 16 bits (k = 3, 4 tables), 12-13 (k = 4, 5 tables), 21-22 (k = 2, 3 tables) and
  // 25-26 (k = 3, 10 tables) at the tests' expected 1M pages: a table keeps 40, 42 (29 bits
  // hold 5 tables' buckets of 244 under a tenth of a false candidate within 4 bits), 46 and 50
  // bits. `ids` keeps 40 in every store.
  for (const Case& c : {Case{3, 4, 40}, Case{4, 5, 42}, Case{2, 3, 46}, Case{3, 10, 50}}) {
    TempDir dir;
    auto index = open_or_die(store_config(dir.path(), c.k, c.tables));
    ASSERT_NE(index, nullptr);
    EXPECT_EQ(index->stats().table_key_bits, c.table_bits) << c.k << " " << c.tables;
    EXPECT_EQ(index->stats().id_key_bits, 40u);
  }
}

// A table keeps the top bits of its permuted key, and drops the low 24 (four tables of 16-bit
// blocks, k = 3) or 14 (ten tables of 12- and 13-bit blocks): in either design the tables whose
// key ends in the fingerprint's last block drop its low 4 bits. A page 4 bits away in its low
// 4 bits is then within 0 of the kept bits of those tables: a candidate that the stored
// fingerprint turns down.
constexpr std::uint64_t kFar = kA ^ 0xF;            // 4 bits from kA, all dropped by some tables
constexpr std::uint64_t kNear = kA ^ (1ull << 63);  // 1 bit from kA, kept by every table

void expect_confirmed_by_fingerprint(Index& index) {
  auto far_only = index.lookup(*page("q", kA).page);
  ASSERT_TRUE(far_only.has_value()) << far_only.error();
  EXPECT_EQ(far_only->status, Status::kUnique);
  EXPECT_GE(far_only->candidates, 1u);  // the far page was compared, and turned down
}

TEST(ShortKeys, AStoredPageEqualInTheKeptBitsButFartherThanKIsNotADuplicate) {
  for (const auto& [tables, kept] : {std::pair{4u, 40u}, std::pair{10u, 50u}}) {
    SCOPED_TRACE(std::to_string(tables) + " tables");
    TempDir dir;
    auto index = open_or_die(store_config(dir.path(), 3, tables), small_deltas());
    ASSERT_NE(index, nullptr);
    ASSERT_EQ(index->stats().table_key_bits, kept);
    apply_or_die(*index, {page("far", kFar)});
    expect_confirmed_by_fingerprint(*index);  // in the deltas
    apply_fillers(*index, "f", 400);
    EXPECT_GT(table_runs(*index), 0u);
    expect_confirmed_by_fingerprint(*index);  // in the runs
    index.reset();
    index = open_or_die(store_config(dir.path(), 3, tables), small_deltas());
    ASSERT_NE(index, nullptr);
    expect_confirmed_by_fingerprint(*index);  // reopened

    // A near page stored after the far one is the match, though the far one's kept bits are
    // nearer and its document number lower: in the deltas, then in the runs.
    apply_or_die(*index, {page("near", kNear)});
    for (int round = 0; round < 2; ++round) {
      auto v = index->lookup(*page("q", kA).page);
      ASSERT_TRUE(v.has_value()) << v.error();
      EXPECT_EQ(v->status, Status::kDuplicate);
      EXPECT_EQ(v->matched, "near");
      EXPECT_EQ(v->distance, 1);
      apply_fillers(*index, "g", 400);
    }
  }
}

TEST(ShortKeys, IdsWhoseHashesShareTheirTopFortyBitsAreDifferentPages) {
  const std::string a = "https://www.example.com/id/300385",
                    b = "https://www.example.com/id/1172354";
  const std::uint64_t ha = XXH3_64bits(a.data(), a.size()), hb = XXH3_64bits(b.data(), b.size());
  ASSERT_NE(ha, hb);
  ASSERT_EQ(ha >> 24, hb >> 24);  // the ids column keeps the same key for both
  TempDir dir;
  auto index = open_or_die(store_config(dir.path(), 3, 4), small_deltas());
  ASSERT_NE(index, nullptr);
  ASSERT_EQ(index->stats().id_key_bits, 40u);
  auto check = [&] {
    auto found_a = index->find(a);
    auto found_b = index->find(b);
    ASSERT_TRUE(found_a.has_value() && found_b.has_value());
    ASSERT_TRUE(found_a->has_value() && found_b->has_value());
    EXPECT_EQ((*found_a)->id, a);
    EXPECT_EQ((*found_b)->id, b);
    EXPECT_NE((*found_a)->doc, (*found_b)->doc);
  };
  auto first = apply_or_die(*index, {page(a, kA), page(b, ~kA)});
  EXPECT_EQ(first[1].status, Status::kUnique);  // not a re-fetch of a
  EXPECT_FALSE(first[1].replayed);
  check();
  apply_fillers(*index, "f", 400);  // into the runs
  EXPECT_GT(table_runs(*index), 0u);
  check();
  // Each fetched again with its fingerprint: its own first verdict, replayed.
  auto again = apply_or_die(*index, {page(b, ~kA), page(a, kA)});
  EXPECT_TRUE(again[0].replayed);
  EXPECT_EQ(again[0].status, Status::kUnique);
  EXPECT_TRUE(again[1].replayed);
  EXPECT_EQ(index->stats().documents, 402u);
}

TEST(ShortKeys, AStoreWithoutOrWithBadKeyBitsIsReportedDamagedNotMisread) {
  for (const std::string& bad : {std::string(), records::KeyBits{.tables = 39}.encode(),
                                 records::KeyBits{.ids = 65}.encode()}) {
    TempDir dir;
    auto config = store_config(dir.path(), 3, 4);
    {
      auto index = open_or_die(config);
      apply_or_die(*index, {page("a", kA)});
    }
    {
      auto env = lmdb::Env::open(dir.path(), {});
      auto txn = lmdb::Txn::begin(*env, 0);
      auto meta = lmdb::Dbi::open(*txn, "meta", 0);
      ASSERT_TRUE(bad.empty() ? meta->del(*txn, "key_bits") : meta->put(*txn, "key_bits", bad));
      ASSERT_TRUE(txn->commit());
    }
    expect_refused_as_damaged(config, "key_bits");
  }
}

}  // namespace
}  // namespace neardup
