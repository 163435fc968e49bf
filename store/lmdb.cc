#include "store/lmdb.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace neardup::lmdb {

LmdbError error(int code, std::string_view what) {
  return LmdbError{code, std::string(what) + ": " + mdb_strerror(code)};
}

Result<Env> Env::open(const std::string& dir, const Options& options) {
  MDB_env* raw = nullptr;
  if (int rc = mdb_env_create(&raw); rc != 0) return std::unexpected(error(rc, "mdb_env_create"));
  Env env(raw);
  if (int rc = mdb_env_set_mapsize(raw, options.map_size); rc != 0) {
    return std::unexpected(error(rc, "mdb_env_set_mapsize"));
  }
  if (int rc = mdb_env_set_maxdbs(raw, options.max_dbs); rc != 0) {
    return std::unexpected(error(rc, "mdb_env_set_maxdbs"));
  }
  if (int rc = mdb_env_set_maxreaders(raw, options.max_readers); rc != 0) {
    return std::unexpected(error(rc, "mdb_env_set_maxreaders"));
  }
  if (int rc = mdb_env_open(raw, dir.c_str(), options.flags, kStoreFileMode); rc != 0) {
    return std::unexpected(error(rc, "mdb_env_open " + dir));
  }
  return env;
}

// The bytes env's last commit uses, (its last page + 1) × the page size, into *bytes; LMDB's
// error code.
static int last_commit_bytes(MDB_env* env, std::uint64_t* bytes) {
  MDB_envinfo info{};
  MDB_stat st{};
  if (int rc = mdb_env_info(env, &info); rc != 0) return rc;
  if (int rc = mdb_env_stat(env, &st); rc != 0) return rc;
  *bytes = (static_cast<std::uint64_t>(info.me_last_pgno) + 1) * st.ms_psize;
  return 0;
}

Result<std::uint64_t> Env::used_bytes() const {
  std::uint64_t bytes = 0;
  if (int rc = last_commit_bytes(env_, &bytes); rc != 0) {
    return std::unexpected(error(rc, "mdb_env_info"));
  }
  return bytes;
}

Result<> Env::check_file_size(const std::string& dir) const {
  auto used = used_bytes();
  if (!used) return std::unexpected(used.error());
  const std::uint64_t needed = *used;
  const std::string file = dir + "/data.mdb";
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return std::unexpected(error(errno, "stat " + file));
  if (static_cast<std::uint64_t>(st.st_size) < needed) {
    return std::unexpected(LmdbError{
        MDB_CORRUPTED, file + " is " + std::to_string(st.st_size) + " bytes, but its last commit " +
                           "uses " + std::to_string(needed) +
                           ": the file was truncated or damaged (restore the store from a copy)"});
  }
  return {};
}

Env& Env::operator=(Env&& other) noexcept {
  if (this != &other) {
    if (env_ != nullptr) mdb_env_close(env_);
    env_ = std::exchange(other.env_, nullptr);
  }
  return *this;
}

Env::~Env() {
  if (env_ != nullptr) mdb_env_close(env_);
}

Result<> Env::set_map_size(std::uint64_t bytes) {
  if (int rc = mdb_env_set_mapsize(env_, bytes); rc != 0) {
    return std::unexpected(error(rc, "mdb_env_set_mapsize"));
  }
  return {};
}

Result<MDB_envinfo> Env::info() const {
  MDB_envinfo info{};
  if (int rc = mdb_env_info(env_, &info); rc != 0) {
    return std::unexpected(error(rc, "mdb_env_info"));
  }
  return info;
}

Result<MDB_stat> Env::stat() const {
  MDB_stat stat{};
  if (int rc = mdb_env_stat(env_, &stat); rc != 0) {
    return std::unexpected(error(rc, "mdb_env_stat"));
  }
  return stat;
}

Result<Txn> Txn::begin(const Env& env, unsigned flags) {
  MDB_txn* raw = nullptr;
  if (int rc = mdb_txn_begin(env.get(), nullptr, flags, &raw); rc != 0) {
    return std::unexpected(error(rc, "mdb_txn_begin"));
  }
  return Txn(raw, (flags & MDB_RDONLY) == 0);
}

Txn& Txn::operator=(Txn&& other) noexcept {
  if (this != &other) {
    abort();
    txn_ = std::exchange(other.txn_, nullptr);
    write_ = other.write_;
  }
  return *this;
}

