// Bytes as a JSON-lines input file (gzip or plain, told by its first bytes) through the line
// reader: every line it gives is within its bound and holds no '\n', a longer one is told by its
// length and not held, and reading always ends.
#include <string>

#include "cli/line_reader.h"
#include "fuzz/fuzz_target.h"
#include "fuzz/memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using neardup::cli::LineReader;
  constexpr std::uint64_t kMaxLine = 4096;
  // Deflate expands a byte at most 1032 times (concatenated gzip members less), and every line
  // but the last consumes its '\n'.
  const std::uint64_t max_lines = 1032 * static_cast<std::uint64_t>(size) + 1;
  const neardup::fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  auto reader = LineReader::open(file.path(), kMaxLine);
  if (!reader) return 0;
  std::string line;
  std::uint64_t lines = 0;
  while ((*reader)->next(line)) {
    const std::uint64_t over_long = (*reader)->over_long();
    if (line.size() > kMaxLine || line.find('\n') != std::string::npos) __builtin_trap();
    if (over_long > 0 && (!line.empty() || over_long <= kMaxLine)) __builtin_trap();
    if (++lines > max_lines) __builtin_trap();
  }
  return 0;
}
