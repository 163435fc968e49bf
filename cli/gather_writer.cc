#include "cli/gather_writer.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace neardup::cli {

std::expected<std::unique_ptr<GatherWriter>, std::string> GatherWriter::open(
    const std::string& path) {
  if (path == "-")
    return std::unique_ptr<GatherWriter>(new GatherWriter(STDOUT_FILENO, false, "stdout"));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return std::unexpected(path + ": cannot open for writing: " + std::strerror(errno));
  return std::unique_ptr<GatherWriter>(new GatherWriter(fd, true, path));
}

GatherWriter::~GatherWriter() {
  if (owned_) ::close(fd_);
}

void GatherWriter::add(std::string_view bytes) {
  if (bytes.empty()) return;
  queued_.push_back(iovec{const_cast<char*>(bytes.data()), bytes.size()});
}

bool GatherWriter::flush() {
  std::size_t first = 0;  // queued_[first..] are still to write
  while (first < queued_.size() && error_.empty()) {
    const int count = static_cast<int>(std::min<std::size_t>(queued_.size() - first, IOV_MAX));
    const ssize_t written = ::writev(fd_, queued_.data() + first, count);
    if (written < 0) {
      if (errno == EINTR) continue;
      error_ = name_ + ": write error: " + std::strerror(errno);
      break;
    }
    // A short write leaves `first` at the first piece not written whole, its start moved on.
    auto left = static_cast<std::size_t>(written);
    while (first < queued_.size() && left >= queued_[first].iov_len)
      left -= queued_[first++].iov_len;
    if (left > 0) {
      queued_[first].iov_base = static_cast<char*>(queued_[first].iov_base) + left;
      queued_[first].iov_len -= left;
    }
  }
  queued_.clear();
  return error_.empty();
}

}  // namespace neardup::cli
