#include "store/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "store/lmdb.h"

namespace neardup {
namespace {

StoreError os_error(int code, const std::string& what) {
  return StoreError{StoreError::Code::kLmdb, code, what + ": " + std::strerror(code)};
}

// The pid the holder wrote, or a note that it has not written one yet.
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  std::string pid(text, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "a process that has not written its pid yet" : "pid " + pid;
}

}  // namespace

StoreResult<WriterLock> WriterLock::acquire(const std::string& dir) {
  const std::string path = dir + "/lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, lmdb::kStoreFileMode);
  if (fd < 0) return std::unexpected(os_error(errno, "cannot open " + path));
  WriterLock lock(fd);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return std::unexpected(os_error(errno, "cannot lock " + path));
    return store_error(StoreError::Code::kLocked,
                       "the store " + dir + " is open for writing by " + holder_of(fd) + " (" +
                           path + "); a store has one writer: stop that process first " +
                           "(read-only opens need no lock)");
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return std::unexpected(os_error(errno, "cannot write the pid to " + path));
  }
  return lock;
}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

WriterLock::~WriterLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace neardup
