// What the index keeps in memory about its store (FORMAT.md): the table design, the schemes
// with their columns (permuted SimHash tables, LSH bands), the ids and members columns, the
// filter over the ids on disk, the forgotten documents, samples of storage times and the
// document counters. Opening loads it and rebuilds its columns' deltas from the documents
// stored since their last merge (recovery.cc); the write path (write_path.h) and the
// administration (admin.h) change it; the read path (read_path.h) probes its columns.
//
// Thread-safety: every member is guarded by `mutex`, the index's writer mutex: a batch, a
// query's probes and an administrative change each hold it (index.cc). Documents on disk are
// read without it (read_path.h, Documents).
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/sketch.h"
#include "store/column.h"
#include "store/index.h"
#include "store/key_filter.h"
#include "store/records.h"
#include "store/store_env.h"
#include "store/table_design.h"

namespace neardup {

// A scheme as a request's documents need it: its id and its sketch length (0 without the
// second signature), by number (Catalog::scheme_names).
struct SchemeName {
  std::string id;
  std::uint32_t hashes = 0;
};

// The columns of one scheme: its permuted tables and, with the second signature, its bands.
struct Scheme {
  std::string id;
  records::SchemeState state;
  std::vector<std::unique_ptr<Column>> tables;
  std::unique_ptr<Column> bands;  // null without MinHash
  // Anchors and paragraph hashes, each held by the first document that had it (store/passages.h);
  // null until the scheme's first page with passages.
  std::unique_ptr<Column> passages;
  std::uint64_t last_batch = 0;   // the apply() that last stored one of its pages
  bool dropped = false;           // drop_scheme(): no columns; its number is not reused
};

// The name of a scheme's passages column (its meta key is "column/" + this).
inline std::string passages_column(std::uint32_t scheme) { return "p/" + std::to_string(scheme); }

// Whether a stored document can still be matched and found: not superseded by a re-crawl, not
// forgotten, and (retention_seconds > 0) first seen at most that long before now_ms.
bool is_live(const records::DocRecord& record, std::uint64_t retention_seconds,
             std::int64_t now_ms);

// Whether the document has table and band entries (not an exact copy stored without them,
// index.h kIndexedCopies).
inline bool is_indexed(const records::DocRecord& record) {
  return (record.flags & records::DocRecord::kUnindexed) == 0;
}

class Catalog {
 public:
  Catalog(const StoreConfig& config, const OpenOptions& options);

  // ---- open (recovery.cc) ----

  // Creates the store's meta state in a new environment or checks and loads an existing one
  // (its format, its design against the config's), then rebuilds the deltas. Errors: kFormat,
  // kDesign, kCorrupt, kInvalidArgument (a design the config cannot make), LMDB's.
  StoreResult<> create_or_load(StoreEnv& env) REQUIRES(mutex);
  // The same for a store opened read-only, from the read transaction it begins in `snapshot`
  // (which the queries keep).
  StoreResult<> load_read_only(StoreEnv& env, lmdb::Txn& snapshot) REQUIRES(mutex);
  // Registers a new scheme (its LSH design: lsh_design(page)) in meta and opens its columns.
  StoreResult<> add_scheme(const lmdb::Txn& txn, const StoreTables& tables, const std::string& name,
                           const PageRequest& page) REQUIRES(mutex);
  // Creates a scheme's passages column (its first page with passages), empty, covering the
  // documents stored so far.
  StoreResult<> add_passages(const lmdb::Txn& txn, const StoreTables& tables, Scheme& scheme)
      REQUIRES(mutex);
  // Fills a new id filter with every hash in the ids column's runs (none without runs).
  StoreResult<> rebuild_id_filter(StoreEnv& env) REQUIRES(mutex);

  // ---- state ----

  // The time of a request, ms since the epoch (OpenOptions::now_ms, else the system clock).
  std::int64_t now() const;
  bool live(const records::DocRecord& record, std::int64_t now_ms) const {
    return is_live(record, config.retention_seconds, now_ms);
  }
  // The last document merges may drop as past store.retention: every document up to it was
  // stored before the retention cut-off (sampled storage times; 0 for none).
  std::uint64_t expired_through(std::int64_t now_ms) const REQUIRES(mutex);

