// The merges of a batch (write_path.h): the columns whose deltas are full begin their merges,
// and every running merge writes its next slice (column.h) in the batch's own write
// transaction, as much as merge_schedule.h gives it. Once the transaction commits the slices
// become current (adopt); when it fails they are forgotten (discard) and written again with the
// batch.
//
//   BatchMerges merges(env);
//   env.write([&](const lmdb::Txn& txn) {                    // the batch's transaction
//     ... open every column's directories in txn ...
//     return merges.write(catalog, txn, pages, now_ms);      // then the pages
//   }, [&] { merges.discard(); });
//   merges.adopt(catalog);
//
// Writer thread only, with the catalog's mutex held (a batch's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "store/catalog.h"
#include "store/column.h"
#include "store/store_env.h"

namespace neardup {

// A scheme that has stored no page for this many batches is idle: its deltas are merged into
// its runs, a slice of at least kIdleMergeBudget entries a batch, and so freed. Its pages are
// still found (in the runs); a page of it starts a new, small delta.
inline constexpr std::uint64_t kIdleBatches = 64;
inline constexpr std::uint64_t kIdleMergeBudget = 1u << 18;
// A band column's new union filter (Column::build_union) reads this many run entries a batch per
// entry the batch adds: a rebuild over N entries ends within N / 4 entries added, while the
// union it replaces (sized for twice its runs' entries) still has room.
inline constexpr std::uint64_t kUnionBuildPerAdd = 4;
// About the keys a page adds to a passages column, for sizing merge slices (anchors and
// paragraphs of a unique page: pipeline/passages/MEASUREMENTS.md).
inline constexpr std::uint64_t kPassageKeysPerPage = 64;

// Deletes from sketch_highs the high bits of scheme `scheme`'s documents up to `through`
// (their band keys are in the band column's runs now). Errors: LMDB's.
StoreResult<> trim_sketch_highs(const lmdb::Txn& txn, const StoreTables& tables,
                                std::uint32_t scheme, std::uint64_t through);
// The same for passage_log (the keys of the documents up to `through` are in the passages
// column's runs now).
StoreResult<> trim_passage_log(const lmdb::Txn& txn, const StoreTables& tables,
                               std::uint32_t scheme, std::uint64_t through);

class BatchMerges {
 public:
  explicit BatchMerges(StoreEnv& env) : env_(env) {}

  // Starts the merge of every full delta (and of an idle scheme's delta) and writes the next
  // slices of the running merges in txn, for a batch of `batch_pages` pages at `now_ms` (which
  // store.retention's cut-off is taken from): each merge must end before its column's new
  // delta is half full (a delta already full again finishes its merge now), and the batch's
  // share of them all is spent earliest deadline first, one merge after another. A band or
  // passages merge that ends trims what its runs now hold from sketch_highs or passage_log.
  // Every column's directories must be current in txn. Errors: LMDB's, naming the column.
  StoreResult<> write(Catalog& catalog, const lmdb::Txn& txn, std::size_t batch_pages,
                      std::int64_t now_ms) REQUIRES(catalog.mutex);
  // After the transaction committed: the slices become current; a finished merge's delta is
  // recycled, and the ids it merged go into the id filter.
  void adopt(Catalog& catalog) REQUIRES(catalog.mutex);
  // The transaction failed: the slices are forgotten (write() writes them again).
  void discard();

 private:
  // Every column with the entries one page adds to it (bands per page for a band column), and
  // whether it belongs to an idle scheme (kIdleBatches).
  static std::vector<std::tuple<Column*, std::uint64_t, bool>> columns_and_rates(Catalog& catalog)
      REQUIRES(catalog.mutex);
  // The number of the scheme whose narrow column this is, and whether it is its band column
  // (else its passages column).
  static std::pair<std::uint32_t, bool> narrow_scheme(Catalog& catalog, const Column* column)
      REQUIRES(catalog.mutex);
  // The merged ids are in the runs now: the filter must report their hashes.
  void add_to_id_filter(Catalog& catalog, const Delta& merged) REQUIRES(catalog.mutex);

  StoreEnv& env_;
  std::vector<std::pair<Column*, Column::Slice>> slices_;  // written, not yet committed
};

}  // namespace neardup
