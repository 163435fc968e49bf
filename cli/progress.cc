#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace neardup::cli {
namespace {

// The terminal's width, so that a redrawn line never wraps (a wrapped line cannot be redrawn in
// place); 0 when unknown.
std::size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace

void add_progress_options(CLI::App* command, ProgressMode& mode) {
  command
      ->add_flag_function(
          "--progress", [&mode](std::int64_t) { mode = ProgressMode::kAlways; },
          "show progress also when stderr is not a terminal: a line every " +
              std::to_string(Progress::kLineSeconds) +
              " s (on a terminal: one line redrawn in place, the share read and the time left "
              "when the input's size is known)")
      ->default_str("on a terminal");
  command->add_flag_function(
      "--no-progress", [&mode](std::int64_t) { mode = ProgressMode::kNever; },
      "no progress line, also on a terminal");
}

ProgressMode for_streamed_results(ProgressMode mode) {
  return mode == ProgressMode::kAuto && ::isatty(STDOUT_FILENO) == 1 ? ProgressMode::kNever : mode;
}

std::string format_duration(double seconds) {
  const auto total = static_cast<long long>(std::llround(std::max(seconds, 0.0)));
  const long long hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  char text[32];
  if (hours > 0) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", hours, minutes, secs);
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", minutes, secs);
  }
  return text;
}

std::string format_progress(const ProgressSnapshot& snapshot) {
  std::string line;
  if (snapshot.fraction) {
    line += std::to_string(static_cast<int>(std::min(*snapshot.fraction, 1.0) * 100)) + "%  ";
  }
  line += snapshot.counts;
  char rate[48];
  std::snprintf(rate, sizeof rate, "  %.0f %.*s/s", snapshot.rate,
                static_cast<int>(snapshot.unit.size()), snapshot.unit.data());
  line += rate;
  if (snapshot.eta_seconds) line += "  ETA " + format_duration(*snapshot.eta_seconds);
  return line;
}

Progress::Progress(ProgressMode mode, std::string command, std::optional<std::uint64_t> total_bytes,
                   std::string unit)
    : terminal_(::isatty(STDERR_FILENO) == 1),
      command_(std::move(command)),
      total_bytes_(total_bytes),
      unit_(std::move(unit)),
      start_(Clock::now()) {
  if (total_bytes_ == 0) total_bytes_.reset();  // no share of nothing
  enabled_ = mode == ProgressMode::kAlways || (mode == ProgressMode::kAuto && terminal_);
}

double Progress::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void Progress::update(std::uint64_t read_bytes, std::uint64_t items,
                      const std::function<std::string()>& counts) {
  if (!enabled_) return;
  const auto now = Clock::now();
  const auto interval = terminal_ ? std::chrono::duration<double>(kTerminalMillis / 1000.0)
                                  : std::chrono::duration<double>(kLineSeconds);
  if (last_ && now - *last_ < interval) return;
  last_ = now;
  const double seconds = elapsed();
  ProgressSnapshot snapshot{.counts = counts(),
                            .rate = seconds > 0 ? static_cast<double>(items) / seconds : 0,
                            .unit = unit_};
  if (total_bytes_) {
    snapshot.fraction = static_cast<double>(read_bytes) / static_cast<double>(*total_bytes_);
    // The rate of the first second says little about the rest.
    if (read_bytes > 0 && seconds >= 1) {
      snapshot.eta_seconds = seconds * (1 - *snapshot.fraction) / *snapshot.fraction;
    }
  }
  std::string line = format_progress(snapshot);
  if (!terminal_) {
    std::fprintf(stderr, "%s: %s\n", command_.c_str(), line.c_str());
    return;
  }
  if (const std::size_t columns = terminal_columns(); columns > 1 && line.size() >= columns) {
    line.resize(columns - 1);
  }
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace neardup::cli
