// PageAdvice: the pages of the map that a batch's next page will read, asked of the kernel
// (MADV_WILLNEED) before they are touched, so that the reads of a page's probes are submitted
// together and run while the page before it is applied, instead of each waiting in a fault of
// its own. For a store larger than memory opened with store.readahead false (docs/index.md,
// "Larger than memory").
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace neardup {

class PageAdvice {
 public:
  // Disabled: add() and flush() do nothing. `batched` false: a madvise(2) a range (tests).
  PageAdvice() = default;
  explicit PageAdvice(bool enabled, bool batched = true) : enabled_(enabled) {
    if (enabled_ && batched) pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0));
  }
  PageAdvice(const PageAdvice&) = delete;
  PageAdvice& operator=(const PageAdvice&) = delete;
  ~PageAdvice() {
    if (pidfd_ >= 0) ::close(pidfd_);
  }

  bool enabled() const { return enabled_; }
  // The page ranges added since the last flush (tests).
  const std::vector<iovec>& ranges() const { return ranges_; }

  // The pages holding bytes [begin, end) (end > begin).
  void add(const void* begin, const void* end) {
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto from = reinterpret_cast<std::uintptr_t>(begin) & ~(page - 1);
    const auto to = (reinterpret_cast<std::uintptr_t>(end) + page - 1) & ~(page - 1);
    if (!ranges_.empty()) {
      const iovec& last = ranges_.back();
      const auto last_from = reinterpret_cast<std::uintptr_t>(last.iov_base);
      if (from >= last_from && to <= last_from + last.iov_len) return;  // asked already
    }
    ranges_.push_back({reinterpret_cast<void*>(from), to - from});
  }

  // Asks for every page added since the last flush: in one process_madvise(2) call (Linux 5.10;
  // where it is refused, as older kernels do without CAP_SYS_NICE, a madvise(2) a range). Advice
  // only: a page not read ahead is read by its fault.
  void flush() {
    if (ranges_.empty()) return;
    for (std::size_t at = 0; pidfd_ >= 0 && at < ranges_.size(); at += kMaxRanges) {
      const std::size_t n = std::min(kMaxRanges, ranges_.size() - at);
      if (::syscall(SYS_process_madvise, pidfd_, ranges_.data() + at, n, MADV_WILLNEED, 0u) < 0) {
        ::close(pidfd_);
        pidfd_ = -1;
      }
    }
    if (pidfd_ < 0) {
      for (const iovec& r : ranges_) ::madvise(r.iov_base, r.iov_len, MADV_WILLNEED);
    }
    ranges_.clear();
  }

 private:
  static constexpr std::size_t kMaxRanges = 1024;  // UIO_MAXIOV
  bool enabled_ = false;
  int pidfd_ = -1;
  std::vector<iovec> ranges_;
};

}  // namespace neardup
