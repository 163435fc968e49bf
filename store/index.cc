// The LMDB index (index.h): one store's environment (store_env.h), the in-memory catalog of its
// schemes and columns (catalog.h, loaded by recovery.cc), the write path (write_path.h), the
// read path (read_path.h) and its administration (admin.h), behind the Index interface. Byte
// layouts: store/FORMAT.md and store/records.h.
//
// Locking: the catalog's mutex is the writer mutex. apply(), trim_pending(), forget() and
// drop_scheme() hold it throughout; a query holds it only while it probes the columns (whose
// deltas the writer changes) and then reads the documents it found from its own read
// transaction without it, so that however large its answer it never holds up a batch. stats()
// and applied_offset() never take it.
#include "store/index.h"

#include <malloc.h>

#include <algorithm>

#include "store/admin.h"
#include "store/catalog.h"
#include "store/passages.h"
#include "store/read_path.h"
#include "store/store_env.h"
#include "store/write_path.h"

namespace neardup {
namespace {

using Code = StoreError::Code;

class LmdbIndex final : public Index {
 public:
  LmdbIndex(std::unique_ptr<StoreEnv> env, const StoreConfig& config, const OpenOptions& options)
      : env_(std::move(env)), catalog_(config, options), writer_(*env_, catalog_) {
    if (options.timing != nullptr) env_->time_commits(&options.timing->commit_ns);
  }

  StoreResult<> open() {
    MutexLock lock(catalog_.mutex);
    StoreResult<> loaded;
    if (env_->read_only()) {
      // The queries' snapshot: the columns as committed now, their deltas rebuilt from it.
      loaded = catalog_.load_read_only(*env_, snapshot_);
    } else {
      loaded = catalog_.create_or_load(*env_);
      if (loaded) loaded = env_->grow_ahead();
    }
    // The rebuild's temporary lists (each delta's overflow before its full-size table took it)
    // are freed in the middle of the heap, where free() keeps them: hand their pages back.
    malloc_trim(0);
    if (!loaded) {
      loaded.error().message = "index " + catalog_.config.path + ": " + loaded.error().message;
      return std::unexpected(loaded.error());
    }
    return {};
  }

  StoreResult<std::vector<Verdict>> apply(std::span<const IndexItem> items,
                                          BatchLearner* learner) override {
    MutexLock lock(writer_.mutex());  // catalog_.mutex
    return writer_.apply(items, learner);
  }

  StoreResult<std::vector<std::pair<std::string, std::string>>> learned(
      std::string_view prefix) override {
    return admin::learned(*env_, prefix);
  }

  StoreResult<std::optional<std::int64_t>> applied_offset(const std::string& partition) override {
    return admin::applied_offset(*env_, partition);
  }

  StoreResult<> trim_pending(const std::string& partition, std::int64_t committed_offset) override {
    MutexLock lock(catalog_.mutex);
    return admin::trim_pending(*env_, partition, committed_offset);
  }

  IndexStats stats() override { return admin::stats(*env_, catalog_); }

  StoreResult<Verdict> lookup(const PageRequest& page) override {
    Query query;
    Candidates found;
    Holders holders;
    records::SchemeState scheme_state;
    bool has_bands = false;
    {
      MutexLock lock(catalog_.mutex);
      const LshDesign lsh = catalog_.lsh_design(page);
      if (auto valid = check_page(catalog_.design, page, lsh); !valid) {
        return std::unexpected(valid.error());
      }
      Scheme* scheme = catalog_.scheme(page.scheme);
      if (scheme == nullptr) return Verdict{};
      scheme->last_batch = catalog_.batches;
      if (auto fits = check_sketch_fits(*scheme, page, lsh); !fits)
        return std::unexpected(fits.error());
      if (auto begun = begin_query(); !begun)
        return std::unexpected(begun.error());
      else
        query = std::move(*begun);
      for (Column* column : catalog_.columns_of(*scheme)) {
        if (auto r = lift(column->open_directories(query.txn(), env_->map_generation())); !r) {
          return std::unexpected(r.error());
        }
      }
      std::vector<std::uint64_t> keys;
      if (!page.sketch.empty()) {
        const bool wide = scheme->state.wide_bands;
        catalog_.band_keys(page.sketch, wide ? page.sketch_upper : SketchUpper{}, lsh.bands,
                           lsh.rows, keys);
      }
      prober_.probe(catalog_, *scheme, page, keys, nullptr, found);
      if (scheme->passages && (!page.anchors.empty() || !page.paragraphs.empty())) {
        prober_.holders(catalog_, *scheme->passages, page, holders);
      }
      scheme_state = scheme->state;
      has_bands = scheme->bands != nullptr;
    }
    const Documents docs = query.documents(env_->tables(), catalog_.config);
    auto verdict = decide(docs, scheme_state, has_bands, page, found);
    if (!verdict || holders.empty()) return verdict;
    const std::uint64_t own_cluster =
        verdict->status == Verdict::Status::kDuplicate ? found.matched_cluster : 0;
    if (auto related = relate(docs, page, holders, own_cluster, *verdict); !related) {
      return std::unexpected(related.error());
    }
    return verdict;
  }

