// systemd service notifications (sd_notify(3), docs/operations.md) for a Type=notify unit.
//
// Every call is a no-op returning false when NOTIFY_SOCKET is unset (not started by systemd,
// or under a test that does not listen). The daemon calls, in order:
//   notify_ready()                      start-up done: store open, Kafka subscribed, metrics up
//   notify_status("...")                now and then: pages/s, index size
//   notify_reloading(); ...; notify_ready()   around a SIGHUP reload, whatever its outcome
//   notify_stopping()                   on SIGTERM, before draining
// and runs one WatchdogPinger for the life of the process.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "common/mutex.h"

namespace neardup::ops {

// The result of one notification: true = sent, false = no NOTIFY_SOCKET (nothing to do);
// an error is sd_notify's failure as text ("sd_notify(READY=1): Connection refused").
using NotifyResult = std::expected<bool, std::string>;

// Sends raw newline-separated assignments ("READY=1\nSTATUS=...").
NotifyResult notify(std::string_view assignments);

NotifyResult notify_ready();
// RELOADING=1 with MONOTONIC_USEC=<now> (CLOCK_MONOTONIC, µs), which systemd 253+ requires
// for Type=notify-reload and older versions ignore. Follow with notify_ready().
NotifyResult notify_reloading();
NotifyResult notify_stopping();
// STATUS=<text>; line breaks in text are replaced by spaces (one assignment per line).
NotifyResult notify_status(std::string_view text);

// The watchdog interval systemd expects pings within (WATCHDOG_USEC, for this process if
// WATCHDOG_PID is set), or zero when the watchdog is off.
std::chrono::microseconds watchdog_timeout();

// Sends WATCHDOG=1 every half watchdog timeout from its own thread, while `healthy` (if
// given) returns true. The check is what makes the watchdog useful: pass one that fails when
// the daemon is stuck (e.g. "the consume loop polled within the last N seconds"), so systemd
// restarts a hung daemon instead of a pinger keeping it alive. When the watchdog is off,
// start() does nothing and running() stays false.
class WatchdogPinger {
 public:
  WatchdogPinger() = default;
  ~WatchdogPinger();  // stop()s
  WatchdogPinger(const WatchdogPinger&) = delete;
  WatchdogPinger& operator=(const WatchdogPinger&) = delete;

  // Returns whether the pinger runs (false: watchdog off, or already started).
  bool start(std::function<bool()> healthy = {}) EXCLUDES(mutex_);
  // Wakes and joins the thread; idempotent.
  void stop() EXCLUDES(mutex_);

  bool running() const { return thread_.joinable(); }
  std::chrono::microseconds interval() const { return interval_; }

 private:
  void run(std::function<bool()> healthy) EXCLUDES(mutex_);

  std::chrono::microseconds interval_{0};
  Mutex mutex_;
  CondVar wake_;
  bool stop_requested_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace neardup::ops