  // The live scheme of that id, or null.
  Scheme* scheme(std::string_view id) REQUIRES(mutex);
  // The LSH design a page's sketch is banded by: the page's own (PageRequest::bands, rows) when
  // it names one; when it leaves it to the store (0 x 0: minhash.bands and minhash.rows unset),
  // its scheme's stored design, or kDefaultLsh for a scheme the store does not hold yet.
  LshDesign lsh_design(const PageRequest& page) REQUIRES(mutex) {
    return lsh_design(page, scheme(page.scheme));
  }
  // The same, for a page whose scheme is `held` (scheme(page.scheme), null for none).
  static LshDesign lsh_design(const PageRequest& page, const Scheme* held);
  // Whether a page whose scheme is `held` (null for none) has wide band keys (common/sketch.h):
  // as its scheme's stored (SchemeState::wide_bands), or for a scheme the store does not hold
  // yet, whether the page carries upper values.
  static bool wide_bands(const PageRequest& page, const Scheme* held);
  // Every scheme's id by number ("" never), for naming stored documents' schemes.
  std::vector<SchemeName> scheme_names() const REQUIRES(mutex);
  std::vector<Column*> columns_of(Scheme& scheme) const;
  // Every column with the scheme whose pages fill it (null for `ids` and `members`, which every
  // page fills): each scheme's columns (columns_of), then `ids` and `members`.
  std::vector<std::pair<Column*, Scheme*>> columns_and_schemes() REQUIRES(mutex);
  // The same columns alone.
  std::vector<Column*> all_columns() REQUIRES(mutex);

  // Adds a stored document's entries to the deltas of the columns whose watermark it passed.
  void add_entries(std::uint64_t doc, const records::DocRecord& record,
                   std::span<const std::uint64_t> band_keys) REQUIRES(mutex) {
    for_each_entry(doc, record, band_keys, [](Column& column, const Entry& e) { column.add(e); });
  }
  // Calls fn(column, entry) for each entry of document `doc` in a column whose watermark it is
  // past: its id's, its table keys' and band keys' (when indexed) and its cluster's.
  template <typename Fn>
  void for_each_entry(std::uint64_t doc, const records::DocRecord& record,
                      std::span<const std::uint64_t> band_keys, Fn&& fn) REQUIRES(mutex);

  // Each scheme's columns' bytes in memory (IndexStats::Scheme::memory_bytes): noted after every
  // batch, read by stats() on any thread.
  void note_scheme_memory() REQUIRES(mutex);
  std::vector<std::uint64_t> scheme_memory() const EXCLUDES(memory_mutex);
  // Every column's and the id filter's, noted alike: the deltas (a fixed cost), and the rest
  // (filters and run directories, which grow with the store), of which `merging` is the running
  // merges' filters for their new runs (until each merge ends).
  struct MemoryTotals {
    std::uint64_t deltas = 0, index = 0, merging = 0;
  };
  MemoryTotals memory_totals() const EXCLUDES(memory_mutex);

  // The writer mutex: a batch, a query's probes and every change hold it.
  mutable Mutex mutex;

