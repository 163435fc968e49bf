// The index: "was a page like this one seen before?" for billions of pages.
//
// Two signatures in one LMDB environment (store/FORMAT.md):
// - SimHash: an exact permuted-table index (Manku, Jain, Das Sarma, WWW 2007) finds every
//   stored fingerprint within max_distance bits;
// - MinHash (schemes with the second signature): banded LSH finds the stored pages that share a
//   band with the page's sketch, and each is confirmed by its estimated Jaccard similarity
//   against the stored sketch (common/sketch.h).
// A page is a duplicate when either finds a live stored page. Besides, the documents table
// (id -> signatures, cluster, first-seen time, scheme) and the per-partition offsets and pending
// verdicts the daemon needs for replay. Each column of keys (tables, ids, bands) is an LSM tree
// over LMDB (store/column.h).
// LMDB allows one writer: apply() is called by one thread only; stats() and the queries may
// run on any thread and never hold it up for long (a query waits for the batch being applied,
// probes, and reads what it found without the writer). Knows nothing of Kafka or HTML.
// The parts: store_env.h (the environment and its growth), catalog.h and recovery.cc (what is
// kept in memory, and opening), write_path.h (apply), read_path.h (probes, verdicts, pages and
// clusters), admin.h (stats, trimming, forget, drop-scheme); docs/architecture.md draws them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/sketch.h"
#include "config/config.h"
#include "store/status.h"
#include "store/verdict.h"

