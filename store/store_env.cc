#include "store/store_env.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <initializer_list>

namespace neardup {
namespace {

using Code = StoreError::Code;

// Bytes available to this process on the file system holding `path`, if known.
std::optional<std::uint64_t> free_bytes(const std::string& path) {
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

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
    return store_error(Code::kLmdb,
                       "cannot create " + path + ": " + (ec ? ec.message() : std::strerror(errno)));
  }
  return {};
}

}  // namespace

StoreResult<std::unique_ptr<StoreEnv>> StoreEnv::open(const StoreConfig& config, bool read_only) {
  namespace fs = std::filesystem;
  std::unique_ptr<StoreEnv> store(new StoreEnv(config, read_only));
  std::error_code ec;
  if (read_only) {
    if (!fs::exists(fs::path(config.path) / "data.mdb", ec)) {
      return store_error(Code::kNotFound, "no index at " + config.path + " (no data.mdb)");
    }
  } else {
    if (auto made = make_store_directory(config.path); !made) return std::unexpected(made.error());
    // Before LMDB is opened: a second writer must not even rebuild deltas from a store that
    // another process is changing.
    auto lock = WriterLock::acquire(config.path);
    if (!lock) return std::unexpected(lock.error());
    store->writer_lock_ = std::move(*lock);
    // LMDB maps the file and writes its first pages at open: on a full file system that ends
    // in SIGBUS, not an error. Refuse here instead, naming the path and the space.
    if (auto free = free_bytes(config.path); free && *free < kMinFreeBytes) {
      return store_error(Code::kFull, "index " + config.path + ": the file system has only " +
                                          std::to_string(*free) + " bytes free (at least " +
                                          std::to_string(kMinFreeBytes) +
                                          " are needed to write); free some space");
    }
  }
  const unsigned flags =
      MDB_NOTLS | (read_only ? MDB_RDONLY : 0) | (config.sync || read_only ? 0 : MDB_NOSYNC) |
      (config.readahead ? 0 : MDB_NORDAHEAD);
  auto env = lmdb::Env::open(config.path, {.map_size = config.map_size, .flags = flags});
  if (!env) return std::unexpected(from_lmdb(env.error()));
  store->env_ = std::move(*env);
  if (auto whole = store->env_.check_file_size(config.path); !whole) {
    return std::unexpected(from_lmdb(whole.error()));
  }
  return store;
}

StoreResult<> StoreEnv::open_tables(const lmdb::Txn& txn, unsigned flags) {
  using Named = std::pair<lmdb::Dbi*, const char*>;
  for (auto [dbi, name] : std::initializer_list<Named>{{&tables_.meta, "meta"},
                                                       {&tables_.docs, "docs"},
                                                       {&tables_.sketches, "sketches"},
                                                       {&tables_.forgotten, "forgotten"},
                                                       {&tables_.offsets, "offsets"},
                                                       {&tables_.pending, "pending"}}) {
    auto opened = lift(lmdb::Dbi::open(txn, name, flags));
    if (!opened) return std::unexpected(opened.error());
    *dbi = *opened;
  }
  // A table older stores lack: absent is fine unless it was to be created.
  auto open_optional = [&](const char* name, lmdb::Dbi& dbi, bool& present) -> StoreResult<> {
    auto opened = lmdb::Dbi::open(txn, name, flags);
    present = opened.has_value();
    if (opened) {
      dbi = *opened;
    } else if (opened.error().code != MDB_NOTFOUND || (flags & MDB_CREATE)) {
      return std::unexpected(from_lmdb(opened.error()));
    }
    return {};
  };
  if (auto highs = open_optional("sketch_highs", tables_.sketch_highs, tables_.has_sketch_highs);
      !highs) {
    return highs;
  }
  if (auto learned = open_optional("learned", tables_.learned, tables_.has_learned); !learned) {
    return learned;
  }
  if (auto tail = open_optional("docs_tail", tables_.docs_tail, tables_.has_docs_tail); !tail) {
    return tail;
  }
  auto log = lmdb::Dbi::open(txn, "passage_log", flags);
  auto relations = log ? lmdb::Dbi::open(txn, "relations", flags) : log;
  tables_.has_passages = log.has_value() && relations.has_value();
  if (tables_.has_passages) {
    tables_.passage_log = *log;
    tables_.relations = *relations;
  } else {
    const auto& error = log ? relations.error() : log.error();
    if (error.code != MDB_NOTFOUND || (flags & MDB_CREATE)) return std::unexpected(from_lmdb(error));
  }
  return {};
}

lmdb::Result<lmdb::Txn> StoreEnv::begin_read_unlocked() {
  auto txn = lmdb::Txn::begin(env_, MDB_RDONLY);
  if (!txn && txn.error().code == MDB_MAP_RESIZED && read_only_) {
    // Another process grew the map: adopt its size.
    if (auto adopted = env_.set_map_size(0); !adopted) return std::unexpected(adopted.error());
    txn = lmdb::Txn::begin(env_, MDB_RDONLY);
  }
  return txn;
}

StoreResult<std::unique_ptr<StoreEnv::ReadTxn>> StoreEnv::begin_read() {
  auto read = std::make_unique<ReadTxn>(map_lock_);
  auto txn = lift(begin_read_unlocked());
  if (!txn) return std::unexpected(txn.error());
  read->txn = std::move(*txn);
  return read;
}

std::uint64_t StoreEnv::bytes_on_disk() const {
  struct stat st {};
  if (::stat((std::filesystem::path(config_.path) / "data.mdb").c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

std::uint64_t StoreEnv::map_size() {
  SharedLock lock(map_lock_);
  auto info = env_.info();
  return info ? info->me_mapsize : 0;
}

StoreResult<> StoreEnv::with_space(StoreResult<> failed) const {
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

StoreResult<> StoreEnv::grow_ahead() {
  while (true) {
    auto used = lift(env_.used_bytes());
    if (!used) return std::unexpected(used.error());
    auto info = lift(env_.info());
    if (!info) return std::unexpected(info.error());
    if (*used <= info->me_mapsize / 4 * 3 || info->me_mapsize >= config_.max_map_size) return {};
    if (!map_lock_.try_lock()) return {};  // a reader's transaction is open
    auto grown = grow_locked();
    map_lock_.unlock();
    if (!grown) return grown;
  }
}

StoreResult<> StoreEnv::grow() {
  ExclusiveLock lock(map_lock_);
  return grow_locked();
}

StoreResult<> StoreEnv::grow_locked() {
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

}  // namespace neardup