  StoreResult<std::optional<StoredPage>> find(const std::string& id) override {
    Query query;
    std::vector<std::uint64_t> candidates;
    {
      MutexLock lock(catalog_.mutex);
      auto begun = begin_query();
      if (!begun) return std::unexpected(begun.error());
      query = std::move(*begun);
      if (auto r = lift(catalog_.ids->open_directories(query.txn(), env_->map_generation())); !r) {
        return std::unexpected(r.error());
      }
      prober_.ids(catalog_, id, candidates);
    }
    const Documents docs = query.documents(env_->tables(), catalog_.config);
    auto found = docs.find_id(candidates, id);
    if (!found) return std::unexpected(found.error());
    if (!*found || !docs.live((*found)->second)) return std::nullopt;
    return docs.stored_page((*found)->first, (*found)->second);
  }

  StoreResult<Cluster> cluster(std::uint64_t root_doc, std::size_t max_members) override {
    Query query;
    std::vector<std::uint64_t> members;
    {
      MutexLock lock(catalog_.mutex);
      auto begun = begin_query();
      if (!begun) return std::unexpected(begun.error());
      query = std::move(*begun);
      if (auto r = lift(catalog_.members->open_directories(query.txn(), env_->map_generation()));
          !r) {
        return std::unexpected(r.error());
      }
      prober_.members(catalog_, root_doc, members);
    }
    return query.documents(env_->tables(), catalog_.config).cluster(root_doc, members, max_members);
  }

  StoreResult<> for_each_cluster(std::size_t min_size, const std::string& scheme,
                                 const std::function<bool(const Cluster&)>& fn) override {
    // The walk reads the members column's delta throughout: it holds the writer mutex (the
    // daemon never walks; `neardup clusters` opens the store read-only).
    MutexLock lock(catalog_.mutex);
    auto query = begin_query();
    if (!query) return std::unexpected(query.error());
    std::optional<std::uint32_t> number;
    if (!scheme.empty()) {
      Scheme* wanted = catalog_.scheme(scheme);
      if (wanted == nullptr) return {};  // no page of that scheme
      number = wanted->state.number;
    }
    const Documents docs = query->documents(env_->tables(), catalog_.config);
    const std::vector<SchemeName> names = catalog_.scheme_names();
    std::uint64_t root = 0;
    std::vector<std::uint64_t> members;
    bool stop = false;
    StoreResult<> failed;
    auto emit = [&]() {
      if (members.empty() || stop || !failed) return;
      auto cluster = docs.cluster(root, members, SIZE_MAX);
      if (!cluster) {
        failed = std::unexpected(cluster.error());
        return;
      }
      if (cluster->members.size() >= std::max<std::size_t>(min_size, 1) &&
          (!number || cluster->scheme == names[*number].id)) {
        stop = !fn(*cluster);
      }
    };
    auto walked = lift(catalog_.members->for_each_sorted(query->txn(), [&](const Entry& e) {
      if (e.key != root) {
        emit();
        members.clear();
        root = e.key;
      }
      if (members.empty() || members.back() != e.doc) members.push_back(e.doc);
    }));
    if (!walked) return walked;
    emit();
    return failed;
  }

  StoreResult<std::size_t> forget(std::span<const std::string> ids) override {
    MutexLock lock(catalog_.mutex);
    return admin::forget(*env_, catalog_, ids);
  }

  StoreResult<DroppedScheme> drop_scheme(const std::string& id) override {
    MutexLock lock(catalog_.mutex);
    return admin::drop_scheme(*env_, catalog_, id);
  }

 private:
  // A query's transaction: the read-only store's snapshot, or a read transaction of its own
  // (which keeps the map from being resized while it lives: store_env.h).
  class Query {
   public:
    Query() = default;
    explicit Query(const lmdb::Txn* snapshot) : txn_(snapshot) {}
    explicit Query(std::unique_ptr<StoreEnv::ReadTxn> read)
        : read_(std::move(read)), txn_(&read_->txn) {}
    const lmdb::Txn& txn() const { return *txn_; }
    Documents documents(const StoreTables& tables, const StoreConfig& config) const {
      return Documents(*txn_, tables, schemes, config.retention_seconds, now_ms);
    }
    std::vector<SchemeName> schemes;
    std::int64_t now_ms = 0;

   private:
    std::unique_ptr<StoreEnv::ReadTxn> read_;
    const lmdb::Txn* txn_ = nullptr;
  };

  // Starts a query: its transaction, the scheme ids and the time. Under the writer mutex, so
  // that its transaction and the deltas probed with it agree.
  StoreResult<Query> begin_query() REQUIRES(catalog_.mutex) {
    Query query;
    if (env_->read_only()) {
      query = Query(&snapshot_);
    } else {
      auto read = env_->begin_read();
      if (!read) return std::unexpected(read.error());
      query = Query(std::move(*read));
    }
    query.schemes = catalog_.scheme_names();
    query.now_ms = catalog_.now();
    return query;
  }

  std::unique_ptr<StoreEnv> env_;
  Catalog catalog_;
  BatchWriter writer_;                        // each call needs catalog_.mutex (as writer_.mutex())
  Prober prober_ GUARDED_BY(catalog_.mutex);  // the queries' scratch space
  // Read-only: the snapshot every query answers from, held for the Index's life.
  lmdb::Txn snapshot_;
};

}  // namespace

StoreResult<std::unique_ptr<Index>> Index::open(const StoreConfig& config,
                                                const OpenOptions& options) {
  auto env = StoreEnv::open(config, options.read_only);
  if (!env) return std::unexpected(env.error());
  auto index = std::make_unique<LmdbIndex>(std::move(*env), config, options);
  if (auto opened = index->open(); !opened) return std::unexpected(opened.error());
  return index;
}

}  // namespace neardup