namespace neardup {

// Copies of a page, exact or near (within k bits), are found through the entries of each of
// them, so a page copied N times would cost O(N) entries at every probe and the N copies O(N^2):
// crawls hold such clusters by the thousand (soft 404s, login walls, parked domains, mirrors,
// spider traps). Once a duplicate finds kIndexedCopies live indexed documents of its cluster
// within its k bits, it is stored (its document, id and cluster, its verdict) without SimHash
// table and MinHash band entries (DocRecord::kUnindexed): lookups find the indexed neighbours.
// When indexed ones leave (superseded, forgotten, past retention) the count falls and the next
// copy is indexed again. What this changes, only in clusters of more than kIndexedCopies members
// within k of each other, is in docs/index.md, "Exact and near copies"; a band key's documents
// are capped too (read_path.h, kBandCandidates).
inline constexpr std::size_t kIndexedCopies = 16;

// One page as the index is asked about it: its id, its signatures and the thresholds to match
// them at (lookup() and apply()).
struct PageRequest {
  std::string id;
  std::uint64_t fingerprint = 0;
  std::string scheme;              // signatures of different schemes are never compared
  std::uint32_t max_distance = 3;  // live k for this page, <= the design's k
  std::int64_t seen_at_ms = 0;     // first-seen time if this id is new
  // The second signature: empty for a scheme without it. Every page of a scheme has the same
  // sketch length and is banded by the same design: bands x rows, or 0 x 0 to leave it to the
  // store (the scheme's stored design; kDefaultLsh, common/sketch.h, for a new scheme).
  Sketch sketch;
  // Bits 16-31 of the sketch's minima, as long as it, or empty (common/sketch.h): a scheme whose
  // first page carries them bands every page by wide keys (32 bits a value), and refuses a page
  // without them; a scheme stored before, or begun by a page without them, by the sketch alone.
  SketchUpper sketch_upper;
  std::uint32_t bands = 0, rows = 0;
  double min_similarity = 1;  // live threshold on the estimated Jaccard similarity
  // The third signature (containment.enabled; pipeline/passages/passages.h): the text's anchors
  // (sorted, distinct) and tracked paragraphs' hashes (in text order, distinct); both empty for
  // a page without. The scheme id covers how they were made.
  std::vector<std::uint64_t> anchors, paragraphs;
  double min_containment = 1;  // live threshold on the estimated share of a text in another
};

// One record of a batch, in input order.
struct IndexItem {
  // Set for a fingerprinted page; unset for a skipped/dead-lettered record, whose verdict is
  // given in `decided` and only recorded against its offset.
  std::optional<PageRequest> page;
  Verdict decided;  // used when page is unset
  std::optional<SourceOffset> source;
};

// What a scheme learns from the pages it applies (pipeline/learn/finish.h; message/learning.h
// keeps it). apply() hands each page item it decides afresh to finish() before probing it, and
// its verdict to learned() after, in input order, so that every page is finished under what
// the pages before it taught; replayed items are answered from what was stored and neither
// finished nor learned from again. What changed is written by changes() in the batch's own
// transaction (the `learned` table), so that the index and what was learned never part: a
// batch whose transaction is aborted leaves both as they were (undo()).
class BatchLearner {
 public:
  virtual ~BatchLearner() = default;
  // Completes item i's signatures (fingerprint, sketch, anchors, paragraphs) in `page`; false
  // when the item's scheme does not learn (the page is left as it was).
  virtual bool finish(std::size_t item, PageRequest& page) = 0;
  // Item i's verdict, after finish() returned true for it: the learner learns from the page
  // and sets what finishing did (Verdict::fingerprint, boilerplate_lines) before the verdict
  // is stored.
  virtual void learned(std::size_t item, Verdict& verdict) = 0;
  // After the last item: key -> value to put, or nullopt to delete.
  virtual std::vector<std::pair<std::string, std::optional<std::string>>> changes() = 0;
  // The batch's transaction was aborted: forget what this batch's finish() and learned() calls
  // learned, for apply() may run the batch again (a map that grew: StoreEnv::write).
  virtual void undo() = 0;
};

struct IndexStats {
  std::uint32_t design_k = 0, design_r = 0, blocks = 0, tables = 0;
  std::vector<std::uint32_t> block_widths;  // bits per block, most significant first
  std::uint32_t format_version = 0;  // as on disk (a read-only open leaves an older one)
  // The bits of its key a table entry and an `ids` entry keep (store/FORMAT.md, meta key_bits):
  // 64 (the whole key) or its top bits, 40 or more.
  std::uint32_t table_key_bits = 64, id_key_bits = 64;
  std::uint32_t shard = 0, shards = 1;  // the share of the index it holds (StoreConfig::shards)
  struct Scheme {
    std::string id;
    std::uint32_t hashes = 0, bands = 0, rows = 0;  // the LSH design; 0 without MinHash
    bool wide_bands = false;  // band keys of 32 bits a value (records::SchemeState::wide_bands)
    // Bytes its columns hold in memory (deltas) after the last apply() of this process; 0
    // before one and when opened read-only. An idle scheme's (no page for 64 apply() calls)
    // deltas are merged into its runs and freed.
    std::uint64_t memory_bytes = 0;
  };
  std::vector<Scheme> schemes;  // in order of first use
  // Scheme `id`, or nullptr when the store holds no page of it.
  const Scheme* scheme(std::string_view id) const {
    for (const Scheme& s : schemes) {
      if (s.id == id) return &s;
    }
    return nullptr;
  }
  // The LSH design of scheme `id` ({0, 0} for one it does not hold, or holds without sketches).
  LshDesign lsh_of(std::string_view id) const {
    const Scheme* s = scheme(id);
    return s != nullptr ? LshDesign{s->bands, s->rows} : LshDesign{};
  }
  // Memory of the whole index after the last apply() of this process (0 before one): the
  // deltas of every column (a fixed cost, store/FORMAT.md), and the rest it keeps in memory
  // (band and id filters, run directories), which grows with the store.
  std::uint64_t delta_memory_bytes = 0, index_memory_bytes = 0;
  std::uint64_t merge_filter_memory_bytes = 0;  // of index_memory_bytes: running merges' filters
  std::uint64_t documents = 0;
  // The highest document number given (documents are numbered from 1 in order of storage,
  // superseded and forgotten ones included): how far a walk in that order has gone.
  std::uint64_t last_doc = 0;
  std::uint64_t bytes_on_disk = 0;
  std::uint64_t map_size = 0;
  std::vector<std::pair<std::string, std::int64_t>> applied_offsets;  // partition -> last applied
  std::uint64_t pending_verdicts = 0;
  std::uint64_t runs = 0;  // sorted runs on disk, over all columns (FORMAT.md)
  struct Column {
    std::string name;  // t/<scheme>/<table>, b/<scheme>, ids, members
    std::uint64_t watermark = 0;  // documents up to here are in its runs
    std::uint64_t runs = 0, entries = 0;
  };
  std::vector<Column> columns;
};

// Time spent by apply(), accumulated over calls; item_ns gets one entry per item (lookup and
// insert inside the batch transaction, excluding merges and the commit).
struct ApplyTiming {
  std::vector<std::uint32_t> item_ns;
  std::uint64_t merge_ns = 0;   // merging deltas into runs before the batch
  std::uint64_t band_merge_ns = 0;  // of which the LSH band columns'
  std::uint64_t commit_ns = 0;  // mdb_txn_commit of the batch (fsync when store.sync)
  std::uint64_t merges = 0;
};

struct OpenOptions {
  // Opens an existing store without changing it, beside a process that writes to it: fails if
  // there is none; apply(), trim_pending() and forget() fail. The queries (lookup, find,
  // cluster, for_each_cluster) answer from one snapshot taken at open (an LMDB read
  // transaction held until the Index is destroyed, which keeps the pages it reads from being
  // reused meanwhile); stats() and applied_offset() read the newest state.
  bool read_only = false;
  // Entries a table or ids column keeps in memory before they are merged into its sorted runs
  // on disk (a band column keeps twice as many: a page adds one entry per band). More means
  // fewer, larger merges (less writing) but more memory and a longer rebuild at open. 0: the
  // store's own, StoreConfig::delta_entries (store.delta_entries); tests set fewer.
  std::uint64_t delta_entries = 0;
  // At open, gives the columns that were in use when the store closed their full-size tables at
  // once (Column::presize_if_busy: a process that applies pages for long, such as neardupd,
  // then never grows a table in a batch). Off, every table is sized for what it holds and grows
  // as pages come: a run of few pages over a large store (neardup dedup) opens sooner and in
  // less memory (0.15-0.5 s and 130 MB less for a store of 1.2M pages).
  bool presize_busy_deltas = true;
  // At open, once the rest is read, asks the kernel to read the table columns' runs (every page
  // probes each table; about 20 bytes a page of the store) in large requests
  // (Column::read_runs_ahead), then the high parts of the band runs' keys (what a band probe
  // that passes a run's filter reads first; about 7 bytes a page: Column::read_high_parts_ahead).
  // Otherwise a store whose runs are not in the page cache (after a reboot, or one larger than
  // memory whose open read the band runs last) reads them a fault and a 4 KiB page at a time as
  // pages probe them (store.readahead false). Off for a run of few pages over a large store
  // (neardup dedup), which would read what it never probes.
  bool read_runs_ahead = true;
  // The fewest entries a table run holds for it to get a prefix filter (store.table_filter_bits;
  // Column::filter_prefixes): a filter takes a 2 MiB huge page at least, and smaller runs are a
  // small store's. Tests set fewer, so that their runs have filters.
  std::uint64_t prefix_filter_min_entries = 1 << 20;
  // When set, apply() records where its time goes (benchmarks).
  ApplyTiming* timing = nullptr;
  // The clock of store.retention, ms since the epoch (tests set it; default: the system's).
  std::function<std::int64_t()> now_ms;
};

// A stored page, as the queries report it.
struct StoredPage {
  std::uint64_t doc = 0;  // its document number (order of storage)
  std::string id;
  std::string scheme;
  std::uint64_t fingerprint = 0;
  Sketch sketch;  // empty for a scheme without the second signature
  std::int64_t first_seen_ms = 0;
  std::int64_t stored_at_ms = 0;
  Verdict verdict;  // the verdict it got when stored (unique or duplicate)
  std::string cluster;  // id of the first-seen page of its cluster (its own when unique)
  std::uint64_t cluster_doc = 0;
};

// One cluster: its first-seen page and its live members (the first included while live), in
// order of storage.
struct Cluster {
  std::string root;
  std::uint64_t root_doc = 0;
  std::string scheme;
  std::size_t size = 0;             // live members, all counted
  std::vector<StoredPage> members;  // the first of them (Index::cluster's max_members)
};

class Index {
 public:
  // Opens (creating if needed) the index at config.path. The design comes from config.design_k
  // and config.tables, or else config.expected_documents (TableDesign::for_store) for a new
  // store; with config.tables 0 a store keeps the r it was created with.
  // Errors: kNotFound (read-only, no store), kFormat (a store of another format version: both
  // versions named), kDesign (a store of another design: both named), kCorrupt, kLmdb.
  static StoreResult<std::unique_ptr<Index>> open(const StoreConfig& config,
                                                   const OpenOptions& options = {});
  virtual ~Index() = default;