  const StoreConfig config;
  const OpenOptions options;
  // Set at open, before any other thread sees the catalog, and unchanged after: read without
  // the mutex (stats() on any thread).
  TableDesign design;
  // What a table entry and an `ids` entry keep of their key (meta key_bits, FORMAT.md): its top
  // bits (RunFormat::keeping: for tables TableDesign::kept_key_bits, the widest prefix and
  // kCheckedBits more, at least 40; for ids 40), or the whole key (kWide: stores created before
  // format 11, the tables of those format 11 made for designs with a prefix wider than 16 bits,
  // and designs whose widest prefix leaves fewer than kCheckedBits below it). Set with `design`.
  RunFormat table_format = RunFormat::kWide, id_format = RunFormat::kWide;
  // A fingerprint's key in table t and a page id's key in `ids`, as their columns keep them: a
  // probe's hits within k bits of a table key are within k of the kept bits, and are confirmed
  // against the document's fingerprint (read_path.cc); those of an id against its stored id.
  std::uint64_t table_key(std::size_t t, std::uint64_t fingerprint) const {
    return stored_key(table_format, design.permute(t, fingerprint));
  }
  std::uint64_t id_key(std::string_view id) const {
    return stored_key(id_format, XXH3_64bits(id.data(), id.size()));
  }
  // The share of an index split by table and band this store holds (StoreConfig::shards): the
  // tables and bands numbered `shard` modulo `shards`. The rest of its columns stay empty.
  std::uint32_t shard = 0, shards = 1;
  bool owns(std::size_t table_or_band) const { return table_or_band % shards == shard; }
  // The keys of the bands this store owns, in band order (common/sketch.h band_keys; wide
  // when `upper` is given).
  void band_keys(std::span<const std::uint16_t> sketch, std::span<const std::uint16_t> upper,
                 std::uint32_t bands, std::uint32_t rows, std::vector<std::uint64_t>& out) const {
    neardup::band_keys(sketch, upper, bands, rows, out, shard, shards);
  }
  std::uint32_t bucket_bits GUARDED_BY(mutex) = 20;
  std::map<std::string, std::uint32_t, std::less<>> scheme_numbers GUARDED_BY(mutex);
  std::vector<Scheme> schemes GUARDED_BY(mutex);  // by scheme number
  std::unique_ptr<Column> ids GUARDED_BY(mutex);
  std::unique_ptr<Column> members GUARDED_BY(mutex);  // key: a cluster's first document
  IdFilter id_filter GUARDED_BY(mutex);  // the hashes in the ids column's runs (not its delta)
  std::set<std::uint64_t> forgotten GUARDED_BY(mutex);  // documents forget() removed
  // (doc, stored_at_s) of every kStoredSampleEvery-th document, for expired_through().
  static constexpr std::uint64_t kStoredSampleEvery = 4096;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> stored_samples GUARDED_BY(mutex);
  std::uint64_t next_doc GUARDED_BY(mutex) = 1;
  std::uint64_t documents GUARDED_BY(mutex) = 0;
  std::uint64_t batches GUARDED_BY(mutex) = 0;  // apply() calls so far (Scheme::last_batch)

 private:
  // Sets table_format and id_format from the store's meta key_bits (at open).
  void set_key_bits(const records::KeyBits& bits);
  StoreResult<> load_state(const lmdb::Txn& txn, const StoreTables& tables, bool read_only)
      REQUIRES(mutex);
  StoreResult<> load_stored_samples(const lmdb::Txn& txn, const StoreTables& tables)
      REQUIRES(mutex);
  StoreResult<> open_scheme(const lmdb::Txn& txn, const StoreTables& tables,
                            const std::string& name, const records::SchemeState& state, bool create,
                            bool read_only = false) REQUIRES(mutex);
  template <typename Fn>
  StoreResult<> for_each_unmerged_doc(const lmdb::Txn& txn, const StoreTables& tables, Fn&& fn)
      REQUIRES(mutex);
  StoreResult<> rebuild_deltas(const lmdb::Txn& txn, const StoreTables& tables) REQUIRES(mutex);
  StoreResult<> reserve_deltas(const lmdb::Txn& txn, const StoreTables& tables) REQUIRES(mutex);

  mutable Mutex memory_mutex;
  std::vector<std::uint64_t> scheme_memory_ GUARDED_BY(memory_mutex);  // per scheme number
  MemoryTotals memory_totals_ GUARDED_BY(memory_mutex);
};

template <typename Fn>
void Catalog::for_each_entry(std::uint64_t doc, const records::DocRecord& record,
                             std::span<const std::uint64_t> band_keys, Fn&& fn) {
  if (doc > ids->watermark()) fn(*ids, {id_key(record.id), doc});
  if (is_indexed(record)) {
    Scheme& scheme = schemes[record.scheme];
    for (std::size_t t = 0; t < scheme.tables.size(); ++t) {
      if (owns(t) && doc > scheme.tables[t]->watermark()) {
        fn(*scheme.tables[t], {table_key(t, record.fingerprint), doc});
      }
    }
    if (scheme.bands && doc > scheme.bands->watermark()) {
      for (std::uint64_t key : band_keys) fn(*scheme.bands, {key, doc});
    }
  }
  if (doc > members->watermark()) fn(*members, {record.cluster, doc});
}

}  // namespace neardup
