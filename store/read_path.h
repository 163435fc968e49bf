// The index's read path: what a page's probes find in the columns, the verdict they decide, and
// the stored pages and clusters the queries answer with (index.h: lookup, find, cluster).
//
// Two parts with different needs:
// - Prober reads the columns (catalog.h), whose deltas the writer changes: its calls need the
//   catalog's mutex. It collects document numbers, in the caller's transaction.
// - Documents reads documents and sketches from a transaction alone: a query collects its
//   candidates under the mutex and then reads them, however many, without it, so that readers
//   never hold up the writer (a read transaction never blocks LMDB's writer either).
//
//   Candidates found;
//   prober.probe(catalog, scheme, page, band_keys, &id_hash, found);   // mutex held
//   Documents docs(txn, tables, catalog.scheme_names(), retention, now);  // no mutex from here
//   auto verdict = decide(docs, scheme.state, page, found);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/sketch.h"
#include "store/catalog.h"
#include "store/index.h"
#include "store/records.h"
#include "store/run.h"
#include "store/run_probe.h"
#include "store/status.h"
#include "store/store_env.h"

namespace neardup {

// A document's record and its sketch (empty when it has none) by number; the sketch of a scheme
// of `hashes` values holds the low kSketchBits bits of each value, or all 16 (a store of
// version 5 or older: records.h). Errors: LMDB's (MDB_NOTFOUND for a document that does not
// exist), kCorrupt.
StoreResult<records::DocRecord> read_doc(const lmdb::Txn& txn, const StoreTables& tables,
                                         std::uint64_t doc);
// A compact document's sketch is in its record: `record`, when given, receives the record the
// sketch was read from (left empty when it came from the `sketches` table).
StoreResult<Sketch> read_sketch(const lmdb::Txn& txn, const StoreTables& tables, std::uint64_t doc,
                                std::size_t hashes,
                                std::optional<records::DocRecord>* record = nullptr);
// The whole sketch (every bit of each value, from which its band keys are made) of document
// `doc`, whose record the caller has read, past its band column's watermark: its stored values
// joined with their high bits in sketch_highs, and into `upper` (when given) the upper values
// kept there for a scheme of wide band keys (empty for one without). Errors: LMDB's, kCorrupt
// (the high bits are missing).
StoreResult<Sketch> read_whole_sketch(const lmdb::Txn& txn, const StoreTables& tables,
                                      std::uint64_t doc, const records::DocRecord& record,
                                      std::size_t hashes, SketchUpper* upper = nullptr);

// Documents on disk as one transaction sees them, at the time of one request.
class Documents {
 public:
  // `schemes`: the store's schemes by number (Catalog::scheme_names); `now_ms`: the request's
  // time, against which store.retention (`retention_seconds`) decides what is live.
  Documents(const lmdb::Txn& txn, const StoreTables& tables, std::vector<SchemeName> schemes,
            std::uint64_t retention_seconds, std::int64_t now_ms)
      : txn_(txn),
        tables_(tables),
        schemes_(std::move(schemes)),
        retention_seconds_(retention_seconds),
        now_ms_(now_ms) {}

  const lmdb::Txn& txn() const { return txn_; }
  const StoreTables& tables() const { return tables_; }
  StoreResult<records::DocRecord> get(std::uint64_t doc) const {
    return read_doc(txn_, tables_, doc);
  }
  StoreResult<Sketch> sketch(std::uint64_t doc, std::size_t hashes,
                             std::optional<records::DocRecord>* record = nullptr) const {
    return read_sketch(txn_, tables_, doc, hashes, record);
  }
  bool live(const records::DocRecord& record) const {
    return is_live(record, retention_seconds_, now_ms_);
  }
  std::int64_t now_ms() const { return now_ms_; }

