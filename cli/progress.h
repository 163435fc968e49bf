// Progress of a long command (`dedup`, `produce`) on stderr (docs/cli.md, "Progress"). On a
// terminal, one line redrawn in place at most every kTerminalMillis and erased at the end, so the
// summary after it starts on a clean line; elsewhere (a log, a pipe) nothing unless asked with
// --progress, then a plain line every kLineSeconds. When the input's size is known (a file, or
// stdin redirected from one; gzip input by its compressed bytes read) the line starts with the
// share read and ends with the time left at the rate so far:
//   "37%  7420 pages  3100 unique  4200 duplicate  120 skipped  0 bad  812 pages/s  ETA 0:21"
//
// Usage:
//   Progress progress(mode, "neardup dedup", input.size());
//   for (...) { ...; progress.update(input.position(), pages, [&] { return counts_text(); }); }
//   progress.clear();   // before any other line on stderr, and at the end
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace neardup::cli {

enum class ProgressMode { kAuto, kAlways, kNever };

// Adds --progress (also when stderr is not a terminal: a plain line every 10 s) and
// --no-progress (never) to a long command; without either, progress shows on a terminal only.
void add_progress_options(CLI::App* command, ProgressMode& mode);

// The mode for a command that prints its results on stdout as it goes (`lookup`, `clusters`):
// kAuto then shows nothing when stdout is a terminal too, where a redrawn line would tear the
// results; an explicit --progress still does.
ProgressMode for_streamed_results(ProgressMode mode);

// What one progress line says. `fraction` and `eta_seconds` only when the input's size is known.
struct ProgressSnapshot {
  std::optional<double> fraction;  // of the input read, 0..1
  std::string counts;              // "7420 pages  3100 unique ..."
  double rate = 0;                 // items a second so far
  std::string_view unit;           // "pages", "records"
  std::optional<double> eta_seconds;
};

// "37%  7420 pages ...  812 pages/s  ETA 0:21" (the share and ETA only when known).
std::string format_progress(const ProgressSnapshot& snapshot);

// "0:21", "12:05", "1:02:03".
std::string format_duration(double seconds);

class Progress {
 public:
  static constexpr int kTerminalMillis = 200;
  static constexpr int kLineSeconds = 10;

  // `total_bytes`: the input's size, when known. `unit`: what update()'s items are.
  Progress(ProgressMode mode, std::string command, std::optional<std::uint64_t> total_bytes,
           std::string unit);
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `read_bytes` of the input read so far and `items` done; `counts` gives the counts text and is
  // called only when a line is due. Cheap when none is.
  void update(std::uint64_t read_bytes, std::uint64_t items,
              const std::function<std::string()>& counts);
  // Erases the line on a terminal (nothing otherwise).
  void clear();
  // Seconds since construction.
  double elapsed() const;

 private:
  using Clock = std::chrono::steady_clock;
  bool terminal_ = false;
  bool enabled_ = false;
  bool drawn_ = false;  // a terminal line is on screen
  std::string command_;
  std::optional<std::uint64_t> total_bytes_;
  std::string unit_;
  Clock::time_point start_;
  std::optional<Clock::time_point> last_;
};

}  // namespace neardup::cli
