// The LMDB index: per scheme the permuted SimHash tables and (with the second signature) one
// LSH band column, all columns (store/column.h); documents, sketches, ids, offsets and pending
// verdicts in one environment. Byte layouts: store/FORMAT.md and store/records.h.
#include "store/index.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <span>
#include <tuple>
#include <unordered_map>

#include "store/coding.h"
#include "store/column.h"
#include "store/distinct.h"
#include "store/key_filter.h"
#include "store/lmdb.h"
#include "store/pending.h"
#include "store/records.h"
#include "store/table_design.h"
#include "store/writer_lock.h"

namespace neardup {

namespace {

// Writers refuse to open a store on a file system with less free space than this.
constexpr std::uint64_t kMinFreeBytes = 16ull << 20;

// Bytes available to this process on the file system holding `path`, if known.
std::optional<std::uint64_t> free_bytes(const std::string& path) {
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

using records::DocRecord;
using Code = StoreError::Code;
using Clock = std::chrono::steady_clock;

// Creates the store's directory (mode lmdb::kStoreDirectoryMode) and any missing parents (the
// usual mode); an existing directory is left as it is.
StoreResult<> make_store_directory(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return {};
  ec.clear();
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec || (::mkdir(path.c_str(), lmdb::kStoreDirectoryMode) != 0 && errno != EEXIST)) {
    return store_error(Code::kLmdb, "cannot create " + path + ": " +
                                        (ec ? ec.message() : std::strerror(errno)));
  }
  return {};
}

std::uint64_t nanos_since(Clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

bool map_full(const StoreError& error) {
  return error.code == Code::kLmdb && error.lmdb_code == MDB_MAP_FULL;
}

// The columns of one scheme: its permuted tables and, with the second signature, its bands.
struct Scheme {
  std::string id;
  records::SchemeState state;
  std::vector<std::unique_ptr<Column>> tables;
  std::unique_ptr<Column> bands;  // null without MinHash
  std::uint64_t last_batch = 0;   // the apply() that last stored one of its pages
  bool dropped = false;           // drop_scheme(): no columns; its number is not reused
};

// A scheme that has stored no page for this many apply() calls is idle: its deltas are merged
// into its runs, a slice of at least kIdleMergeBudget entries per call, and so freed. Its pages
// are still found (in the runs); a page of it starts a new, small delta.
constexpr std::uint64_t kIdleBatches = 64;
constexpr std::uint64_t kIdleMergeBudget = 1u << 18;
// A band column's new union filter (Column::build_union) reads this many run entries a batch
// per entry the batch adds: a rebuild over N entries ends within N / 4 entries added, while the
// union it replaces (sized for twice its runs' entries) still has room.
constexpr std::uint64_t kUnionBuildPerAdd = 4;

class LmdbIndex final : public Index {
 public:
  LmdbIndex(const StoreConfig& config, const OpenOptions& options)
      : config_(config), options_(options) {
    bucket_bits_ = std::clamp<std::uint32_t>(std::bit_width(options.delta_entries), 8, 20);
  }

  StoreResult<> open() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (options_.read_only) {
      if (!fs::exists(fs::path(config_.path) / "data.mdb", ec)) {
        return store_error(Code::kNotFound, "no index at " + config_.path + " (no data.mdb)");
      }
    } else if (auto made = make_store_directory(config_.path); !made) {
      return std::unexpected(made.error());
    } else {
      // Before LMDB is opened: a second writer must not even rebuild deltas from a store that
      // another process is changing.
      auto lock = WriterLock::acquire(config_.path);
      if (!lock) return std::unexpected(lock.error());
      writer_lock_ = std::move(*lock);
    }
    if (!options_.read_only) {
      // LMDB maps the file and writes its first pages at open: on a full file system that ends
      // in SIGBUS, not an error. Refuse here instead, naming the path and the space.
      if (auto free = free_bytes(config_.path); free && *free < kMinFreeBytes) {
        return store_error(Code::kFull, "index " + config_.path + ": the file system has only " +
                                            std::to_string(*free) + " bytes free (at least " +
                                            std::to_string(kMinFreeBytes) +
                                            " are needed to write); free some space");
      }
    }
    unsigned flags = MDB_NOTLS | (options_.read_only ? MDB_RDONLY : 0) |
                     (config_.sync || options_.read_only ? 0 : MDB_NOSYNC);
    auto env = lmdb::Env::open(config_.path, {.map_size = config_.map_size, .flags = flags});
    if (!env) return std::unexpected(from_lmdb(env.error()));
    env_ = std::move(*env);
    if (auto whole = env_.check_file_size(config_.path); !whole) {
      return std::unexpected(from_lmdb(whole.error()));
    }
    auto loaded = options_.read_only ? load_read_only() : load_or_create();
    if (loaded && !options_.read_only) loaded = grow_ahead();
    if (!loaded) {
      loaded.error().message = "index " + config_.path + ": " + loaded.error().message;
      return std::unexpected(loaded.error());
    }
    return {};
  }

  StoreResult<std::vector<Verdict>> apply(std::span<const IndexItem> items) override {
    std::lock_guard writer(writer_);
    if (options_.read_only) return store_error(Code::kReadOnly, "index opened read-only");
    ++batches_;
    ApplyTiming* timing = options_.timing;
    const std::size_t timed = timing ? timing->item_ns.size() : 0;
    std::vector<Verdict> verdicts;
    if (auto grown = grow_ahead(); !grown) return std::unexpected(grown.error());
    const BatchUndo undo{next_doc_, documents_, schemes_.size(), stored_samples_.size()};
    now_ms_ = now();
    auto written = write([&](const lmdb::Txn& txn) { return apply_batch(txn, items, verdicts); },
                         [&] {
                           rollback(undo);
                           for (auto& [column, slice] : slices_) column->discard(slice);
                           slices_.clear();
                           if (timing) timing->item_ns.resize(timed);
                         });
    if (!written) return std::unexpected(written.error());
    adopt_slices();
    note_scheme_memory();
    return verdicts;
  }

  std::optional<std::int64_t> applied_offset(const std::string& partition) override {
    std::shared_lock lock(map_lock_);
    auto txn = begin_read();
    if (!txn) return std::nullopt;
    auto value = offsets_.get(*txn, partition);
    if (!value) return std::nullopt;
    auto offset = records::decode_u64(*value);
    if (!offset) return std::nullopt;
    return static_cast<std::int64_t>(*offset);
  }

  StoreResult<> trim_pending(const std::string& partition, std::int64_t committed_offset) override {
    std::lock_guard writer(writer_);
    if (options_.read_only) return store_error(Code::kReadOnly, "index opened read-only");
    return write(
        [&](const lmdb::Txn& txn) { return pending::trim(txn, pending_, partition, committed_offset); },
        [] {});
  }

  IndexStats stats() override {
    IndexStats s{.design_k = design_.k,
                 .design_r = design_.r,
                 .blocks = static_cast<std::uint32_t>(design_.block_width.size()),
                 .tables = static_cast<std::uint32_t>(design_.tables()),
                 .block_widths = design_.block_width,
                 .format_version = records::kFormatVersion};
    struct stat st {};
    if (::stat((std::filesystem::path(config_.path) / "data.mdb").c_str(), &st) == 0) {
      s.bytes_on_disk = static_cast<std::uint64_t>(st.st_blocks) * 512;
    }
    std::shared_lock lock(map_lock_);
    if (auto info = env_.info()) s.map_size = info->me_mapsize;
    auto txn = begin_read();
    if (!txn) return s;
    if (auto docs = meta_.get(*txn, "documents")) s.documents = records::decode_u64(*docs).value_or(0);
    std::vector<std::pair<std::uint32_t, IndexStats::Scheme>> schemes;
    for_each_prefixed(*txn, meta_, "scheme/", [&](std::string_view key, std::string_view value) {
      auto state = records::SchemeState::decode(value);
      if (!state) return;
      schemes.push_back({state->number,
                         {std::string(key.substr(7)), state->hashes, state->bands, state->rows}});
    });
    std::sort(schemes.begin(), schemes.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    {
      std::lock_guard memory(scheme_memory_mutex_);
      for (auto& [number, scheme] : schemes) {
        if (number < scheme_memory_.size()) scheme.memory_bytes = scheme_memory_[number];
        s.schemes.push_back(std::move(scheme));
      }
    }
    for_each_prefixed(*txn, meta_, "column/", [&](std::string_view key, std::string_view value) {
      auto state = records::ColumnState::decode(value);
      if (!state) return;
      IndexStats::Column column{std::string(key.substr(7)), state->watermark, state->runs.size()};
      for (const auto& run : state->runs) column.entries += run.entries;
      s.runs += column.runs;
      s.columns.push_back(std::move(column));
    });
    for_each_prefixed(*txn, offsets_, "", [&](std::string_view key, std::string_view value) {
      s.applied_offsets.emplace_back(key,
                                     static_cast<std::int64_t>(records::decode_u64(value).value_or(0)));
    });
    for_each_prefixed(*txn, pending_, "", [&](std::string_view, std::string_view record) {
      records::for_each_pending_entry(record,
                                      [&](std::int64_t, std::string_view) { ++s.pending_verdicts; });
    });
    return s;
  }

  StoreResult<Verdict> lookup(const IndexItem::Page& page) override {
    std::lock_guard writer(writer_);
    if (auto valid = validate(page); !valid) return std::unexpected(valid.error());
    auto it = scheme_numbers_.find(page.scheme);
    if (it == scheme_numbers_.end()) return Verdict{};
    Scheme& scheme = schemes_[it->second];
    scheme.last_batch = batches_;
    if (auto fits = check_sketch_fits(scheme, page); !fits) return std::unexpected(fits.error());
    return with_query_txn([&](const lmdb::Txn& txn) -> StoreResult<Verdict> {
      for (Column* column : columns_of(scheme)) {
        if (auto r = lift(column->open_directories(txn, map_generation_)); !r) {
          return std::unexpected(r.error());
        }
      }
      std::vector<std::uint64_t> keys;
      if (!page.sketch.empty()) band_keys(page.sketch, page.bands, page.rows, keys);
      now_ms_ = now();
      Candidates& found = candidates_;
      if (auto r = probe(scheme, page, keys, nullptr, found); !r) return std::unexpected(r.error());
      return decide(txn, scheme, page, found);
    });
  }

  StoreResult<std::optional<StoredPage>> find(const std::string& id) override {
    std::lock_guard writer(writer_);
    return with_query_txn([&](const lmdb::Txn& txn) -> StoreResult<std::optional<StoredPage>> {
      now_ms_ = now();
      auto found = find_live_id(txn, id);
      if (!found) return std::unexpected(found.error());
      if (!*found) return std::nullopt;
      return stored_page(txn, (*found)->first, (*found)->second);
    });
  }

  StoreResult<Cluster> cluster(std::uint64_t root_doc) override {
    std::lock_guard writer(writer_);
    return with_query_txn([&](const lmdb::Txn& txn) -> StoreResult<Cluster> {
      now_ms_ = now();
      if (auto r = lift(members_->open_directories(txn, map_generation_)); !r) {
        return std::unexpected(r.error());
      }
      std::vector<std::uint64_t> docs;
      probes_.clear();
      members_->start(root_doc, probes_, [&](const Entry& e) { docs.push_back(e.doc); });
      for (RunProbe& p : probes_) p.finish([&](std::uint64_t, auto doc) { docs.push_back(doc()); });
      probes_.clear();
      std::sort(docs.begin(), docs.end());
      docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
      return build_cluster(txn, root_doc, docs);
    });
  }

  StoreResult<> for_each_cluster(std::size_t min_size, const std::string& scheme,
                                 const std::function<bool(const Cluster&)>& fn) override {
    std::lock_guard writer(writer_);
    return with_query_txn([&](const lmdb::Txn& txn) -> StoreResult<> {
      now_ms_ = now();
      std::optional<std::uint32_t> number;
      if (!scheme.empty()) {
        auto it = scheme_numbers_.find(scheme);
        if (it == scheme_numbers_.end()) return {};  // no page of that scheme
        number = it->second;
      }
      std::uint64_t root = 0;
      std::vector<std::uint64_t> docs;
      bool stop = false;
      StoreResult<> failed;
      auto emit = [&]() {
        if (docs.empty() || stop || !failed) return;
        auto cluster = build_cluster(txn, root, docs);
        if (!cluster) {
          failed = std::unexpected(cluster.error());
          return;
        }
        if (cluster->members.size() >= std::max<std::size_t>(min_size, 1) &&
            (!number || cluster->scheme == schemes_[*number].id)) {
          stop = !fn(*cluster);
        }
      };
      auto walked = lift(members_->for_each_sorted(txn, [&](const Entry& e) {
        if (e.key != root) {
          emit();
          docs.clear();
          root = e.key;
        }
        if (docs.empty() || docs.back() != e.doc) docs.push_back(e.doc);
      }));
      if (!walked) return walked;
      emit();
      return failed;
    });
  }

  StoreResult<DroppedScheme> drop_scheme(const std::string& id) override {
    std::lock_guard writer(writer_);
    if (options_.read_only) return store_error(Code::kReadOnly, "index opened read-only");
    auto it = scheme_numbers_.find(id);
    if (it == scheme_numbers_.end()) {
      std::string known;
      for (const auto& [name, number] : scheme_numbers_) known += (known.empty() ? "" : ", ") + name;
      return store_error(Code::kNotFound, "the store " + config_.path + " has no scheme " + id +
                                              " (its schemes: " + (known.empty() ? "none" : known) +
                                              ")");
    }
    Scheme& scheme = schemes_[it->second];
    DroppedScheme report;
    for (Column* column : columns_of(scheme)) {
      ++report.columns;
      report.runs += column->state().runs.size();
      for (const auto& run : column->state().runs) report.entries += run.entries;
    }
    auto written = write(
        [&](const lmdb::Txn& txn) -> StoreResult<> {
          for (Column* column : columns_of(scheme)) {
            if (auto r = lift(column->drop(txn, meta_)); !r) return r;
          }
          if (auto r = lift(meta_.del(txn, "scheme/" + id)); !r) return r;
          return lift(meta_.put(txn, "dropped/" + std::to_string(scheme.state.number), id));
        },
        [] {});
    if (!written) return std::unexpected(written.error());
    // Handles of the dropped runs are closed by the commit; the columns go with them.
    scheme.tables.clear();
    scheme.bands.reset();
    scheme.dropped = true;
    scheme_numbers_.erase(it);
    note_scheme_memory();
    return report;
  }

  StoreResult<std::size_t> forget(std::span<const std::string> ids) override {
    std::lock_guard writer(writer_);
    if (options_.read_only) return store_error(Code::kReadOnly, "index opened read-only");
    std::vector<std::uint64_t> forgotten;
    const std::uint64_t documents = documents_;
    auto written = write(
        [&](const lmdb::Txn& txn) -> StoreResult<> {
          forgotten.clear();
          documents_ = documents;
          now_ms_ = now();
          for (const std::string& id : ids) {
            auto found = find_live_id(txn, id);
            if (!found) return std::unexpected(found.error());
            if (!*found) continue;
            auto& [doc, record] = **found;
            record.flags |= DocRecord::kForgotten;
            if (auto put = lift(docs_.put(txn, coding::be64_key(doc), record.encode())); !put) {
              return put;
            }
            if (auto put = lift(forgotten_db_.put(txn, coding::be64_key(doc), "")); !put) return put;
            forgotten.push_back(doc);
            --documents_;
          }
          return lift(meta_.put(txn, "documents", records::encode_u64(documents_)));
        },
        [&] { documents_ = documents; });
    if (!written) return std::unexpected(written.error());
    forgotten_.insert(forgotten.begin(), forgotten.end());
    return forgotten.size();
  }

 private:
  struct BatchUndo {
    std::uint64_t next_doc, documents;
    std::size_t schemes, stored_samples;
  };
  // A live stored document that a signature matched.
  struct Hit {
    std::uint64_t doc = 0;
    DocRecord record;
    int distance = 0;       // SimHash hits
    double similarity = 0;  // MinHash hits
  };
  // ---- requests ----

  StoreResult<> validate(const IndexItem::Page& page) const {
    if (page.max_distance > design_.k) {
      return store_error(Code::kInvalidArgument,
                         "max_distance " + std::to_string(page.max_distance) +
                             " exceeds the index design's k " + std::to_string(design_.k));
    }
    if (!page.sketch.empty() &&
        (page.bands == 0 || page.rows == 0 ||
         std::size_t{page.bands} * page.rows > page.sketch.size())) {
      return store_error(Code::kInvalidArgument,
                         "a sketch of " + std::to_string(page.sketch.size()) + " values cannot hold " +
                             std::to_string(page.bands) + " bands of " +
                             std::to_string(page.rows) + " rows");
    }
    return {};
  }

  // ---- time and liveness ----

  std::int64_t now() const {
    if (options_.now_ms) return options_.now_ms();
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  // Whether the document has table and band entries (not an exact copy stored without them).
  static bool indexed(const DocRecord& record) {
    return (record.flags & DocRecord::kUnindexed) == 0;
  }

  // Whether a stored document can still be matched and found: not superseded by a re-crawl,
  // not forgotten, and (store.retention) first seen recently enough. now_ms_ is the time of
  // the current request.
  bool live(const DocRecord& record) const {
    if (record.flags & (DocRecord::kSuperseded | DocRecord::kForgotten)) return false;
    return config_.retention_seconds == 0 ||
           record.first_seen_ms >=
               now_ms_ - static_cast<std::int64_t>(config_.retention_seconds) * 1000;
  }

  // The last document merges may drop as past store.retention: every document up to it was
  // stored before the retention cut-off (sampled storage times; 0 for none).
  std::uint64_t expired_through() const {
    if (config_.retention_seconds == 0) return 0;
    const std::int64_t cutoff_s =
        now_ms_ / 1000 - static_cast<std::int64_t>(config_.retention_seconds);
    std::uint64_t through = 0;
    for (const auto& [doc, stored_at_s] : stored_samples_) {
      if (static_cast<std::int64_t>(stored_at_s) >= cutoff_s) break;
      through = doc;
    }
    return through;
  }

  // Runs a query in the read-only snapshot, or else in a new read transaction.
  template <typename Fn>
  auto with_query_txn(Fn&& fn) -> decltype(fn(std::declval<const lmdb::Txn&>())) {
    if (options_.read_only) return fn(snapshot_);
    std::shared_lock lock(map_lock_);
    auto txn = lift(lmdb::Txn::begin(env_, MDB_RDONLY));
    if (!txn) return std::unexpected(txn.error());
    return fn(*txn);
  }

  // The document stored under an id that is neither superseded nor forgotten (it may be past
  // retention: apply_page re-indexes it then).
  StoreResult<std::optional<std::pair<std::uint64_t, DocRecord>>> find_stored_id(
      const lmdb::Txn& txn, const std::string& id) {
    if (auto r = lift(ids_->open_directories(txn, map_generation_)); !r) {
      return std::unexpected(r.error());
    }
    const std::uint64_t hash = XXH3_64bits(id.data(), id.size());
    std::vector<std::uint64_t> docs;
    probes_.clear();
    ids_->start(hash, probes_, [&](const Entry& e) { docs.push_back(e.doc); },
                id_filter_.may_contain(hash));
    for (RunProbe& p : probes_) p.finish([&](std::uint64_t, auto doc) { docs.push_back(doc()); });
    probes_.clear();
    return find_id(txn, docs, id);
  }

  StoreResult<std::optional<std::pair<std::uint64_t, DocRecord>>> find_live_id(
      const lmdb::Txn& txn, const std::string& id) {
    auto found = find_stored_id(txn, id);
    if (!found || !*found || live((*found)->second)) return found;
    return std::nullopt;
  }

  StoreResult<StoredPage> stored_page(const lmdb::Txn& txn, std::uint64_t doc,
                                      const DocRecord& record) {
    StoredPage page{.doc = doc,
                    .id = record.id,
                    .scheme = record.scheme < schemes_.size() ? schemes_[record.scheme].id : "",
                    .fingerprint = record.fingerprint,
                    .first_seen_ms = record.first_seen_ms,
                    .stored_at_ms = std::int64_t{record.stored_at_s} * 1000,
                    .cluster_doc = record.cluster};
    auto sketch = get_sketch(txn, doc);
    if (!sketch) return std::unexpected(sketch.error());
    page.sketch = std::move(*sketch);
    auto verdict = stored_verdict(txn, record);
    if (!verdict) return std::unexpected(verdict.error());
    page.verdict = std::move(*verdict);
    page.verdict.replayed = false;
    if (record.cluster == doc) {
      page.cluster = record.id;
    } else {
      auto root = get_doc(txn, record.cluster);
      if (!root) return std::unexpected(root.error());
      page.cluster = std::move(root->id);
    }
    return page;
  }

  // The cluster of root_doc with the live documents among `docs` (sorted).
  StoreResult<Cluster> build_cluster(const lmdb::Txn& txn, std::uint64_t root_doc,
                                     const std::vector<std::uint64_t>& docs) {
    auto root = docs_.get(txn, coding::be64_key(root_doc));
    if (!root) {
      if (root.error().code == MDB_NOTFOUND) {
        return store_error(Code::kInvalidArgument, "no document " + std::to_string(root_doc));
      }
      return std::unexpected(from_lmdb(root.error()));
    }
    auto root_record = DocRecord::decode(*root);
    if (!root_record) return corrupt("docs record " + std::to_string(root_doc));
    Cluster cluster{.root = root_record->id,
                    .root_doc = root_doc,
                    .scheme = root_record->scheme < schemes_.size()
                                  ? schemes_[root_record->scheme].id
                                  : ""};
    for (std::uint64_t doc : docs) {
      auto record = get_doc(txn, doc);
      if (!record) return std::unexpected(record.error());
      if (!live(*record) || record->cluster != root_doc) continue;
      auto page = stored_page(txn, doc, *record);
      if (!page) return std::unexpected(page.error());
      cluster.members.push_back(std::move(*page));
    }
    return cluster;
  }

  // A page's sketch must match its scheme's LSH design (the scheme id covers it).
  static StoreResult<> check_sketch_fits(const Scheme& scheme, const IndexItem::Page& page) {
    const records::SchemeState& s = scheme.state;
    if (page.sketch.size() != s.hashes || (s.has_minhash() && (page.bands != s.bands ||
                                                               page.rows != s.rows))) {
      return store_error(Code::kInvalidArgument,
                         "scheme " + scheme.id + " stores " +
                             (s.has_minhash() ? std::to_string(s.hashes) + "-value sketches in " +
                                                    std::to_string(s.bands) + " x " +
                                                    std::to_string(s.rows) + " bands"
                                              : std::string("no sketches")) +
                             "; the page has " + std::to_string(page.sketch.size()) +
                             " values in " + std::to_string(page.bands) + " x " +
                             std::to_string(page.rows));
    }
    return {};
  }

  // ---- transactions ----

  lmdb::Result<lmdb::Txn> begin_read() {
    auto txn = lmdb::Txn::begin(env_, MDB_RDONLY);
    if (!txn && txn.error().code == MDB_MAP_RESIZED && options_.read_only) {
      // Another process grew the map: adopt its size (no other transaction of ours is open).
      if (auto adopted = env_.set_map_size(0); !adopted) return std::unexpected(adopted.error());
      txn = lmdb::Txn::begin(env_, MDB_RDONLY);
    }
    return txn;
  }

  // Runs body in a write transaction and commits it. On MDB_MAP_FULL (from body or commit):
  // aborts, calls undo, doubles the map up to store.max_map_size and runs body again.
  template <typename Body, typename Undo>
  StoreResult<> write(Body&& body, Undo&& undo) {
    while (true) {
      auto txn = lift(lmdb::Txn::begin(env_, 0));
      if (!txn) return std::unexpected(txn.error());
      StoreResult<> done = body(*txn);
      if (!done) {
        undo();  // first: it closes cursors that LMDB frees with the transaction
        txn->abort();
      } else {
        auto start = Clock::now();
        done = lift(txn->commit());
        if (options_.timing) options_.timing->commit_ns += nanos_since(start);
        if (!done) undo();
      }
      if (done) return {};
      if (!map_full(done.error())) return with_space(std::move(done));
      if (auto grown = grow(); !grown) return grown;
    }
  }

  // A failed write on a file system without space says so (LMDB reports ENOSPC, or EIO when a
  // write-back of the map failed), with the path and the bytes free.
  StoreResult<> with_space(StoreResult<> failed) const {
    const int code = failed.error().lmdb_code;
    if (code != ENOSPC && code != EIO) return failed;
    auto free = free_bytes(config_.path);
    failed.error().message += "; " + config_.path + ": " +
                              (free ? std::to_string(*free) + " bytes free on its file system"
                                    : std::string("free space unknown")) +
                              " (nothing of this batch was committed; it is applied again once "
                              "there is space)";
    return failed;
  }

  // Doubles the map while the last commit uses more than three quarters of it. A batch that
  // runs into MDB_MAP_FULL throws its work away and runs again after the growth (and a reopened
  // store maps just its file, so its first batches would): growing first spares that. At open
  // and before each batch; no transaction of ours may be open.
  StoreResult<> grow_ahead() {
    while (true) {
      auto used = lift(env_.used_bytes());
      if (!used) return std::unexpected(used.error());
      auto info = lift(env_.info());
      if (!info) return std::unexpected(info.error());
      if (*used <= info->me_mapsize / 4 * 3 || info->me_mapsize >= config_.max_map_size) return {};
      if (auto grown = grow(); !grown) return grown;
    }
  }

  StoreResult<> grow() {
    std::unique_lock lock(map_lock_);
    auto info = lift(env_.info());
    if (!info) return std::unexpected(info.error());
    const std::uint64_t size = info->me_mapsize;
    if (size >= config_.max_map_size) {
      return store_error(Code::kFull, "index " + config_.path +
                                          " is full: the map reached store.max_map_size (" +
                                          std::to_string(config_.max_map_size) +
                                          " bytes); raise it to store more (nothing committed "
                                          "was lost)");
    }
    if (auto set = lift(env_.set_map_size(std::min(size * 2, config_.max_map_size))); !set) {
      return set;
    }
    ++map_generation_;  // the map moved: every RunDirectory points into the old one
    return {};
  }

  template <typename Fn>
  lmdb::Result<> for_each_prefixed(const lmdb::Txn& txn, lmdb::Dbi dbi, std::string_view prefix,
                                   Fn&& fn) {
    auto cursor = lmdb::Cursor::open(txn, dbi);
    if (!cursor) return std::unexpected(cursor.error());
    MDB_val key = lmdb::to_val(prefix), value{};
    for (auto found = cursor->get(key, value, prefix.empty() ? MDB_FIRST : MDB_SET_RANGE);;
         found = cursor->get(key, value, MDB_NEXT)) {
      if (!found) return std::unexpected(found.error());
      if (!*found || !lmdb::to_view(key).starts_with(prefix)) return {};
      fn(lmdb::to_view(key), lmdb::to_view(value));
    }
  }

  StoreResult<DocRecord> get_doc(const lmdb::Txn& txn, std::uint64_t doc) {
    auto value = lift(docs_.get(txn, coding::be64_key(doc)));
    if (!value) return std::unexpected(value.error());
    auto record = DocRecord::decode(*value);
    if (!record) return corrupt("docs record " + std::to_string(doc));
    return std::move(*record);
  }

  // The stored sketch of a document; empty when it has none.
  StoreResult<Sketch> get_sketch(const lmdb::Txn& txn, std::uint64_t doc) {
    auto value = sketches_.get(txn, coding::be64_key(doc));
    if (!value) {
      if (value.error().code == MDB_NOTFOUND) return Sketch{};
      return std::unexpected(from_lmdb(value.error()));
    }
    auto sketch = records::decode_sketch(*value);
    if (!sketch) return corrupt("sketch of document " + std::to_string(doc));
    return std::move(*sketch);
  }

  // ---- columns ----

  std::vector<Column*> columns_of(Scheme& scheme) {
    std::vector<Column*> out;
    for (auto& table : scheme.tables) out.push_back(table.get());
    if (scheme.bands) out.push_back(scheme.bands.get());
    return out;
  }

  std::vector<Column*> all_columns() {
    std::vector<Column*> out;
    for (Scheme& scheme : schemes_) {
      for (Column* column : columns_of(scheme)) out.push_back(column);
    }
    if (ids_) out.push_back(ids_.get());
    if (members_) out.push_back(members_.get());
    return out;
  }

  // Starts the merge of every full delta and writes the next slice of every running merge in
  // txn (column.h), sized so that a merge ends before its column's new delta is half full; a
  // delta already full again finishes its merge now. The slices are adopted after the commit.
  StoreResult<> merge_slices(const lmdb::Txn& txn, std::size_t batch_pages) {
    slices_.clear();
    const auto start = Clock::now();
    const Dropped dropped{expired_through(), &forgotten_};
    for (auto [column, per_page, idle] : columns_and_rates()) {
      if (column->full() || (idle && !column->merging() && column->delta().size() > 0)) {
        column->begin_merge(next_doc_ - 1, dropped.expired_through > 0);
      }
      const std::uint64_t adds = std::max<std::uint64_t>(1, batch_pages * per_page);
      column->build_union(kUnionBuildPerAdd * adds);
      if (!column->merging()) continue;
      const std::uint64_t remaining = column->merge_remaining();
      const std::uint64_t size = column->delta().size();
      std::uint64_t budget = remaining;
      if (size < column->capacity()) {
        const std::uint64_t batches_left = std::max<std::uint64_t>(1, (column->capacity() - size) / adds / 2);
        budget = (remaining + batches_left - 1) / batches_left;
      }
      if (idle) budget = std::max(budget, kIdleMergeBudget);
      const auto column_start = Clock::now();
      auto slice = lift(column->merge_slice(txn, meta_, budget, dropped));
      if (options_.timing && column->format() == RunFormat::kNarrow) {
        options_.timing->band_merge_ns += nanos_since(column_start);
      }
      if (!slice) {
        slice.error().message = "merging " + column->name() + ": " + slice.error().message;
        return std::unexpected(slice.error());
      }
      slices_.emplace_back(column, std::move(*slice));
    }
    if (options_.timing) options_.timing->merge_ns += nanos_since(start);
    return {};
  }

  // After the batch transaction committed: the slices become current.
  void adopt_slices() {
    for (auto& [column, slice] : slices_) {
      const bool done = slice.done;
      std::unique_ptr<Delta> merged = column->adopt(std::move(slice));
      if (!done) continue;
      if (column == ids_.get()) add_to_id_filter(*merged);
      column->recycle(std::move(merged));
      if (options_.timing) ++options_.timing->merges;
    }
    slices_.clear();
  }

  // Every column with the entries one page adds to it (bands per page for a band column), and
  // whether it belongs to an idle scheme (kIdleBatches).
  std::vector<std::tuple<Column*, std::uint64_t, bool>> columns_and_rates() {
    std::vector<std::tuple<Column*, std::uint64_t, bool>> out;
    for (Scheme& scheme : schemes_) {
      const bool idle = batches_ - scheme.last_batch > kIdleBatches;
      for (auto& table : scheme.tables) out.emplace_back(table.get(), 1, idle);
      if (scheme.bands) out.emplace_back(scheme.bands.get(), scheme.state.bands, idle);
    }
    if (ids_) out.emplace_back(ids_.get(), 1, false);
    if (members_) out.emplace_back(members_.get(), 1, false);
    return out;
  }

  // Each scheme's columns' bytes in memory, for stats() (read beside the writer).
  void note_scheme_memory() {
    std::vector<std::uint64_t> bytes;
    for (Scheme& scheme : schemes_) {
      std::uint64_t sum = 0;
      for (Column* column : columns_of(scheme)) sum += column->memory();
      bytes.push_back(sum);
    }
    std::lock_guard lock(scheme_memory_mutex_);
    scheme_memory_ = std::move(bytes);
  }

  // The merged ids are in the runs now: the filter must report their hashes.
  void add_to_id_filter(const Delta& merged) {
    if (id_filter_.size() + merged.size() > id_filter_.capacity()) {
      // On failure no filter (every id probes the runs): slower, never wrong.
      if (!rebuild_id_filter()) id_filter_ = IdFilter();
    } else {
      merged.for_each([&](const Entry& e) { id_filter_.add(e.key); });
    }
  }

  // Fills a new id filter with every hash in the ids column's runs, sized for twice what they
  // hold (at least kMinIdFilter): memory follows the stored ids, not the configured size. With
  // no runs there is nothing to filter and no table (an index of a few pages never allocates
  // one); the first merge of the ids builds it.
  StoreResult<> rebuild_id_filter() {
    constexpr std::uint64_t kMinIdFilter = 1ull << 22;  // 6 MiB
    std::uint64_t entries = 0;
    for (const auto& run : ids_->state().runs) entries += run.entries;
    if (entries == 0) {
      id_filter_ = IdFilter();
      return {};
    }
    IdFilter filter(std::max<std::uint64_t>(kMinIdFilter, 2 * entries));
    auto txn = lift(lmdb::Txn::begin(env_, MDB_RDONLY));
    if (!txn) return std::unexpected(txn.error());
    for (const auto& run : ids_->state().runs) {
      const std::string name = "ids/" + std::to_string(run.id);
      auto dbi = lift(lmdb::Dbi::open(*txn, name, 0));
      if (!dbi) return std::unexpected(dbi.error());
      auto reader = lift(RunReader::open(*txn, *dbi, RunFormat::kWide, name));
      if (!reader) return std::unexpected(reader.error());
      while (!reader->done()) {
        filter.add(reader->current().key);
        if (auto next = lift(reader->next()); !next) return next;
      }
    }
    id_filter_ = std::move(filter);
    return {};
  }

  // Adds a stored document's entries to the deltas of the columns whose watermark it passed.
  void add_entries(std::uint64_t doc, const DocRecord& record,
                   std::span<const std::uint64_t> band_keys) {
    for_each_entry(doc, record, band_keys, [](Column& column, const Entry& e) { column.add(e); });
  }
  // Calls fn(column, entry) for each entry of document `doc` in a column whose watermark it is
  // past: its id's, its table keys' and band keys' (when indexed) and its cluster's.
  template <typename Fn>
  void for_each_entry(std::uint64_t doc, const DocRecord& record,
                      std::span<const std::uint64_t> band_keys, Fn&& fn) {
    if (doc > ids_->watermark()) fn(*ids_, {XXH3_64bits(record.id.data(), record.id.size()), doc});
    if (indexed(record)) {
      Scheme& scheme = schemes_[record.scheme];
      for (std::size_t t = 0; t < scheme.tables.size(); ++t) {
        if (doc > scheme.tables[t]->watermark()) {
          fn(*scheme.tables[t], {design_.permute(t, record.fingerprint), doc});
        }
      }
      if (scheme.bands && doc > scheme.bands->watermark()) {
        for (std::uint64_t key : band_keys) fn(*scheme.bands, {key, doc});
      }
    }
    if (doc > members_->watermark()) fn(*members_, {record.cluster, doc});
  }

  // ---- apply ----

  void rollback(const BatchUndo& undo) {
    for (Column* column : all_columns()) column->delta().undo();
    next_doc_ = undo.next_doc;
    documents_ = undo.documents;
    stored_samples_.resize(undo.stored_samples);
    std::erase_if(scheme_numbers_, [&](const auto& s) { return s.second >= undo.schemes; });
    schemes_.resize(undo.schemes);
  }

  StoreResult<> apply_batch(const lmdb::Txn& txn, std::span<const IndexItem> items,
                            std::vector<Verdict>& verdicts) {
    verdicts.clear();
    for (Column* column : all_columns()) {
      column->delta().mark();
      if (auto r = lift(column->open_directories(txn, map_generation_)); !r) return r;
    }
    if (auto merged = merge_slices(txn, items.size()); !merged) return merged;
    // Each page's band keys, computed once for its prefetch, probe and insert.
    keys_.resize(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      keys_[i].clear();
      if (const auto& page = items[i].page; page && !page->sketch.empty() && validate(*page)) {
        band_keys(page->sketch, page->bands, page->rows, keys_[i]);
      }
    }
    std::map<std::string, pending::Partition, std::less<>> partitions;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const IndexItem& item = items[i];
      if (i + 1 < items.size()) prefetch(items[i + 1], keys_[i + 1]);
      pending::Partition* partition = nullptr;
      bool record = true, conflict = false;
      if (item.source) {
        const std::string& name = item.source->partition;
        const std::int64_t offset = item.source->offset;
        auto [it, added] = partitions.try_emplace(name);
        if (added) {
          if (auto value = offsets_.get(txn, name)) {
            auto applied = records::decode_u64(*value);
            if (!applied) return corrupt("offsets of " + name);
            it->second.applied = static_cast<std::int64_t>(*applied);
          }
        }
        partition = &it->second;
        if (partition->applied && offset <= *partition->applied) {
          auto stored = partition->find(offset);
          if (!stored) {
            auto found = pending::find(txn, pending_, name, offset);
            if (!found) return std::unexpected(found.error());
            stored = std::move(*found);
          }
          // Trimmed (so committed downstream), or applied with another record: answered
          // again (deterministically, by id) but not recorded.
          record = false;
          if (stored && stored->answers(item.source->digest)) {
            stored->verdict.replayed = true;
            verdicts.push_back(std::move(stored->verdict));
            continue;
          }
          conflict = stored.has_value();
        }
      }
      Verdict verdict = item.decided;
      const auto start = Clock::now();
      if (item.page) {
        auto decided = apply_page(txn, *item.page, keys_[i]);
        if (!decided) return std::unexpected(decided.error());
        verdict = std::move(*decided);
      }
      verdict.offset_conflict = conflict;
      if (partition != nullptr && record) {
        partition->add(item.source->offset, verdict, item.source->digest);
        if (partition->full()) {
          if (auto put = pending::flush(txn, pending_, item.source->partition, *partition); !put) {
            return put;
          }
        }
      }
      if (options_.timing) {
        options_.timing->item_ns.push_back(static_cast<std::uint32_t>(nanos_since(start)));
      }
      verdicts.push_back(std::move(verdict));
    }
    for (auto& [name, partition] : partitions) {
      if (!partition.dirty) continue;
      if (auto put = pending::flush(txn, pending_, name, partition); !put) return put;
      auto put = lift(offsets_.put(txn, name,
                                   records::encode_u64(static_cast<std::uint64_t>(*partition.applied))));
      if (!put) return put;
    }
    return lift(meta_.put(txn, "documents", records::encode_u64(documents_)));
  }

  // Starts loading the delta buckets a page will probe, while the previous page is applied.
  void prefetch(const IndexItem& item, const std::vector<std::uint64_t>& band_keys) {
    if (!item.page) return;
    auto it = scheme_numbers_.find(item.page->scheme);
    if (it == scheme_numbers_.end()) return;
    const std::uint64_t id_hash = XXH3_64bits(item.page->id.data(), item.page->id.size());
    ids_->delta().prefetch(id_hash);
    id_filter_.prefetch(id_hash);
    Scheme& scheme = schemes_[it->second];
    for (std::size_t t = 0; t < design_.tables(); ++t) {
      scheme.tables[t]->prefetch(design_.permute(t, item.page->fingerprint));
    }
    if (scheme.bands) {
      for (std::uint64_t key : band_keys) scheme.bands->prefetch(key);
    }
  }

  // A page that does not fit the store (index.h, apply()) is a dead letter of its own.
  static Verdict unfit(const StoreError& error) {
    return Verdict{.status = Verdict::Status::kDeadLetter,
                   .reason = "invalid_index_item",
                   .detail = error.message};
  }

  StoreResult<Verdict> apply_page(const lmdb::Txn& txn, const IndexItem::Page& page,
                                  const std::vector<std::uint64_t>& band_keys) {
    if (auto valid = validate(page); !valid) return unfit(valid.error());
    auto it = scheme_numbers_.find(page.scheme);
    if (it == scheme_numbers_.end()) {
      if (auto added = add_scheme(txn, page.scheme, page); !added) return std::unexpected(added.error());
      it = scheme_numbers_.find(page.scheme);
    }
    Scheme& scheme = schemes_[it->second];
    scheme.last_batch = batches_;
    if (auto fits = check_sketch_fits(scheme, page); !fits) return unfit(fits.error());
    const std::uint64_t id_hash = XXH3_64bits(page.id.data(), page.id.size());

    Candidates& found = candidates_;
    if (auto r = probe(scheme, page, band_keys, &id_hash, found); !r) {
      return std::unexpected(r.error());
    }
    auto existing = find_id(txn, found.id_docs, page.id);
    if (!existing) return std::unexpected(existing.error());
    std::int64_t first_seen = page.seen_at_ms;
    if (*existing) {
      auto& [old_doc, old] = **existing;
      const bool expired = !live(old);
      if (!expired && old.fingerprint == page.fingerprint && old.scheme == it->second) {
        auto old_sketch = get_sketch(txn, old_doc);
        if (!old_sketch) return std::unexpected(old_sketch.error());
        if (*old_sketch == page.sketch) return stored_verdict(txn, old);
      }
      // Re-crawled with new signatures (or past retention, and then seen anew): the old
      // document leaves every lookup.
      if (!expired) first_seen = old.first_seen_ms;
      old.flags |= DocRecord::kSuperseded;
      if (auto put = lift(docs_.put(txn, coding::be64_key(old_doc), old.encode())); !put) {
        return std::unexpected(put.error());
      }
    } else {
      ++documents_;
    }

    // The old document (if re-crawled) is flagged by now, so it is never its own match.
    auto verdict = decide(txn, scheme, page, found);
    if (!verdict) return std::unexpected(verdict.error());
    if (scheme.bands && next_doc_ > kMaxNarrowDoc) {
      return store_error(Code::kFull, "index " + config_.path +
                                          " has numbered 2^40 documents, the most a band column "
                                          "can hold");
    }
    const std::uint64_t doc = next_doc_++;
    DocRecord record{.fingerprint = page.fingerprint,
                     .cluster = doc,
                     .first_seen_ms = first_seen,
                     .scheme = it->second,
                     .stored_at_s = static_cast<std::uint32_t>(std::max<std::int64_t>(now_ms_ / 1000, 0)),
                     .id = page.id};
    if (verdict->status == Verdict::Status::kDuplicate) {
      record.cluster = found.matched_cluster;
      record.matched = found.matched_doc;
      record.status = static_cast<std::uint8_t>(Verdict::Status::kDuplicate);
      record.distance = static_cast<std::uint8_t>(verdict->distance);
      record.method = verdict->method;
      record.similarity = records::quantize_similarity(verdict->similarity);
    }
    if (verdict->status == Verdict::Status::kDuplicate) {
      auto full = indexed_copies_full(txn, page, found.hits);
      if (!full) return std::unexpected(full.error());
      if (*full) record.flags |= DocRecord::kUnindexed;
    }
    auto put = lift(docs_.put(txn, coding::be64_key(doc), record.encode(), MDB_APPEND));
    if (!put) return std::unexpected(put.error());
    if (!page.sketch.empty()) {
      auto sketch = lift(sketches_.put(txn, coding::be64_key(doc),
                                       records::encode_sketch(page.sketch), MDB_APPEND));
      if (!sketch) return std::unexpected(sketch.error());
    }
    add_entries(doc, record, band_keys);
    if (doc % kStoredSampleEvery == 0) stored_samples_.emplace_back(doc, record.stored_at_s);
    return verdict;
  }

  // Whether kIndexedCopies live documents among the SimHash hits are exact copies of the page
  // (the same fingerprint and the same sketch): then the page is stored unindexed (index.h).
  StoreResult<bool> indexed_copies_full(const lmdb::Txn& txn, const IndexItem::Page& page,
                                        const std::vector<std::pair<int, std::uint64_t>>& hits) {
    exact_docs_.clear();
    for (const auto& [distance, doc] : hits) {
      if (distance == 0) exact_docs_.push_back(doc);
    }
    sort_distinct(exact_docs_, distinct_scratch_);
    if (exact_docs_.size() < kIndexedCopies) return false;  // too few to read them
    std::size_t copies = 0;
    for (std::uint64_t doc : exact_docs_) {
      auto record = get_doc(txn, doc);
      if (!record) return std::unexpected(record.error());
      if (!live(*record) || record->fingerprint != page.fingerprint) continue;
      if (!page.sketch.empty()) {
        auto sketch = get_sketch(txn, doc);
        if (!sketch) return std::unexpected(sketch.error());
        if (*sketch != page.sketch) continue;
      }
      if (++copies == kIndexedCopies) return true;
    }
    return false;
  }

  // The verdict a document got when it was stored, replayed.
  StoreResult<Verdict> stored_verdict(const lmdb::Txn& txn, const DocRecord& record) {
    Verdict verdict;
    verdict.replayed = true;
    verdict.status = static_cast<Verdict::Status>(record.status);
    if (verdict.status == Verdict::Status::kDuplicate) {
      auto matched = get_doc(txn, record.matched);
      if (!matched) return std::unexpected(matched.error());
      auto cluster = get_doc(txn, record.cluster);
      if (!cluster) return std::unexpected(cluster.error());
      verdict.matched = std::move(matched->id);
      verdict.duplicate_of = std::move(cluster->id);
      verdict.distance = record.distance;
      verdict.method = record.method;
      verdict.similarity = records::similarity_value(record.similarity);
    }
    return verdict;
  }

  // What a page's probes found: documents whose id hashes like the page's, (distance, doc) of
  // the table entries within k bits, and the documents of the band entries that matched one
  // of the page's band keys. All columns' probes are started before any is finished, so their
  // cache misses overlap. decide() fills matched_doc / matched_cluster.
  struct Candidates {
    std::vector<std::uint64_t> id_docs;
    std::vector<std::pair<int, std::uint64_t>> hits;
    std::vector<std::uint64_t> band_docs;
    std::uint64_t checked = 0;  // table and band entries compared with the query
    std::uint64_t matched_doc = 0, matched_cluster = 0;
  };

  StoreResult<> probe(Scheme& scheme, const IndexItem::Page& page,
                      const std::vector<std::uint64_t>& band_keys, const std::uint64_t* id_hash,
                      Candidates& out) {
    out.id_docs.clear();
    out.hits.clear();
    out.band_docs.clear();
    out.checked = 0;
    probes_.clear();
    queries_.clear();
    // Kinds of probe in probes_, in order: ids, then tables, then bands.
    if (id_hash != nullptr) {
      ids_->start(*id_hash, probes_, [&](const Entry& e) { out.id_docs.push_back(e.doc); },
                  id_filter_.may_contain(*id_hash));
    }
    const std::size_t id_probes = probes_.size();
    const auto k = static_cast<int>(page.max_distance);
    for (std::size_t t = 0; t < scheme.tables.size(); ++t) {
      const std::uint64_t key = design_.permute(t, page.fingerprint);
      scheme.tables[t]->start(key, probes_, [&](const Entry& e) {
        ++out.checked;
        const int distance = std::popcount(e.key ^ key);
        if (distance <= k) out.hits.emplace_back(distance, e.doc);
      });
      queries_.resize(probes_.size() - id_probes, key);
    }
    const std::size_t table_probes = probes_.size();
    if (scheme.bands) {
      for (std::uint64_t key : band_keys) {
        scheme.bands->start(key, probes_, [&](const Entry& e) { out.band_docs.push_back(e.doc); });
      }
    }
    for (std::size_t i = 0; i < probes_.size(); ++i) {
      if (i < id_probes) {
        probes_[i].finish([&](std::uint64_t, auto doc) { out.id_docs.push_back(doc()); });
      } else if (i < table_probes) {
        const std::uint64_t key = queries_[i - id_probes];
        probes_[i].finish([&](std::uint64_t entry_key, auto doc) {
          ++out.checked;
          const int distance = std::popcount(entry_key ^ key);
          if (distance <= k) out.hits.emplace_back(distance, doc());
        });
      } else {
        // Narrow runs answer for the band key's top 40 bits: decide() confirms each document
        // against its stored sketch.
        probes_[i].finish([&](std::uint64_t, auto doc) { out.band_docs.push_back(doc()); });
      }
    }
    probes_.clear();
    sort_distinct(out.band_docs, distinct_scratch_);
    out.checked += out.band_docs.size();
    return {};
  }

  // The verdict for a probed page: the nearest live SimHash hit (ties: the lowest document
  // number) and the most similar live MinHash match (ties: the lowest document number);
  // matched is the first if any, else the second. Sets found.matched_doc / matched_cluster.
  StoreResult<Verdict> decide(const lmdb::Txn& txn, Scheme& scheme, const IndexItem::Page& page,
                              Candidates& found) {
    Verdict verdict;
    verdict.candidates = static_cast<std::uint32_t>(found.checked);
    auto by_simhash = nearest(txn, found.hits);
    if (!by_simhash) return std::unexpected(by_simhash.error());
    std::optional<Hit> by_minhash;
    if (scheme.bands && !page.sketch.empty()) {
      // With a SimHash hit, the MinHash search decides only whether the verdict says both
      // methods (the similarity reported is the hit's either way): the first live match is
      // enough, and a page with many near copies reads one sketch, not every copy's.
      auto best = most_similar(txn, scheme, page, found.band_docs,
                               /*first_match=*/by_simhash->has_value());
      if (!best) return std::unexpected(best.error());
      by_minhash = std::move(*best);
    }
    if (!*by_simhash && !by_minhash) return verdict;
    const Hit& hit = *by_simhash ? **by_simhash : *by_minhash;
    verdict.status = Verdict::Status::kDuplicate;
    verdict.method = (*by_simhash ? Verdict::kSimHash : 0) | (by_minhash ? Verdict::kMinHash : 0);
    verdict.matched = hit.record.id;
    verdict.distance = std::popcount(hit.record.fingerprint ^ page.fingerprint);
    if (by_minhash && by_minhash->doc == hit.doc) {
      verdict.similarity = by_minhash->similarity;
    } else if (!page.sketch.empty()) {
      auto sketch = get_sketch(txn, hit.doc);
      if (!sketch) return std::unexpected(sketch.error());
      if (!sketch->empty()) verdict.similarity = estimate_jaccard(page.sketch, *sketch);
    }
    // Stored and replayed verdicts carry the similarity as stored: rounded alike here.
    verdict.similarity = records::similarity_value(records::quantize_similarity(verdict.similarity));
    auto cluster = get_doc(txn, hit.record.cluster);
    if (!cluster) return std::unexpected(cluster.error());
    verdict.duplicate_of = std::move(cluster->id);
    found.matched_doc = hit.doc;
    found.matched_cluster = hit.record.cluster;
    return verdict;
  }

  // The live document stored under an id, among the candidates.
  StoreResult<std::optional<std::pair<std::uint64_t, DocRecord>>> find_id(
      const lmdb::Txn& txn, const std::vector<std::uint64_t>& docs, const std::string& id) {
    for (std::uint64_t doc : docs) {
      auto record = get_doc(txn, doc);
      if (!record) return std::unexpected(record.error());
      if (!(record->flags & (DocRecord::kSuperseded | DocRecord::kForgotten)) &&
          record->id == id) {
        return std::pair{doc, std::move(*record)};
      }
    }
    return std::nullopt;
  }

  // The nearest live document among the SimHash hits (ties: the lowest document number).
  StoreResult<std::optional<Hit>> nearest(const lmdb::Txn& txn,
                                          std::vector<std::pair<int, std::uint64_t>>& hits) {
    // The nearest hit is the answer when it is live: a page with many copies in the index has
    // a hit per copy and table, and the sort is needed only when it is not.
    if (hits.empty()) return std::nullopt;
    const auto first = std::min_element(hits.begin(), hits.end());
    auto first_record = get_doc(txn, first->second);
    if (!first_record) return std::unexpected(first_record.error());
    if (live(*first_record)) {
      return Hit{
          .doc = first->second, .record = std::move(*first_record), .distance = first->first};
    }
    std::sort(hits.begin(), hits.end());
    hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
    for (const auto& [distance, doc] : hits) {
      auto record = get_doc(txn, doc);
      if (!record) return std::unexpected(record.error());
      if (live(*record)) {
        return Hit{.doc = doc, .record = std::move(*record), .distance = distance};
      }
    }
    return std::nullopt;
  }

  // The most similar live document among the band candidates that really shares a band with
  // the page and reaches its min_similarity (ties: the lowest document number); with
  // `first_match`, the live matching document of the lowest number.
  StoreResult<std::optional<Hit>> most_similar(const lmdb::Txn& txn, const Scheme& scheme,
                                               const IndexItem::Page& page,
                                               const std::vector<std::uint64_t>& docs,
                                               bool first_match) {
    std::vector<std::pair<double, std::uint64_t>> matches;
    for (std::uint64_t doc : docs) {  // ascending
      auto sketch = get_sketch(txn, doc);
      if (!sketch) return std::unexpected(sketch.error());
      if (!minhash_match(page.sketch, *sketch, scheme.state.bands, scheme.state.rows,
                         page.min_similarity)) {
        continue;
      }
      const double similarity = estimate_jaccard(page.sketch, *sketch);
      if (similarity == 1.0 || first_match) {
        // Nothing is more similar (or any live match will do), and every later document has a
        // higher number: the first live one is the answer, without reading the other copies'
        // sketches.
        auto record = get_doc(txn, doc);
        if (!record) return std::unexpected(record.error());
        if (live(*record)) {
          return Hit{.doc = doc, .record = std::move(*record), .similarity = similarity};
        }
      }
      matches.emplace_back(-similarity, doc);
    }
    std::sort(matches.begin(), matches.end());
    for (const auto& [negative, doc] : matches) {
      auto record = get_doc(txn, doc);
      if (!record) return std::unexpected(record.error());
      if (live(*record)) {
        return Hit{.doc = doc, .record = std::move(*record), .similarity = -negative};
      }
    }
    return std::nullopt;
  }

  // ---- open ----

  StoreResult<> open_dbis(const lmdb::Txn& txn, unsigned flags) {
    using Named = std::pair<lmdb::Dbi*, const char*>;
    for (auto [dbi, name] : std::initializer_list<Named>{{&meta_, "meta"},
                                                         {&docs_, "docs"},
                                                         {&sketches_, "sketches"},
                                                         {&forgotten_db_, "forgotten"},
                                                         {&offsets_, "offsets"},
                                                         {&pending_, "pending"}}) {
      auto opened = lift(lmdb::Dbi::open(txn, name, flags));
      if (!opened) return std::unexpected(opened.error());
      *dbi = *opened;
    }
    return {};
  }

  StoreResult<> check_format(const lmdb::Txn& txn) {
    auto format = meta_.get(txn, "format");
    if (!format) return store_error(Code::kCorrupt, "not a neardup index (no format in meta)");
    const std::uint32_t version = records::decode_u32(*format).value_or(0);
    if (version < records::kOldestReadableFormat || version > records::kFormatVersion) {
      return store_error(Code::kFormat, "format version " + std::to_string(version) +
                                            " on disk, this build reads versions " +
                                            std::to_string(records::kOldestReadableFormat) +
                                            " to " + std::to_string(records::kFormatVersion) +
                                            " (no conversion: rebuild the index with this build)");
    }
    return {};
  }

  // A writable open marks an older readable store as this build's version (records.h: what
  // it has is read alike), so that an older build never misreads what this one adds.
  StoreResult<> upgrade_format(const lmdb::Txn& txn) {
    auto format = lift(meta_.get(txn, "format"));
    if (!format) return std::unexpected(format.error());
    if (records::decode_u32(*format).value_or(0) == records::kFormatVersion) return {};
    return lift(meta_.put(txn, "format", records::encode_u32(records::kFormatVersion)));
  }

  StoreResult<> load_read_only() {
    {
      auto txn = lift(begin_read());
      if (!txn) return std::unexpected(txn.error());
      // A format-2 store has no sketches database: read meta alone first, to name its version.
      auto meta = lmdb::Dbi::open(*txn, "meta", 0);
      if (!meta) {
        return store_error(Code::kCorrupt, "not a neardup index (" + meta.error().message + ")");
      }
      meta_ = *meta;
      if (auto format = check_format(*txn); !format) return format;
      if (auto opened = open_dbis(*txn, 0); !opened) {
        return store_error(Code::kCorrupt, "not a neardup index (" + opened.error().message + ")");
      }
      auto design = records::DesignState::decode(meta_.get(*txn, "design").value_or(""));
      if (!design) return corrupt("meta design");
      design_ = TableDesign::make(design->k, design->r);
      // Makes the handles opened in it usable by later transactions.
      if (auto committed = lift(txn->commit()); !committed) return committed;
    }
    // The queries' snapshot: the columns as committed now, their deltas rebuilt from it.
    auto snapshot = lift(begin_read());
    if (!snapshot) return std::unexpected(snapshot.error());
    snapshot_ = std::move(*snapshot);
    if (auto loaded = load_state(snapshot_, true); !loaded) return loaded;
    return rebuild_deltas(snapshot_);
  }


  StoreResult<> load_or_create() {
    auto wanted =
        TableDesign::for_store(config_.design_k, config_.expected_documents, config_.tables);
    if (!wanted) return store_error(Code::kInvalidArgument, wanted.error());
    design_ = *wanted;
    auto loaded = write(
        [&](const lmdb::Txn& txn) -> StoreResult<> {
          auto meta = lift(lmdb::Dbi::open(txn, "meta", MDB_CREATE));
          if (!meta) return std::unexpected(meta.error());
          meta_ = *meta;
          const records::DesignState want{design_.k, design_.r,
                                          static_cast<std::uint32_t>(design_.tables())};
          if (auto format = meta_.get(txn, "format"); !format) {
            if (format.error().code != MDB_NOTFOUND) return std::unexpected(from_lmdb(format.error()));
            auto p = lift(meta_.put(txn, "format", records::encode_u32(records::kFormatVersion)));
            if (!p) return p;
            if (auto d = lift(meta_.put(txn, "design", want.encode())); !d) return d;
          } else if (auto checked = check_format(txn); !checked) {
            return checked;
          } else if (auto upgraded = upgrade_format(txn); !upgraded) {
            return upgraded;
          }
          if (auto opened = open_dbis(txn, MDB_CREATE); !opened) return opened;
          auto stored = records::DesignState::decode(meta_.get(txn, "design").value_or(""));
          if (!stored) return corrupt("meta design");
          if (stored->k != want.k || stored->r != want.r) {
            return store_error(
                Code::kDesign,
                "stored design is k=" + std::to_string(stored->k) + " r=" +
                    std::to_string(stored->r) + " (" + std::to_string(stored->tables) +
                    " tables) but the config asks for k=" + std::to_string(want.k) + " r=" +
                    std::to_string(want.r) + " (" + std::to_string(want.tables) +
                    " tables; store.design_k, store.tables, store.expected_documents): rebuild "
                    "the index or set store.design_k and store.tables to the stored design");
          }
          return load_state(txn, false);
        },
        [&] {
          scheme_numbers_.clear();
          schemes_.clear();
          ids_.reset();
          members_.reset();
        });
    if (!loaded) return loaded;
    if (auto built = rebuild_id_filter(); !built) return built;
    auto txn = lift(lmdb::Txn::begin(env_, MDB_RDONLY));
    if (!txn) return std::unexpected(txn.error());
    if (auto rebuilt = rebuild_deltas(*txn); !rebuilt) return rebuilt;
    if (options_.presize_busy_deltas) {
      for (Column* column : all_columns()) column->presize_if_busy();
    }
    return {};
  }

  // Loads counters, schemes and columns (creating the ids column on a new index).
  StoreResult<> load_state(const lmdb::Txn& txn, bool read_only) {
    auto docs_cursor = lift(lmdb::Cursor::open(txn, docs_));
    if (!docs_cursor) return std::unexpected(docs_cursor.error());
    MDB_val key{}, value{};
    auto last = lift(docs_cursor->get(key, value, MDB_LAST));
    if (!last) return std::unexpected(last.error());
    next_doc_ = *last ? coding::decode_be64(static_cast<const char*>(key.mv_data)) + 1 : 1;
    *docs_cursor = lmdb::Cursor();
    if (auto docs = meta_.get(txn, "documents")) {
      auto count = records::decode_u64(*docs);
      if (!count) return corrupt("meta documents");
      documents_ = *count;
    }
    // Live schemes ("scheme/<id>") and dropped ones ("dropped/<number>" -> id), numbered 0..n-1.
    std::vector<std::pair<std::string, records::SchemeState>> schemes;
    std::vector<bool> dropped;
    bool bad = false;
    auto listed =
        lift(for_each_prefixed(txn, meta_, "scheme/", [&](std::string_view k, std::string_view v) {
          auto state = records::SchemeState::decode(v);
          if (!state) bad = true;
          if (state) schemes.emplace_back(std::string(k.substr(7)), *state);
        }));
    if (!listed) return listed;
    listed =
        lift(for_each_prefixed(txn, meta_, "dropped/", [&](std::string_view k, std::string_view v) {
          std::uint32_t number = 0;
          auto digits = k.substr(8);
          auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
          if (ec != std::errc() || end != digits.data() + digits.size()) bad = true;
          schemes.emplace_back(std::string(v), records::SchemeState{.number = number});
          if (dropped.size() <= number) dropped.resize(number + 1);
          dropped[number] = true;
        }));
    if (!listed) return listed;
    if (bad) return corrupt("a meta scheme record");
    std::sort(schemes.begin(), schemes.end(),
              [](const auto& a, const auto& b) { return a.second.number < b.second.number; });
    for (const auto& [name, state] : schemes) {
      if (state.number != schemes_.size()) return corrupt("meta scheme numbering");
      if (state.number < dropped.size() && dropped[state.number]) {
        schemes_.push_back(Scheme{.id = name, .state = state, .dropped = true});
        continue;
      }
      if (auto added = open_scheme(txn, name, state, false, read_only); !added) return added;
    }
    ids_ = std::make_unique<Column>("ids", 64, RunFormat::kWide, bucket_bits_,
                                    options_.delta_entries);
    if (auto r = lift(ids_->load(txn, meta_, !read_only, next_doc_ - 1, read_only)); !r) return r;
    members_ = std::make_unique<Column>("members", 64, RunFormat::kWide, bucket_bits_,
                                        options_.delta_entries);
    if (auto r = lift(members_->load(txn, meta_, !read_only, next_doc_ - 1, read_only)); !r) {
      return r;
    }
    auto forgotten = lift(for_each_prefixed(txn, forgotten_db_, "", [&](std::string_view k, std::string_view) {
      if (k.size() == 8) forgotten_.insert(coding::decode_be64(k.data()));
    }));
    if (!forgotten) return forgotten;
    return load_stored_samples(txn);
  }

  // The storage time of every kStoredSampleEvery-th document (a seek each).
  StoreResult<> load_stored_samples(const lmdb::Txn& txn) {
    stored_samples_.clear();
    auto cursor = lift(lmdb::Cursor::open(txn, docs_));
    if (!cursor) return std::unexpected(cursor.error());
    for (std::uint64_t doc = kStoredSampleEvery; doc < next_doc_; doc += kStoredSampleEvery) {
      const std::string wanted = coding::be64_key(doc);
      MDB_val key = lmdb::to_val(wanted), value{};
      auto found = lift(cursor->get(key, value, MDB_SET_KEY));
      if (!found) return std::unexpected(found.error());
      if (!*found) continue;
      auto record = DocRecord::decode(lmdb::to_view(value));
      if (!record) return corrupt("docs record " + std::to_string(doc));
      stored_samples_.emplace_back(doc, record->stored_at_s);
    }
    return {};
  }

  // Registers a new scheme (its LSH design from the page) in meta and opens its columns.
  StoreResult<> add_scheme(const lmdb::Txn& txn, const std::string& name,
                           const IndexItem::Page& page) {
    records::SchemeState state{.number = static_cast<std::uint32_t>(schemes_.size())};
    if (!page.sketch.empty()) {
      state.hashes = static_cast<std::uint32_t>(page.sketch.size());
      state.bands = page.bands;
      state.rows = page.rows;
    }
    if (auto p = lift(meta_.put(txn, "scheme/" + name, state.encode())); !p) return p;
    if (auto opened = open_scheme(txn, name, state, true); !opened) return opened;
    for (Column* column : columns_of(schemes_.back())) column->delta().mark();
    return {};
  }

  StoreResult<> open_scheme(const lmdb::Txn& txn, const std::string& name,
                            const records::SchemeState& state, bool create,
                            bool read_only = false) {
    scheme_numbers_[name] = state.number;
    Scheme& scheme = schemes_.emplace_back();
    scheme.id = name;
    scheme.state = state;
    const std::string number = std::to_string(state.number);
    for (std::size_t t = 0; t < design_.tables(); ++t) {
      scheme.tables.push_back(std::make_unique<Column>(
          "t/" + number + "/" + std::to_string(t), design_.prefix_bits(t), RunFormat::kWide,
          bucket_bits_, options_.delta_entries));
    }
    if (state.has_minhash()) {
      scheme.bands = std::make_unique<Column>("b/" + number, 64, RunFormat::kNarrow, bucket_bits_,
                                              2 * options_.delta_entries);
    }
    for (Column* column : columns_of(scheme)) {
      if (auto r = lift(column->load(txn, meta_, create, next_doc_ - 1, read_only)); !r) return r;
    }
    return {};
  }

  // Calls fn(doc, record) for every document past the lowest watermark, in order.
  template <typename Fn>
  StoreResult<> for_each_unmerged_doc(const lmdb::Txn& txn, Fn&& fn) {
    std::uint64_t from = ids_->watermark();
    for (Column* column : all_columns()) from = std::min(from, column->watermark());
    auto cursor = lift(lmdb::Cursor::open(txn, docs_));
    if (!cursor) return std::unexpected(cursor.error());
    const std::string start = coding::be64_key(from + 1);
    MDB_val key = lmdb::to_val(start), value{};
    for (auto found = lift(cursor->get(key, value, MDB_SET_RANGE));;
         found = lift(cursor->get(key, value, MDB_NEXT))) {
      if (!found) return std::unexpected(found.error());
      if (!*found) return {};
      const std::uint64_t doc = coding::decode_be64(static_cast<const char*>(key.mv_data));
      auto record = DocRecord::decode(lmdb::to_view(value));
      if (!record || record->scheme >= schemes_.size()) {
        return corrupt("docs record " + std::to_string(doc));
      }
      if (auto done = fn(doc, *record); !done) return done;
    }
  }

  // The docs table (and sketches) are the deltas' log: re-adds every document past a column's
  // watermark. Without presizing, a first pass counts each column's entries (a band entry per
  // band, without reading the sketches), so that each table is made once at the size it ends
  // at, rather than overflowing the small tables until one rehash at the end (a one-page
  // `neardup dedup` on a 1.2M-page store: 2.42 s and 1.71 GB against 2.49 s and 1.82 GB, medians).
  // With presizing, the busy columns' full-size tables take the entries after the rebuild, in
  // the bucket order of the small tables they went to; counting and reserving there made that
  // open slower (1.9 s against 1.6-1.7 s), so it is left as it was.
  StoreResult<> rebuild_deltas(const lmdb::Txn& txn) {
    if (!options_.presize_busy_deltas) {
      if (auto reserved = reserve_deltas(txn); !reserved) return reserved;
    }
    std::vector<std::uint64_t> keys;
    auto added = for_each_unmerged_doc(txn, [&](std::uint64_t doc, const DocRecord& record) {
      keys.clear();
      const Scheme& scheme = schemes_[record.scheme];
      if (scheme.bands && doc > scheme.bands->watermark() && indexed(record)) {
        auto sketch = get_sketch(txn, doc);
        if (!sketch) return StoreResult<>(std::unexpected(sketch.error()));
        if (!sketch->empty()) band_keys(*sketch, scheme.state.bands, scheme.state.rows, keys);
      }
      add_entries(doc, record, keys);
      return StoreResult<>{};
    });
    if (!added) return added;
    for (Column* column : all_columns()) column->delta().mark();
    return {};
  }

  // Gives each column's delta the table it will end the rebuild with (Delta::reserve), from a
  // count of its entries.
  StoreResult<> reserve_deltas(const lmdb::Txn& txn) {
    std::unordered_map<const Column*, std::uint64_t> entries;
    const Column* counting = nullptr;
    std::uint64_t* count = nullptr;
    std::vector<std::uint64_t> no_keys;  // as many as a page has band keys
    auto counted = for_each_unmerged_doc(txn, [&](std::uint64_t doc, const DocRecord& record) {
      const Scheme& scheme = schemes_[record.scheme];
      no_keys.assign(scheme.bands ? scheme.state.bands : 0, 0);
      for_each_entry(doc, record, no_keys, [&](const Column& column, const Entry&) {
        if (&column != counting) count = &entries[counting = &column];
        ++*count;
      });
      return StoreResult<>{};
    });
    if (!counted) return counted;
    for (Column* column : all_columns()) column->delta().reserve(entries[column]);
    return {};
  }

  StoreConfig config_;
  OpenOptions options_;
  std::vector<RunProbe> probes_;        // probe()'s scratch space
  std::vector<std::uint64_t> queries_;  // the permuted key of each table probe
  std::vector<std::vector<std::uint64_t>> keys_;  // apply_batch: each item's band keys
  std::vector<std::pair<Column*, Column::Slice>> slices_;  // written, not yet committed
  Candidates candidates_;
  std::vector<std::uint64_t> distinct_scratch_;  // sort_distinct's table
  std::vector<std::uint64_t> exact_docs_;        // indexed_copies_full's scratch
  TableDesign design_;
  std::uint32_t bucket_bits_ = 20;
  // Held while a writable index is open. Declared before env_, so released after the
  // environment (and every transaction of it) is closed.
  WriterLock writer_lock_;
  lmdb::Env env_;
  lmdb::Dbi meta_, docs_, sketches_, forgotten_db_, offsets_, pending_;
  // Read-only: the snapshot every query answers from, held for the Index's life.
  lmdb::Txn snapshot_;

  // Writer state (apply, trim_pending, lookup; guarded by writer_).
  std::mutex writer_;
  std::uint64_t batches_ = 0;  // apply() calls so far (Scheme::last_batch)
  std::mutex scheme_memory_mutex_;
  std::vector<std::uint64_t> scheme_memory_;  // per scheme number, after the last apply()
  std::map<std::string, std::uint32_t> scheme_numbers_;
  std::vector<Scheme> schemes_;  // by scheme number
  std::unique_ptr<Column> ids_;
  std::unique_ptr<Column> members_;  // key: a cluster's first document; doc: a member
  IdFilter id_filter_;  // the hashes in ids_'s runs (not its delta)
  std::set<std::uint64_t> forgotten_;  // documents forget() removed (the forgotten database)
  // (doc, stored_at_s) of every kStoredSampleEvery-th document, for expired_through().
  static constexpr std::uint64_t kStoredSampleEvery = 4096;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> stored_samples_;
  std::int64_t now_ms_ = 0;  // the time of the current request (store.retention)
  std::uint64_t next_doc_ = 1, documents_ = 0;
  std::uint64_t map_generation_ = 0;  // incremented whenever the map is resized

  // Held shared by readers' transactions, exclusively while the map is resized (LMDB: no
  // transaction of the process may be active in mdb_env_set_mapsize).
  std::shared_mutex map_lock_;
};

}  // namespace

StoreResult<std::unique_ptr<Index>> Index::open(const StoreConfig& config,
                                                const OpenOptions& options) {
  auto index = std::make_unique<LmdbIndex>(config, options);
  if (auto opened = index->open(); !opened) return std::unexpected(opened.error());
  return index;
}

}  // namespace neardup