  // Looks up and inserts a batch in one write transaction (group commit), in order: a later
  // item sees the earlier ones. For items with a source at or below the partition's applied
  // offset, the verdict stored for that offset is returned (replayed = true) and nothing is
  // applied again, when it was stored for the same record (SourceOffset::digest); a different
  // record at an applied offset is applied as new, not recorded, with offset_conflict set.
  // An item the store cannot take (a page's max_distance above the design's k, a sketch that
  // does not fit its scheme's LSH design) gets a kDeadLetter verdict "invalid_index_item" with
  // the reason in `detail`: one item never fails a batch. Returns one verdict per item. On
  // failure nothing of the batch is committed. Errors: kReadOnly, kFull (the map reached
  // store.max_map_size after growing and retrying), kCorrupt, kLmdb.
  // With a learner (below), the pages it learns from are finished and learned from in order.
  virtual StoreResult<std::vector<Verdict>> apply(std::span<const IndexItem> items,
                                                  BatchLearner* learner) = 0;
  StoreResult<std::vector<Verdict>> apply(std::span<const IndexItem> items) {
    return apply(items, nullptr);
  }

  // Every record of the `learned` table (FORMAT.md) whose key starts with `prefix`, in key
  // order, from a read transaction: what BatchLearner::changes() wrote. Errors: LMDB's.
  virtual StoreResult<std::vector<std::pair<std::string, std::string>>> learned(
      std::string_view prefix) = 0;

