// Store errors as typed values: what kind of failure, LMDB's code when LMDB reported it, and a
// message naming the store, the object and the cause. Every fallible store call returns
// StoreResult<T>.
#pragma once

#include <cerrno>
#include <expected>
#include <string>
#include <type_traits>

#include "store/lmdb.h"

namespace neardup {

struct StoreError {
  enum class Code {
    kInvalidArgument,  // the request cannot be answered by this store (e.g. k above its design)
    kNotFound,         // no store where one must exist (read-only open)
    kReadOnly,         // a write to a store opened read-only
    kFormat,           // the store was written by another format version
    kDesign,           // the store's design differs from the one asked for
    kLocked,           // another open holds the store's writer lock (store/writer_lock.h)
    kCorrupt,          // bytes on disk that do not decode
    kFull,             // the map reached store.max_map_size
    kLmdb,             // any other LMDB or file system failure (lmdb_code says which)
  };
  Code code = Code::kLmdb;
  int lmdb_code = 0;  // the LMDB or errno code for kLmdb (and MDB_MAP_FULL inside retries)
  std::string message;
};

template <typename T = void>
using StoreResult = std::expected<T, StoreError>;

// Out of space: the file system is full (ENOSPC, or EIO from a failed write-back of the map),
// or the map reached store.max_map_size. The failed batch left nothing behind (Index::apply),
// so a writer may wait for space and apply it again.
inline bool out_of_space(const StoreError& error) {
  return error.code == StoreError::Code::kFull ||
         (error.code == StoreError::Code::kLmdb &&
          (error.lmdb_code == ENOSPC || error.lmdb_code == EIO));
}

inline std::unexpected<StoreError> store_error(StoreError::Code code, std::string message) {
  return std::unexpected(StoreError{code, 0, std::move(message)});
}

inline std::unexpected<StoreError> corrupt(const std::string& what) {
  return store_error(StoreError::Code::kCorrupt, what + " is corrupt");
}

// LMDB's error as a store error (kLmdb, its code kept so that MDB_MAP_FULL can be retried;
// kCorrupt for MDB_CORRUPTED).
inline StoreError from_lmdb(lmdb::LmdbError error) {
  const auto code =
      error.code == MDB_CORRUPTED ? StoreError::Code::kCorrupt : StoreError::Code::kLmdb;
  return StoreError{code, error.code, std::move(error.message)};
}
template <typename T>
StoreResult<T> lift(lmdb::Result<T> result) {
  if (!result) return std::unexpected(from_lmdb(std::move(result.error())));
  if constexpr (std::is_void_v<T>) {
    return {};
  } else {
    return std::move(*result);
  }
}

}  // namespace neardup
