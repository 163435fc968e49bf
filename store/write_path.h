// The index's write path (Index::apply, index.h): a batch of items looked up and inserted in one
// write transaction (group commit), in order, each page seeing the ones before it; the merges
// of full deltas into sorted runs, a slice per batch inside the same transaction
// (batch_merges.h); the verdicts stored against their source offsets; and, when the transaction
// fails, everything it changed in memory undone, so that the batch can simply be applied again.
//
// Writer thread only, with the catalog's mutex held.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "store/batch_merges.h"
#include "store/catalog.h"
#include "store/docs_table.h"
#include "store/index.h"
#include "store/passages.h"
#include "store/read_path.h"
#include "store/store_env.h"

namespace neardup {

// Whether a page fits the store: its max_distance within the design's k, and a sketch that
// can hold the LSH design it is banded by (`lsh`: Catalog::lsh_design). Otherwise the error says
// why (its message is the dead letter's detail: index.h).
StoreResult<> check_page(const TableDesign& design, const PageRequest& page, LshDesign lsh);
// Whether a page's sketch and the design it is banded by match its scheme's stored design.
StoreResult<> check_sketch_fits(const Scheme& scheme, const PageRequest& page, LshDesign lsh);

class BatchWriter {
 public:
  BatchWriter(StoreEnv& env, Catalog& catalog)
      : env_(env), catalog_(catalog), merges_(env), advice_(!catalog.config.readahead) {}

  // The catalog's mutex, which every call needs held.
  Mutex& mutex() RETURN_CAPABILITY(catalog_.mutex) { return catalog_.mutex; }

  // Index::apply's contract (index.h).
  StoreResult<std::vector<Verdict>> apply(std::span<const IndexItem> items, BatchLearner* learner)
      REQUIRES(catalog_.mutex);

 private:
  // A page's band keys (none when it has no sketch, or one that does not fit `lsh`) and the
  // LSH design they were made for ({0, 0}: not made yet), wide or not (Catalog::wide_bands).
  struct BandKeys {
    LshDesign lsh;
    bool wide = false;
    std::vector<std::uint64_t> keys;
  };
  // What a failed batch restores (the columns' deltas undo to their marks on their own).
  struct Undo {
    std::uint64_t next_doc, documents;
    std::size_t schemes, stored_samples;
  };
  void rollback(const Undo& undo) REQUIRES(catalog_.mutex);

  StoreResult<> apply_batch(const lmdb::Txn& txn, std::span<const IndexItem> items,
                            BatchLearner* learner, std::vector<Verdict>& verdicts)
      REQUIRES(catalog_.mutex);
  // Decides and stores one page; its band keys are made again when they were made for another
  // design than the page gets (its scheme added by an earlier page of the batch).
  StoreResult<Verdict> apply_page(const Documents& docs, const PageRequest& page,
                                  BandKeys& band_keys) REQUIRES(catalog_.mutex);
  void make_band_keys(const PageRequest& page, LshDesign lsh, bool wide, BandKeys& keys)
      REQUIRES(catalog_.mutex);
  // Whether kIndexedCopies live documents of `cluster` are among the SimHash hits (indexed
  // documents within the page's k): then the duplicate is stored unindexed (index.h).
  StoreResult<bool> cluster_well_indexed(const Documents& docs,
                                         const std::vector<std::pair<int, std::uint64_t>>& hits,
                                         std::uint64_t cluster) REQUIRES(catalog_.mutex);
  // The page's passages related through its scheme's passages column (passages.h: relate(),
  // with its own_cluster and before); nothing for a page without passages.
  StoreResult<Related> relate_passages(const Documents& docs, Scheme& scheme,
                                       const PageRequest& page, std::uint64_t own_cluster,
                                       Verdict& verdict,
                                       std::uint64_t before = ~std::uint64_t{0})
      REQUIRES(catalog_.mutex);
  // Starts loading what a page's probe will read, while the pages before it are applied: a
  // step of Column::prefetch for every key of the page.
  void prefetch(const IndexItem& item, const std::vector<std::uint64_t>& band_keys,
                Column::Lookahead step) REQUIRES(catalog_.mutex);

  StoreEnv& env_;
  Catalog& catalog_;
  Prober prober_;
  Candidates candidates_;
  std::vector<BandKeys> keys_;                             // each item's
  BatchMerges merges_;
  std::optional<DocsTable::Appender> appender_;  // the documents of the batch's transaction
  std::vector<std::uint64_t> neighbours_;                  // cluster_well_indexed's scratch
  std::vector<std::pair<std::uint32_t, std::uint64_t>> holders_;  // a page's passage holders
  std::vector<std::uint32_t> passages_added_;  // schemes whose passages column this batch made
  std::int64_t now_ms_ = 0;  // the time of the batch (store.retention)
  // The band records the next page will probe, asked of the kernel a page ahead: with
  // store.readahead false, the setting of a store larger than memory (PageAdvice).
  PageAdvice advice_;
};

}  // namespace neardup
