#include "ops/notify.h"

#include <systemd/sd-daemon.h>

#include <cstring>
#include <ctime>

#include "common/thread_name.h"

namespace neardup::ops {

NotifyResult notify(std::string_view assignments) {
  std::string message(assignments);
  // unset_environment = 0: the watchdog thread and later calls still need NOTIFY_SOCKET.
  int r = sd_notify(0, message.c_str());
  if (r < 0) {
    std::string first_line = message.substr(0, message.find('\n'));
    return std::unexpected("sd_notify(" + first_line + "): " + std::strerror(-r));
  }
  return r > 0;
}

NotifyResult notify_ready() { return notify("READY=1"); }

NotifyResult notify_reloading() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  auto usec = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000u +
              static_cast<std::uint64_t>(now.tv_nsec) / 1000u;
  return notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

NotifyResult notify_stopping() { return notify("STOPPING=1"); }

NotifyResult notify_status(std::string_view text) {
  std::string message = "STATUS=";
  for (char c : text) message += (c == '\n' || c == '\r') ? ' ' : c;
  return notify(message);
}

std::chrono::microseconds watchdog_timeout() {
  std::uint64_t usec = 0;
  // > 0: enabled for this process; 0: not set or for another PID; < 0: malformed variables,
  // which systemd never produces — treated as off.
  if (sd_watchdog_enabled(0, &usec) <= 0) return std::chrono::microseconds(0);
  return std::chrono::microseconds(usec);
}

WatchdogPinger::~WatchdogPinger() { stop(); }

bool WatchdogPinger::start(std::function<bool()> healthy) {
  if (thread_.joinable()) return false;
  auto timeout = watchdog_timeout();
  if (timeout.count() == 0) return false;
  // Half the timeout, as sd_watchdog_enabled(3) recommends: one late ping is not fatal.
  interval_ = timeout / 2;
  {
    MutexLock lock(mutex_);
    stop_requested_ = false;
  }
  thread_ = std::thread([this, healthy = std::move(healthy)] { run(healthy); });
  return true;
}

void WatchdogPinger::run(std::function<bool()> healthy) {
  name_this_thread("nd:watchdog");
  while (true) {
    // Ping first: the first ping is due one interval after start at the latest.
    // A failed ping is not retried early: systemd's timeout decides.
    if (!healthy || healthy()) (void)notify("WATCHDOG=1");
    MutexLock lock(mutex_);
    const auto deadline = std::chrono::steady_clock::now() + interval_;
    while (!stop_requested_ && wake_.wait_until(mutex_, deadline)) {
    }
    if (stop_requested_) return;
  }
}

void WatchdogPinger::stop() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

}  // namespace neardup::ops