Result<> Txn::commit() {
  MDB_txn* txn = std::exchange(txn_, nullptr);
  MDB_env* env = mdb_txn_env(txn);
  if (int rc = mdb_txn_commit(txn); rc != 0) return std::unexpected(error(rc, "mdb_txn_commit"));
  if (write_) cover_last_page(env);
  return {};
}

void Txn::cover_last_page(MDB_env* env) {
  // Best effort: the commit stands either way (a failure shows at the next open).
  mdb_filehandle_t fd{};
  std::uint64_t needed = 0;
  struct stat file {};
  if (mdb_env_get_fd(env, &fd) != 0 || last_commit_bytes(env, &needed) != 0 ||
      ::fstat(fd, &file) != 0) {
    return;
  }
  if (static_cast<std::uint64_t>(file.st_size) < needed) {
    (void)::ftruncate(fd, static_cast<off_t>(needed));
  }
}

void Txn::abort() {
  if (txn_ != nullptr) mdb_txn_abort(std::exchange(txn_, nullptr));
}

Result<Dbi> Dbi::open(const Txn& txn, const std::string& name, unsigned flags) {
  Dbi dbi;
  if (int rc = mdb_dbi_open(txn.get(), name.c_str(), flags, &dbi.dbi); rc != 0) {
    return std::unexpected(error(rc, "mdb_dbi_open " + name));
  }
  return dbi;
}

Result<std::string_view> Dbi::get(const Txn& txn, std::string_view key) const {
  MDB_val k = to_val(key), v{};
  if (int rc = mdb_get(txn.get(), dbi, &k, &v); rc != 0) {
    return std::unexpected(error(rc, "mdb_get"));
  }
  return to_view(v);
}

Result<> Dbi::put(const Txn& txn, std::string_view key, std::string_view value,
                  unsigned flags) const {
  MDB_val k = to_val(key), v = to_val(value);
  if (int rc = mdb_put(txn.get(), dbi, &k, &v, flags); rc != 0) {
    return std::unexpected(error(rc, "mdb_put"));
  }
  return {};
}

Result<char*> Dbi::reserve(const Txn& txn, std::string_view key, std::size_t size,
                           unsigned flags) const {
  MDB_val k = to_val(key), v{size, nullptr};
  if (int rc = mdb_put(txn.get(), dbi, &k, &v, flags | MDB_RESERVE); rc != 0) {
    return std::unexpected(error(rc, "mdb_put"));
  }
  return static_cast<char*>(v.mv_data);
}

Result<> Dbi::del(const Txn& txn, std::string_view key) const {
  MDB_val k = to_val(key);
  if (int rc = mdb_del(txn.get(), dbi, &k, nullptr); rc != 0) {
    return std::unexpected(error(rc, "mdb_del"));
  }
  return {};
}

Result<> Dbi::drop(const Txn& txn, bool remove) const {
  if (int rc = mdb_drop(txn.get(), dbi, remove ? 1 : 0); rc != 0) {
    return std::unexpected(error(rc, "mdb_drop"));
  }
  return {};
}

Result<MDB_stat> Dbi::stat(const Txn& txn) const {
  MDB_stat stat{};
  if (int rc = mdb_stat(txn.get(), dbi, &stat); rc != 0) {
    return std::unexpected(error(rc, "mdb_stat"));
  }
  return stat;
}

Result<Cursor> Cursor::open(const Txn& txn, Dbi dbi) {
  MDB_cursor* raw = nullptr;
  if (int rc = mdb_cursor_open(txn.get(), dbi.dbi, &raw); rc != 0) {
    return std::unexpected(error(rc, "mdb_cursor_open"));
  }
  return Cursor(raw);
}

Cursor& Cursor::operator=(Cursor&& other) noexcept {
  if (this != &other) {
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
    cursor_ = std::exchange(other.cursor_, nullptr);
  }
  return *this;
}

Cursor::~Cursor() {
  if (cursor_ != nullptr) mdb_cursor_close(cursor_);
}

Result<bool> Cursor::get(MDB_val& key, MDB_val& value, MDB_cursor_op op) {
  int rc = mdb_cursor_get(cursor_, &key, &value, op);
  if (rc == MDB_NOTFOUND) return false;
  if (rc != 0) return std::unexpected(error(rc, "mdb_cursor_get"));
  return true;
}

Result<> Cursor::del() {
  if (int rc = mdb_cursor_del(cursor_, 0); rc != 0) {
    return std::unexpected(error(rc, "mdb_cursor_del"));
  }
  return {};
}

}  // namespace neardup::lmdb
