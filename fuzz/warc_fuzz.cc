// WARC file bytes through the reader: every record is a page, passed over, skipped with a reason
// or reported as damage, and reading always ends.
#include <string>

#include "fuzz/fuzz_target.h"
#include "fuzz/memory_file.h"
#include "warc/warc_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neardup::warc;
  const neardup::fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  auto reader = WarcReader::open(file.path());
  if (reader) {
    WarcEntry entry;
    std::size_t entries = 0;
    while ((*reader)->next(entry)) {
      if (entry.kind != WarcEntry::Kind::kPage && entry.reason.empty()) __builtin_trap();
      if (++entries > size + 1) __builtin_trap();  // every entry consumes input
    }
  }
  return 0;
}
