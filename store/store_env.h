// The LMDB environment of one store (store/FORMAT.md): opening it, its named databases, write
// transactions that survive a full map by growing it, and read transactions beside them.
//
//   auto env = StoreEnv::open(config, read_only);      // the writer lock, the file, the tables
//   env->write([&](const lmdb::Txn& txn) { ...puts... return StoreResult<>{}; },
//              [&] { ...undo what the body changed in memory... });
//   auto txn = env->begin_read();                      // never blocks the writer
//
// LMDB allows one write transaction at a time; the index's single writer runs write(). Readers
// on any thread open read transactions; growing the map waits for them (LMDB: no transaction of
// the process may be open in mdb_env_set_mapsize), which the map lock arranges.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/mutex.h"
#include "config/config.h"
#include "store/lmdb.h"
#include "store/status.h"
#include "store/writer_lock.h"

namespace neardup {

// The store's named databases (FORMAT.md). Handles are environment-wide: once opened, any
// transaction uses them.
struct StoreTables {
  lmdb::Dbi meta, docs, sketches, forgotten, offsets, pending;
  // Absent (has_sketch_highs false) in a store of version 5 or older opened read-only: its
  // sketches hold every bit.
  lmdb::Dbi sketch_highs;
  bool has_sketch_highs = false;
  // Absent (has_passages false) in a store of version 6 or older opened read-only: it has no
  // passages.
  lmdb::Dbi passage_log, relations;
  bool has_passages = false;
  // What schemes learned from their pages (BatchLearner, index.h): absent in a store no
  // writer of this version opened (nothing learned).
  lmdb::Dbi learned;
  bool has_learned = false;
  // The first document whose `docs` record is compact (records.h, DocRecord): meta
  // "docs_compact_from", read at open; kNoCompactDocs in a store of version 7 or older opened
  // read-only.
  std::uint64_t docs_compact_from = 1;
  // Documents from this number on are in blocks in `docs`, or in `docs_tail` until they fill
  // one (docs_table.h): meta "docs_block_from", read at open; records::kNoDocBlocks (and no
  // docs_tail) in a store of version 9 or older opened read-only.
  std::uint64_t docs_block_from = 1;
  lmdb::Dbi docs_tail;
  bool has_docs_tail = false;
};

// Nanoseconds since `start` (the timings of OpenOptions::timing).
inline std::uint64_t nanos_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

// When set, the time spent in commits is added here (benchmarks; OpenOptions::timing).
struct CommitTiming {
  std::uint64_t* commit_ns = nullptr;
};

class StoreEnv {
 public:
  // Opens the environment at config.path. A writer creates the directory when needed, takes the
  // store's writer lock (kLocked when another process holds it) and refuses a file system with
  // less than kMinFreeBytes free (kFull); read-only, a store must exist (kNotFound). The tables
  // are opened by open_tables().
  static StoreResult<std::unique_ptr<StoreEnv>> open(const StoreConfig& config, bool read_only);

  // Writers refuse to open a store on a file system with less free space than this.
  static constexpr std::uint64_t kMinFreeBytes = 16ull << 20;

  // Opens the tables in txn (flags: MDB_CREATE to create them).
  StoreResult<> open_tables(const lmdb::Txn& txn, unsigned flags);
  const StoreTables& tables() const { return tables_; }
  StoreTables& tables() { return tables_; }

  // A read transaction, holding the map lock shared for its life: the map is not resized under
  // it. Read-only, a map another process grew is adopted first.
  class ReadTxn {
   public:
    // Holds `map` shared for the object's life, which the analysis cannot follow.
    explicit ReadTxn(SharedMutex& map) NO_THREAD_SAFETY_ANALYSIS : map_(map) { map_.lock_shared(); }
    ~ReadTxn() NO_THREAD_SAFETY_ANALYSIS {
      txn.abort();
      map_.unlock_shared();
    }
    ReadTxn(const ReadTxn&) = delete;
    ReadTxn& operator=(const ReadTxn&) = delete;

