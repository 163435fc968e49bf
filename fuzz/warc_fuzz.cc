// WARC file bytes through the reader: every record is a page, passed over, skipped with a reason
// or reported as damage, and reading always ends.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "fuzz/fuzz_target.h"
#include "warc/warc_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neardup::warc;
  const int fd = memfd_create("warc_fuzz", MFD_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  auto reader = WarcReader::open("/proc/self/fd/" + std::to_string(fd));
  if (reader) {
    WarcEntry entry;
    std::size_t entries = 0;
    while ((*reader)->next(entry)) {
      if (entry.kind != WarcEntry::Kind::kPage && entry.reason.empty()) __builtin_trap();
      if (++entries > size + 1) __builtin_trap();  // every entry consumes input
    }
  }
  ::close(fd);
  return 0;
}
