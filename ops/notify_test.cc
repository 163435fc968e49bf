// Plays systemd: binds its own notification socket, points NOTIFY_SOCKET at it and reads
// what the wrapper sends.
#include "ops/notify.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

namespace neardup::ops {
namespace {

using namespace std::chrono_literals;

class FakeSystemd : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/neardup-notify-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/notify.sock";
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(path_.size(), sizeof addr.sun_path);
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    ASSERT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval timeout{.tv_sec = 2, .tv_usec = 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setenv("NOTIFY_SOCKET", path_.c_str(), 1);
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
  }

  void TearDown() override {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    if (fd_ >= 0) close(fd_);
    std::filesystem::remove_all(dir_);
  }

  // The next datagram, or nullopt after the 2 s receive timeout.
  std::optional<std::string> receive() {
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }

  std::string dir_;
  std::string path_;
  int fd_ = -1;
};

TEST_F(FakeSystemd, LifecycleMessagesArriveInOrder) {
  ASSERT_EQ(notify_ready(), NotifyResult(true));
  EXPECT_EQ(receive(), "READY=1");

  ASSERT_EQ(notify_reloading(), NotifyResult(true));
  auto reloading = receive();
  ASSERT_TRUE(reloading);
  ASSERT_TRUE(reloading->starts_with("RELOADING=1\nMONOTONIC_USEC=")) << *reloading;
  std::uint64_t usec = std::stoull(reloading->substr(reloading->find('=', 12) + 1));
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  std::uint64_t now_usec = static_cast<std::uint64_t>(now.tv_sec) * 1000000u + now.tv_nsec / 1000u;
  EXPECT_LE(usec, now_usec);
  EXPECT_GT(usec + 10'000'000u, now_usec);  // CLOCK_MONOTONIC, not wall time

  ASSERT_EQ(notify_ready(), NotifyResult(true));
  EXPECT_EQ(receive(), "READY=1");

  ASSERT_EQ(notify_status("1520 pages/s\nindex 3.2M docs"), NotifyResult(true));
  EXPECT_EQ(receive(), "STATUS=1520 pages/s index 3.2M docs");

  ASSERT_EQ(notify_stopping(), NotifyResult(true));
  EXPECT_EQ(receive(), "STOPPING=1");
}

TEST_F(FakeSystemd, WatchdogPingsAtHalfTheTimeoutUntilStopped) {
  setenv("WATCHDOG_USEC", "200000", 1);
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  EXPECT_EQ(watchdog_timeout(), 200ms);

  WatchdogPinger pinger;
  auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(pinger.start());
  EXPECT_TRUE(pinger.running());
  EXPECT_EQ(pinger.interval(), 100ms);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(receive(), "WATCHDOG=1");
  // Three pings at 0, 100 and 200 ms.
  auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_GE(elapsed, 180ms);
  EXPECT_LT(elapsed, 1500ms);

  pinger.stop();
  EXPECT_FALSE(pinger.running());
  // Drain a ping that raced with stop(), then expect silence.
  timeval brief{.tv_sec = 0, .tv_usec = 300000};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &brief, sizeof brief);
  while (receive()) {
  }
  EXPECT_EQ(receive(), std::nullopt);
}

TEST_F(FakeSystemd, UnhealthyDaemonIsNotPinged) {
  setenv("WATCHDOG_USEC", "100000", 1);
  WatchdogPinger pinger;
  std::atomic<bool> healthy = false;
  ASSERT_TRUE(pinger.start([&] { return healthy.load(); }));
  timeval brief{.tv_sec = 0, .tv_usec = 300000};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &brief, sizeof brief);
  EXPECT_EQ(receive(), std::nullopt);
  healthy = true;
  EXPECT_EQ(receive(), "WATCHDOG=1");
}

TEST_F(FakeSystemd, WatchdogForAnotherProcessIsIgnored) {
  setenv("WATCHDOG_USEC", "100000", 1);
  setenv("WATCHDOG_PID", std::to_string(getpid() + 1).c_str(), 1);
  EXPECT_EQ(watchdog_timeout(), 0us);
  WatchdogPinger pinger;
  EXPECT_FALSE(pinger.start());
  EXPECT_FALSE(pinger.running());
}

TEST_F(FakeSystemd, VanishedSocketIsAnErrorValue) {
  std::filesystem::remove(path_);
  auto result = notify_ready();
  ASSERT_FALSE(result);
  EXPECT_TRUE(result.error().starts_with("sd_notify(READY=1): ")) << result.error();
}

TEST(Notify, WithoutNotifySocketEverythingIsANoOp) {
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  EXPECT_EQ(notify_ready(), NotifyResult(false));
  EXPECT_EQ(notify_reloading(), NotifyResult(false));
  EXPECT_EQ(notify_status("x"), NotifyResult(false));
  EXPECT_EQ(notify_stopping(), NotifyResult(false));
  WatchdogPinger pinger;
  EXPECT_FALSE(pinger.start());
}

// The reusable listener (ops/testing/notify_listener.py) sees what the wrapper sends.
TEST(NotifyListener, PrintsEachMessageAsALine) {
  char tmpl[] = "/tmp/neardup-listener-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::string sock = dir + "/notify.sock";
  std::string command = std::string("python3 ") + NEARDUP_NOTIFY_LISTENER + " --socket " + sock +
                        " --timeout 10 --exit-on STOPPING=1";
  FILE* listener = popen(command.c_str(), "r");
  ASSERT_NE(listener, nullptr);
  struct stat st {};
  for (int i = 0; i < 500 && stat(sock.c_str(), &st) != 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(stat(sock.c_str(), &st), 0) << "listener did not bind " << sock;

  setenv("NOTIFY_SOCKET", sock.c_str(), 1);
  EXPECT_EQ(notify_ready(), NotifyResult(true));
  EXPECT_EQ(notify_status("42 pages/s"), NotifyResult(true));
  EXPECT_EQ(notify_reloading(), NotifyResult(true));
  EXPECT_EQ(notify_stopping(), NotifyResult(true));
  unsetenv("NOTIFY_SOCKET");

  std::string output;
  char buf[512];
  while (std::fgets(buf, sizeof buf, listener)) output += buf;
  EXPECT_EQ(pclose(listener), 0);
  std::filesystem::remove_all(dir);

  EXPECT_TRUE(output.starts_with("READY=1\nSTATUS=42 pages/s\nRELOADING=1 MONOTONIC_USEC="))
      << output;
  EXPECT_TRUE(output.ends_with("\nSTOPPING=1\n")) << output;
}

}  // namespace
}  // namespace neardup::ops
