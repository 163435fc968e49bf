// One writer per store: an exclusive flock(2) on STORE/lock, held for as long as a writable
// Index is open (store/FORMAT.md, "The lock file").
//
// LMDB itself serialises write transactions across processes, so two writers would not corrupt
// the file; but each would keep its own in-memory deltas, id filter and applied offsets, and a
// page one of them applied would be invisible to the other's probes until it reopened: they
// would tag pages against different indexes. Hence the lock. Read-only opens take no lock.
//
// flock belongs to the open file description: a second acquire() fails even in the same
// process, the lock is released when the holder closes it or dies (also by kill -9), and it is
// not inherited across exec (O_CLOEXEC).
#pragma once

#include <string>
#include <utility>

#include "store/status.h"

namespace neardup {

class WriterLock {
 public:
  // Creates DIR/lock if needed, takes the exclusive lock without waiting and writes this
  // process's pid into it. Errors: kLocked when another open holds it (the message names the
  // store and the holder's pid), kLmdb with errno for a file that cannot be opened or locked.
  static StoreResult<WriterLock> acquire(const std::string& dir);

  WriterLock() = default;
  WriterLock(WriterLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock();  // releases the lock (close)

  bool held() const { return fd_ >= 0; }

 private:
  explicit WriterLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace neardup