  // Last applied offset of a partition, if any (nullopt: none applied). Errors: kCorrupt, LMDB's
  // (a read transaction that cannot begin).
  virtual StoreResult<std::optional<std::int64_t>> applied_offset(const std::string& partition) = 0;

  // Drops stored verdicts of offsets < committed_offset for a partition (they are acknowledged).
  // Serialized with apply(); any thread.
  virtual StoreResult<> trim_pending(const std::string& partition,
                                     std::int64_t committed_offset) = 0;

  // Counts and sizes from a read transaction; safe on any thread, never blocks apply(). Fields
  // that could not be read are left at zero.
  virtual IndexStats stats() = 0;

  // The verdict apply() would give the page now, without inserting anything (and without
  // recognising the page's own id: a stored copy of it is a match like any other). Waits for
  // the batch being applied to probe. Errors: kInvalidArgument (the page does not fit the store:
  // apply() would dead-letter it), kCorrupt, kLmdb.
  virtual StoreResult<Verdict> lookup(const PageRequest& page) = 0;

  // The live page stored under an id (not superseded by a re-crawl, forgotten or past
  // store.retention), if any.
  virtual StoreResult<std::optional<StoredPage>> find(const std::string& id) = 0;

  // The cluster whose first-seen page is document root_doc, with its first max_members live
  // members read whole (and all of them counted). The members are read from a transaction of
  // the query's own, without holding up apply(): however large the cluster, a batch waits at
  // most for the probe of the members column. Errors: kInvalidArgument when no such document
  // exists.
  virtual StoreResult<Cluster> cluster(std::uint64_t root_doc,
                                       std::size_t max_members = SIZE_MAX) = 0;

  // Calls fn for every cluster with at least min_size live members (of `scheme` only, when not
  // empty), in order of their first-seen pages. Streams: memory stays bounded by the members
  // column's in-memory part and the largest cluster. fn returns false to stop.
  virtual StoreResult<> for_each_cluster(std::size_t min_size, const std::string& scheme,
                                         const std::function<bool(const Cluster&)>& fn) = 0;

  // Forgets the live pages stored under these ids: they are no longer matched or found, and
  // merges drop their index entries. Returns how many ids had a live page. Errors: kReadOnly and
  // those of apply().
  virtual StoreResult<std::size_t> forget(std::span<const std::string> ids) = 0;

  // Drops a retired scheme: its columns (tables and bands: every run and its meta state) and
  // what it learned from the crawl (the `learned` table's records) are deleted in one write
  // transaction, so its pages can no longer be matched and the space is
  // reused; the pages themselves (ids, stored verdicts, clusters) stay. A page of that scheme
  // applied later starts it anew, empty. kNotFound for a scheme the store does not have,
  // kReadOnly when opened read-only. Returns what was dropped.
  struct DroppedScheme {
    std::size_t columns = 0, runs = 0;
    std::uint64_t entries = 0;
  };
  virtual StoreResult<DroppedScheme> drop_scheme(const std::string& scheme) = 0;
};

}  // namespace neardup