    lmdb::Txn txn;

   private:
    SharedMutex& map_;
  };
  StoreResult<std::unique_ptr<ReadTxn>> begin_read() EXCLUDES(map_lock_);
  // A read transaction without the map lock, for the writer's own thread between its writes
  // (grow() runs on that thread too) and for read-only stores (whose map this process never
  // resizes but to adopt another's size, before any transaction is open).
  lmdb::Result<lmdb::Txn> begin_read_unlocked();

  // Runs body(txn) in a write transaction and commits it. On MDB_MAP_FULL (from body or the
  // commit) it aborts, calls undo(), doubles the map up to store.max_map_size and runs body
  // again; on any other failure it calls undo() and returns the error (with the file system's
  // free space when it is out of space). Writer thread only.
  template <typename Body, typename Undo>
  StoreResult<> write(Body&& body, Undo&& undo);

  // Doubles the map while the last commit uses more than three quarters of it, so that a batch
  // seldom runs into MDB_MAP_FULL (whose work is thrown away) and a reopened store, which maps
  // just its file, grows before its first batches. Readers never hold the writer up here: while
  // a read transaction is open the map is left as it is (the next batch tries again, and a
  // batch that fills the map waits for them in write()). Writer thread, no transaction open.
  StoreResult<> grow_ahead() EXCLUDES(map_lock_);

  // Incremented whenever the map moves (Column::open_directories reloads then).
  std::uint64_t map_generation() const { return map_generation_.load(); }
  const StoreConfig& config() const { return config_; }
  bool read_only() const { return read_only_; }
  const lmdb::Env& env() const { return env_; }
  // Bytes the store's file occupies on disk; 0 when it cannot be read.
  std::uint64_t bytes_on_disk() const;
  // The map's size now (0 when it cannot be read). Any thread.
  std::uint64_t map_size() EXCLUDES(map_lock_);

  // Times commits from now on (OpenOptions::timing).
  void time_commits(std::uint64_t* commit_ns) { commit_ns_ = commit_ns; }

 private:
  StoreEnv(StoreConfig config, bool read_only)
      : config_(std::move(config)), read_only_(read_only) {}
  StoreResult<> grow() EXCLUDES(map_lock_);
  StoreResult<> grow_locked() REQUIRES(map_lock_);
  // The failed write's error with the path and the bytes free, when it ran out of space.
  StoreResult<> with_space(StoreResult<> failed) const;

  const StoreConfig config_;
  const bool read_only_;
  std::uint64_t* commit_ns_ = nullptr;
  // Held while a writable store is open. Declared before env_, so released after the
  // environment (and every transaction of it) is closed.
  WriterLock writer_lock_;
  lmdb::Env env_;
  StoreTables tables_;
  std::atomic<std::uint64_t> map_generation_{0};
  // Held shared by readers' transactions, exclusively while the map is resized.
  SharedMutex map_lock_;
};

template <typename Body, typename Undo>
StoreResult<> StoreEnv::write(Body&& body, Undo&& undo) {
  while (true) {
    auto txn = lift(lmdb::Txn::begin(env_, 0));
    if (!txn) return std::unexpected(txn.error());
    StoreResult<> done = body(*txn);
    if (!done) {
      undo();  // first: it closes cursors that LMDB frees with the transaction
      txn->abort();
    } else {
      const auto start = std::chrono::steady_clock::now();
      done = lift(txn->commit());
      if (commit_ns_ != nullptr) *commit_ns_ += nanos_since(start);
      if (!done) undo();
    }
    if (done) return {};
    if (!(done.error().code == StoreError::Code::kLmdb && done.error().lmdb_code == MDB_MAP_FULL)) {
      return with_space(std::move(done));
    }
    if (auto grown = grow(); !grown) return grown;
  }
}

// Calls fn(key, value) for every entry of `dbi` whose key starts with `prefix`, in key order.
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

}  // namespace neardup
