#include "cli/progress.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "cli/human_text.h"

namespace neardup::cli {
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(250);

// Seconds as "0:05", "12:34" or "1:02:03".
std::string duration_text(double seconds) {
  const auto total = static_cast<unsigned long long>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%llu:%02llu:%02llu", total / 3600, total / 60 % 60,
                  total % 60);
  } else {
    std::snprintf(text, sizeof text, "%llu:%02llu", total / 60, total % 60);
  }
  return text;
}

}  // namespace

Progress::Progress(std::string_view items, std::uint64_t total)
    : items_(items),
      total_(total),
      enabled_(isatty(STDERR_FILENO) && !isatty(STDOUT_FILENO)),
      start_(std::chrono::steady_clock::now()),
      next_draw_(start_ + kRedrawEvery) {}

void Progress::update(std::uint64_t done, std::uint64_t count) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + kRedrawEvery;
  const std::string text =
      std::string("\r") +
      line(items_, done, total_, count, std::chrono::duration<double>(now - start_).count()) +
      "\033[K";
  std::fputs(text.c_str(), stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) std::fputs("\r\033[K", stderr);
  drawn_ = false;
  enabled_ = false;
}

std::string Progress::line(std::string_view items, std::uint64_t done, std::uint64_t total,
                           std::uint64_t count, double seconds) {
  std::string text;
  const bool known = total > 0 && done > 0 && done <= total;
  if (known) {
    char percent[16];
    std::snprintf(percent, sizeof percent, "%3d%%  ", static_cast<int>(100.0 * done / total));
    text += percent;
  }
  text += grouped(count) + " " + std::string(items);
  if (seconds > 0) {
    text += std::string("  ") + grouped(static_cast<std::uint64_t>(count / seconds)) + " " +
            std::string(items) + "/s";
  }
  if (known && seconds > 0) {
    text += std::string("  ") + duration_text(seconds * static_cast<double>(total - done) / done) +
            " left";
  }
  return text;
}

std::uint64_t input_size(const std::string& path) {
  struct stat st {};
  const int got = path == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(path.c_str(), &st);
  return got == 0 && S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
}

}  // namespace neardup::cli