  // The verdict a document got when it was stored, replayed.
  StoreResult<Verdict> stored_verdict(const records::DocRecord& record) const;
  // The document stored under `id` among `docs` that is neither superseded nor forgotten (it may
  // be past retention).
  StoreResult<std::optional<std::pair<std::uint64_t, records::DocRecord>>> find_id(
      const std::vector<std::uint64_t>& docs, const std::string& id) const;
  // A stored page; its sketch holds the low kSketchBits bits of each value (what is stored).
  StoreResult<StoredPage> stored_page(std::uint64_t doc, const records::DocRecord& record) const;
  // The cluster of root_doc: its live members among `docs` (sorted, distinct), counted in
  // Cluster::size, the first `max_members` of them read whole into Cluster::members. Errors:
  // kInvalidArgument when no document root_doc exists.
  StoreResult<Cluster> cluster(std::uint64_t root_doc, const std::vector<std::uint64_t>& docs,
                               std::size_t max_members) const;

 private:
  const SchemeName& scheme(std::uint32_t number) const {
    static const SchemeName kNone;
    return number < schemes_.size() ? schemes_[number] : kNone;
  }

  const lmdb::Txn& txn_;
  const StoreTables& tables_;
  const std::vector<SchemeName> schemes_;
  const std::uint64_t retention_seconds_;
  const std::int64_t now_ms_;
};

// What a page's probes found: documents whose id hashes like the page's, (distance, doc) of the
// table entries within k bits, and the documents of the band entries that matched one of the
// page's band keys. decide() fills matched_doc / matched_cluster.
struct Candidates {
  std::vector<std::uint64_t> id_docs;
  std::vector<std::pair<int, std::uint64_t>> hits;
  std::vector<std::uint64_t> band_docs;
  std::uint64_t checked = 0;  // table and band entries compared with the query
  std::uint32_t capped_bands = 0;  // band probes that took only kBandCandidates documents
  std::uint64_t matched_doc = 0, matched_cluster = 0;
};

// A band key shared by more documents than this is a near-copy storm's (a spider trap, one page
// under a counter or a clock): a probe takes the first this many of each source (the delta, a
// merge's frozen entries, each run: the earliest stored, in each), so that a page's work stays
// bounded whatever the size of its cluster. A real page's band keys are shared by a few
// documents; capped keys are counted in Candidates::capped_bands.
inline constexpr std::size_t kBandCandidates = 64;

// Probes the catalog's columns, with scratch space reused from call to call. Each call's
// directories must be current in `txn` (Column::open_directories) and the catalog's mutex held.
class Prober {
 public:
  // The ids column (when id_hash is set), the scheme's tables and its bands for one page. All
  // columns' probes are started before any is finished, so that their cache misses overlap.
  void probe(Catalog& catalog, Scheme& scheme, const PageRequest& page,
             const std::vector<std::uint64_t>& band_keys, const std::uint64_t* id_hash,
             Candidates& out) REQUIRES(catalog.mutex);
  // The holders of the page's anchors and paragraph hashes in a passages column (passages.h:
  // Holders), in `out`.
  void holders(Catalog& catalog, Column& passages, const PageRequest& page,
               std::vector<std::pair<std::uint32_t, std::uint64_t>>& out) REQUIRES(catalog.mutex);
  // The documents whose id's key is `id`'s (Catalog::id_key: its XXH3-64, or its top bits):
  // candidates, which the caller confirms against each stored id.
  void ids(Catalog& catalog, const std::string& id, std::vector<std::uint64_t>& out)
      REQUIRES(catalog.mutex);
  // The documents of the cluster whose first document is root_doc, sorted and distinct.
  void members(Catalog& catalog, std::uint64_t root_doc, std::vector<std::uint64_t>& out)
      REQUIRES(catalog.mutex);

  std::vector<std::uint64_t>& distinct_scratch() { return distinct_scratch_; }

 private:
  std::vector<RunProbe> probes_;
  std::vector<std::uint64_t> queries_;           // the permuted key of each table probe
  std::vector<std::uint32_t> probe_keys_;        // holders(): the key index of each run probe
  std::vector<std::uint64_t> distinct_scratch_;  // sort_distinct's table
};

// The verdict for a probed page: the nearest live SimHash hit (ties: the lowest document
// number) and the most similar live MinHash match (ties: the lowest document number); matched
// is the first if any, else the second. `scheme` is the page's scheme's state (its LSH design;
// has_bands: the scheme has a band column). Sets found.matched_doc / matched_cluster.
StoreResult<Verdict> decide(const Documents& docs, const records::SchemeState& scheme,
                            bool has_bands, const PageRequest& page, Candidates& found);

}  // namespace neardup
