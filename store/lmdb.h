// RAII wrappers over LMDB (lmdb.h) that keep its contract visible.
//
// Every call that can fail returns its LMDB return code as a value (LmdbError carries the code
// and mdb_strerror's text); nothing throws, and MDB_MAP_FULL, MDB_MAP_RESIZED and a failed
// commit reach the caller unchanged so that it can grow the map and retry. The rules of lmdb.h
// still hold: one write transaction at a time per environment; a read transaction sees one
// snapshot and never blocks the writer; a value pointer returned by a get is valid only until
// the transaction ends or the next write in it.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace neardup::lmdb {

// The modes a store's files and its directory are created with (before the umask): readable by
// the owner's group, never by others, whoever starts the process and however.
inline constexpr unsigned kStoreFileMode = 0640;
inline constexpr unsigned kStoreDirectoryMode = 0750;

// An LMDB return code and its message ("<what>: <mdb_strerror(code)>").
struct LmdbError {
  int code = 0;
  std::string message;
  bool map_full() const { return code == MDB_MAP_FULL; }
};

template <typename T = void>
using Result = std::expected<T, LmdbError>;

// Builds the error for a failed call: `what` names the call and its object ("put docs").
LmdbError error(int code, std::string_view what);

inline MDB_val to_val(std::string_view bytes) {
  return MDB_val{bytes.size(), const_cast<char*>(bytes.data())};
}
inline std::string_view to_view(const MDB_val& val) {
  return {static_cast<const char*>(val.mv_data), val.mv_size};
}

// One LMDB environment (a directory holding data.mdb and lock.mdb).
class Env {
 public:
  struct Options {
    std::uint64_t map_size = 1ull << 30;
    unsigned max_dbs = 1024;
    unsigned max_readers = 126;
    unsigned flags = 0;  // MDB_NOSYNC, MDB_RDONLY, MDB_NOTLS, ...
  };
  // Opens the environment in an existing directory. Returns ENOENT when the directory (or, with
  // MDB_RDONLY, the data file) does not exist, EACCES, MDB_VERSION_MISMATCH, MDB_INVALID, ...
  static Result<Env> open(const std::string& dir, const Options& options);

  Env() = default;
  Env(Env&& other) noexcept : env_(std::exchange(other.env_, nullptr)) {}
  Env& operator=(Env&& other) noexcept;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  ~Env();

  MDB_env* get() const { return env_; }

  // mdb_env_set_mapsize: only when no transaction of this process is active. 0 adopts the size
  // another process set (after MDB_MAP_RESIZED).
  Result<> set_map_size(std::uint64_t bytes);
  Result<MDB_envinfo> info() const;
  Result<MDB_stat> stat() const;
  // Bytes of the map the last commit uses: (its last page + 1) × the page size.
  Result<std::uint64_t> used_bytes() const;
  // MDB_CORRUPTED when data.mdb in `dir` is shorter than the pages the last commit uses (a
  // truncated copy or a damaged file system): reading the missing pages through the map would
  // end in SIGBUS. Errors of stat(2) as their errno.
  Result<> check_file_size(const std::string& dir) const;
  unsigned max_key_size() const { return static_cast<unsigned>(mdb_env_get_maxkeysize(env_)); }

 private:
  explicit Env(MDB_env* env) : env_(env) {}
  MDB_env* env_ = nullptr;
};

// A transaction; aborted on destruction unless committed.
class Txn {
 public:
  // flags: 0 for a write transaction, MDB_RDONLY for a read one. A write transaction waits for
  // the previous one to end. Returns MDB_MAP_RESIZED when another process grew the map (call
  // Env::set_map_size(0) and retry), MDB_READERS_FULL, ENOMEM.
  static Result<Txn> begin(const Env& env, unsigned flags);

  Txn() = default;
  Txn(Txn&& other) noexcept : txn_(std::exchange(other.txn_, nullptr)), write_(other.write_) {}
  Txn& operator=(Txn&& other) noexcept;
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;
  ~Txn() { abort(); }

  MDB_txn* get() const { return txn_; }

  // Commits; the handle is spent either way. Returns EINVAL, ENOSPC, EIO, ENOMEM: on failure
  // nothing of the transaction is durable. After a write transaction the file is extended (a
  // hole) to the commit's last page when it ends before: LMDB counts pages the transaction
  // allocated and freed again ("loose") without writing them, and Env::check_file_size would
  // take such a store for a truncated one.
  Result<> commit();
  void abort();

 private:
  Txn(MDB_txn* txn, bool write) : txn_(txn), write_(write) {}
  static void cover_last_page(MDB_env* env);
  MDB_txn* txn_ = nullptr;
  bool write_ = false;
};

// A database handle (mdb_dbi_open). Handles are environment-wide and stay valid after the
// transaction that opened them commits; they need no closing.
struct Dbi {
  MDB_dbi dbi = 0;

  // Opens (flags with MDB_CREATE: creating) a named database. MDB_NOTFOUND when it does not
  // exist and MDB_CREATE is not given; MDB_DBS_FULL past max_dbs.
  static Result<Dbi> open(const Txn& txn, const std::string& name, unsigned flags);

  // The value for a key (valid until the transaction ends or writes); MDB_NOTFOUND when absent.
  Result<std::string_view> get(const Txn& txn, std::string_view key) const;
  // mdb_put. MDB_MAP_FULL, MDB_TXN_FULL, MDB_KEYEXIST (with MDB_NOOVERWRITE / MDB_APPEND out of
  // order), EACCES in a read-only transaction.
  Result<> put(const Txn& txn, std::string_view key, std::string_view value,
               unsigned flags = 0) const;
  // Reserves `size` bytes for the value and returns where to write them (MDB_RESERVE).
  Result<char*> reserve(const Txn& txn, std::string_view key, std::size_t size,
                        unsigned flags = 0) const;
  // mdb_del of a key; MDB_NOTFOUND when absent.
  Result<> del(const Txn& txn, std::string_view key) const;
  // mdb_drop: empties the database, and with remove also deletes it (the handle is closed when
  // the transaction commits).
  Result<> drop(const Txn& txn, bool remove) const;
  Result<MDB_stat> stat(const Txn& txn) const;
};

// A cursor over one database in one transaction; closed on destruction. LMDB frees the cursors
// of a write transaction when it ends, so such a Cursor must be destroyed before its
// transaction commits or aborts.
class Cursor {
 public:
  static Result<Cursor> open(const Txn& txn, Dbi dbi);

  Cursor() = default;
  Cursor(Cursor&& other) noexcept : cursor_(std::exchange(other.cursor_, nullptr)) {}
  Cursor& operator=(Cursor&& other) noexcept;
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
  ~Cursor();

  // mdb_cursor_get with op (MDB_SET_RANGE, MDB_NEXT, MDB_FIRST, ...). Returns false at
  // MDB_NOTFOUND, an error for anything else. key is input for the positioning ops.
  Result<bool> get(MDB_val& key, MDB_val& value, MDB_cursor_op op);
  // mdb_cursor_del of the current item.
  Result<> del();

 private:
  explicit Cursor(MDB_cursor* cursor) : cursor_(cursor) {}
  MDB_cursor* cursor_ = nullptr;
};

}  // namespace neardup::lmdb
