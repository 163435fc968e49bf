#include "store/batch_merges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "store/test_util.h"

namespace neardup {
namespace {

using testing::TempDir;

// A store's environment and catalog opened as the index opens them, with deltas of 256 entries
// (a band column's: 512), and a SimHash scheme "s" of four tables.
class BatchMergesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::store_config(dir_.path(), 3, 4);
    auto env = StoreEnv::open(config_, false);
    ASSERT_TRUE(env.has_value()) << env.error();
    env_ = std::move(*env);
    catalog_ = std::make_unique<Catalog>(config_, OpenOptions{.delta_entries = 256});
    MutexLock lock(catalog_->mutex);
    ASSERT_TRUE(catalog_->create_or_load(*env_).has_value());
    PageRequest page{"first", 1, "s", 3, 0};
    auto added = env_->write(
        [&](const lmdb::Txn& txn) {
          catalog_->mutex.assert_held();
          return catalog_->add_scheme(txn, env_->tables(), "s", page);
        },
        [] {});
    ASSERT_TRUE(added.has_value()) << added.error();
    merges_ = std::make_unique<BatchMerges>(*env_);
  }

  // Documents [from, from + count) with random fingerprints, added to every column's delta as
  // the write path adds a unique page's entries.
  void add_documents(std::uint64_t from, std::uint64_t count) {
    catalog_->mutex.assert_held();
    for (std::uint64_t doc = from; doc < from + count; ++doc) {
      records::DocRecord record;
      record.id = testing::numbered("https://example.com/", doc);
      record.fingerprint = std::mt19937_64(doc)();
      record.cluster = doc;
      catalog_->add_entries(doc, record, {});
      catalog_->next_doc = doc + 1;
    }
  }

  // One batch's merges: the slices written in a transaction that commits (and adopted), or in
  // one that is aborted (and discarded).
  void batch(bool commit) {
    catalog_->mutex.assert_held();
    ++catalog_->batches;
    auto written = env_->write(
        [&](const lmdb::Txn& txn) -> StoreResult<> {
          catalog_->mutex.assert_held();
          for (Column* column : catalog_->all_columns()) {
            if (auto r = lift(column->open_directories(txn, env_->map_generation())); !r) return r;
          }
          if (auto r = merges_->write(*catalog_, txn, 1, 0); !r || commit) return r;
          return store_error(StoreError::Code::kInvalidArgument, "the batch failed");
        },
        [&] { merges_->discard(); });
    ASSERT_EQ(written.has_value(), commit);
    if (commit) merges_->adopt(*catalog_);
  }

  Column& table(std::size_t t) {
    catalog_->mutex.assert_held();
    return *catalog_->scheme("s")->tables[t];
  }

  TempDir dir_;
  StoreConfig config_;
  std::unique_ptr<StoreEnv> env_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<BatchMerges> merges_;
};

TEST_F(BatchMergesTest, FullDeltasMergeIntoRunsAdoptedAfterTheirCommit) {
  MutexLock lock(catalog_->mutex);
  add_documents(1, 300);  // past the 256 entries of every column
  auto running = [&] {
    catalog_->mutex.assert_held();
    return std::ranges::any_of(catalog_->all_columns(), [](Column* c) { return c->merging(); });
  };
  batch(true);
  // Every full delta was frozen for its merge: the entries are in the frozen delta or the runs.
  for (Column* column : catalog_->all_columns()) {
    EXPECT_EQ(column->delta().size(), 0u) << column->name();
    EXPECT_TRUE(column->merging() || column->watermark() == 300) << column->name();
  }
  for (int i = 0; i < 100 && running(); ++i) batch(true);
  EXPECT_FALSE(running());
  for (Column* column : catalog_->all_columns()) {
    EXPECT_EQ(column->watermark(), 300u) << column->name();
    ASSERT_EQ(column->state().runs.size(), 1u) << column->name();
    EXPECT_EQ(column->state().runs[0].entries, 300u) << column->name();
  }
  // The merged ids are in the id filter, which answers for the ids column's runs, and rules out
  // most others.
  auto in_filter = [&](const std::string& prefix, std::uint64_t doc) {
    catalog_->mutex.assert_held();
    return catalog_->id_filter.may_contain(catalog_->id_key(testing::numbered(prefix, doc)));
  };
  int others = 0;
  for (std::uint64_t doc = 1; doc <= 300; ++doc) {
    EXPECT_TRUE(in_filter("https://example.com/", doc)) << doc;
    others += in_filter("https://example.org/", doc);
  }
  EXPECT_LT(others, 30);
}

TEST_F(BatchMergesTest, SlicesOfAFailedBatchAreForgottenAndWrittenAgain) {
  MutexLock lock(catalog_->mutex);
  add_documents(1, 300);
  // The failed batch froze the full deltas, in memory; nothing it wrote stays on disk or in
  // the columns' state.
  batch(false);
  for (Column* column : catalog_->all_columns()) {
    EXPECT_TRUE(column->merging()) << column->name();
    EXPECT_EQ(column->merge_remaining(), 300u) << column->name();
    EXPECT_EQ(column->watermark(), 0u) << column->name();
    EXPECT_TRUE(column->state().runs.empty()) << column->name();
  }
  for (int i = 0; i < 100 && table(0).merging(); ++i) batch(true);
  EXPECT_EQ(table(0).watermark(), 300u);
  ASSERT_EQ(table(0).state().runs.size(), 1u);
  EXPECT_EQ(table(0).state().runs[0].entries, 300u);
}

TEST_F(BatchMergesTest, AnIdleSchemesDeltasAreMergedAndTheOthersWait) {
  MutexLock lock(catalog_->mutex);
  add_documents(1, 10);  // far from full
  batch(true);
  for (Column* column : catalog_->all_columns()) {
    EXPECT_FALSE(column->merging()) << column->name();
  }
  // No page of the scheme for kIdleBatches batches: its tables merge what they hold. `ids` and
  // `members` belong to no scheme and keep their deltas.
  catalog_->batches += kIdleBatches + 1;
  batch(true);
  for (std::size_t t = 0; t < 4; ++t) {
    for (int i = 0; i < 10 && table(t).merging(); ++i) batch(true);
    EXPECT_EQ(table(t).watermark(), 10u) << t;
    EXPECT_EQ(table(t).delta().size(), 0u) << t;
  }
  EXPECT_FALSE(catalog_->ids->merging());
  EXPECT_EQ(catalog_->ids->delta().size(), 10u);
  EXPECT_EQ(catalog_->members->delta().size(), 10u);
}

}  // namespace
}  // namespace neardup
