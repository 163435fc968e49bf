// A raw HTTP client socket on loopback, for what an HTTP client library would not send (a
// request cut short, one byte at a time, bytes that are not HTTP), for the metrics server's
// tests and its fuzz target. `source` is the client's own address: any of 127.0.0.0/8 is this
// machine, so that one process can be several clients. Calls interrupted by a signal go on.
// Header-only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

namespace neardup::ops::testing {

class RawSocket {
 public:
  explicit RawSocket(int port, const char* source = nullptr)
      : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    if (source != nullptr) {
      ::inet_pton(AF_INET, source, &address.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return;
    }
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      connected_ = true;
    } else if (errno == EINTR) {  // a signal (libFuzzer's timer): the connection goes on
      pollfd writable{.fd = fd_, .events = POLLOUT, .revents = 0};
      while (::poll(&writable, 1, -1) < 0 && errno == EINTR) {
      }
      int error = 0;
      socklen_t length = sizeof error;
      connected_ = ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    }
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }

  // Sends what the server takes; stops at the first error (the server may close first).
  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // Tells the server nothing more will come (a half close).
  void end_sending() { ::shutdown(fd_, SHUT_WR); }

  // Everything the server sends until it closes the connection (or `seconds` pass).
  std::string receive_all(int seconds = 10) { return receive_until("", seconds); }

  // What the server sends until `end` has arrived, it closes, or `seconds` pass.
  std::string receive_until(std::string_view end, int seconds) {
    timeval timeout{.tv_sec = seconds, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::string out;
    char buffer[65536];
    while (end.empty() || out.find(end) == std::string::npos) {
      ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
    return out;
  }

  // Whether the server has closed the connection without sending anything (asks, never waits).
  bool closed_by_server() {
    char byte;
    ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

 private:
  int fd_;
  bool connected_ = false;
};

}  // namespace neardup::ops::testing
