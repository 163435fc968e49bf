// Which connections an HTTP listener closes, and when: the policy of ops/metrics_server.h,
// kept apart from the sockets so that it can be tested and fuzzed as a sequence of events.
//
// A connection is in one of three phases: waiting for a request's line and headers (from its
// start, or from the end of its previous request), receiving a request's body, or answering.
//   - Waiting and receiving have deadlines: the line and headers must arrive within
//     Limits::head_time, the body within head_time plus its size at Limits::min_body_rate.
//   - Past Limits::max_per_client connections from one client (one address), or
//     Limits::max_connections in all, a new connection closes the longest-waiting connection
//     of that client, or of the client with the most connections; one that is receiving or
//     answering is never closed for another. When none is waiting, the new one is closed.
// Keys are the caller's (the server uses the sockets); every key returned is to be closed, and
// is returned once. Not thread-safe: the server calls it under its lock.
//
//   ConnectionTable table({.max_connections = 256, .max_per_client = 64, ...});
//   if (auto victim = table.opened(fd, client, now)) shutdown(*victim);
//   table.head_received(fd, content_length, now); ... table.answering(fd);
//   table.request_ended(fd, now);   // keep-alive: waiting again
//   for (int fd : table.expired(now)) shutdown(fd);
//   table.closed(fd);
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace neardup::ops {

class ConnectionTable {
 public:
  using Clock = std::chrono::steady_clock;

  struct Limits {
    std::size_t max_connections = 256;
    std::size_t max_per_client = 64;
    Clock::duration head_time = std::chrono::seconds(5);
    std::size_t min_body_rate = 64 * 1024;  // bytes a second
  };

  explicit ConnectionTable(Limits limits) : limits_(limits) {}

  // A new connection `key` from `client` (any bytes naming it, e.g. its address), waiting for
  // its first request. Returns the connection to close to stay within the limits, if one must
  // be (possibly `key` itself). A key already open is treated as closed first.
  std::optional<int> opened(int key, const std::string& client, Clock::time_point now);

  // `key`'s request line and headers have arrived; a body of at most `body_bytes` follows.
  void head_received(int key, std::size_t body_bytes, Clock::time_point now);

  // `key`'s request has arrived whole and is being answered: no deadline until it ends.
  void answering(int key);

  // `key`'s request has ended; the connection waits for its next one.
  void request_ended(int key, Clock::time_point now);

  // `key` is closed (by either side, also one returned here): it is forgotten.
  void closed(int key);

  // The connections past their deadline, to close (in the order of their keys).
  std::vector<int> expired(Clock::time_point now);

  // Open connections, those returned to be closed not counted.
  std::size_t size() const { return open_; }
  // Of them, from `client`.
  std::size_t size(const std::string& client) const;
  // Every connection not yet closed(), those returned to be closed included.
  std::size_t held() const { return entries_.size(); }

 private:
  enum class Phase { kWaiting, kReceiving, kAnswering };
  struct Entry {
    std::string client;
    Phase phase = Phase::kWaiting;
    std::uint64_t waiting_since = 0;  // order of the start of waiting: smaller waited longer
    Clock::time_point deadline = Clock::time_point::max();
    bool closing = false;  // returned to be closed
  };

  // The longest-waiting connection of `client`, or of the client with the most connections
  // when `client` is null; nullopt when none is waiting.
  std::optional<int> longest_waiting(const std::string* client) const;
  int close(int key);  // marks it closing and stops counting it; returns key

  Limits limits_;
  std::unordered_map<int, Entry> entries_;
  std::unordered_map<std::string, std::size_t> per_client_;  // open, not closing
  std::size_t open_ = 0;
  std::uint64_t order_ = 0;
};

}  // namespace neardup::ops
