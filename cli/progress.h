// Progress of a long command on stderr (docs/cli.md, "Progress"): on a terminal, one line
// redrawn a few times a second with what is done and the rate, and, when the size of the input
// is known, the percentage and the time left; anywhere else (a file, a pipe, a journal) nothing,
// so that a log holds only the command's summary. Not while stdout is the same terminal either:
// the results printed there show the progress themselves, and would tear a redrawn line.
//
//   Progress progress("pages", input_bytes);   // 0: the size is unknown
//   while (...) { ...; progress.update(bytes_read, pages); }
//   progress.finish();                          // ends the line (also on destruction)
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace neardup::cli {

class Progress {
 public:
  // `items`: what update() counts ("pages", "clusters"). `total`: the input's size, in the unit
  // of update()'s `done` (bytes of a file, document numbers of a store); 0 when unknown.
  Progress(std::string_view items, std::uint64_t total);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of the total and `count` items so far; redraws the line at most every 250 ms.
  void update(std::uint64_t done, std::uint64_t count);
  // Ends the line, once.
  void finish();

  // The line as drawn: "  42%  8,412 pages  2,310 pages/s  0:05 left" (percentage and time
  // left only with a total and some of it done).
  static std::string line(std::string_view items, std::uint64_t done, std::uint64_t total,
                          std::uint64_t count, double seconds);

 private:
  std::string items_;
  std::uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, next_draw_;
};

// The size of the file at `path` ("-": stdin when it is a regular file), or 0 when it cannot be
// known (a pipe, a terminal).
std::uint64_t input_size(const std::string& path);

}  // namespace neardup::cli
