#include "ops/connection_table.h"

#include <algorithm>
#include <tuple>

namespace neardup::ops {

std::optional<int> ConnectionTable::opened(int key, const std::string& client,
                                           Clock::time_point now) {
  closed(key);
  entries_[key] = Entry{.client = client,
                        .waiting_since = ++order_,
                        .deadline = now + limits_.head_time};
  ++open_;
  if (++per_client_[client] > limits_.max_per_client) {
    return close(longest_waiting(&client).value_or(key));
  }
  if (open_ > limits_.max_connections) return close(longest_waiting(nullptr).value_or(key));
  return std::nullopt;
}

void ConnectionTable::head_received(int key, std::size_t body_bytes, Clock::time_point now) {
  auto found = entries_.find(key);
  if (found == entries_.end() || found->second.closing) return;
  // At most a day, whatever the size: the deadline stays a representable time.
  const std::chrono::duration<double> body_time =
      std::min(std::chrono::duration<double>(static_cast<double>(body_bytes) /
                                             static_cast<double>(limits_.min_body_rate)),
               std::chrono::duration<double>(std::chrono::hours(24)));
  found->second.phase = Phase::kReceiving;
  found->second.deadline =
      now + limits_.head_time + std::chrono::duration_cast<Clock::duration>(body_time);
}

void ConnectionTable::answering(int key) {
  auto found = entries_.find(key);
  if (found == entries_.end() || found->second.closing) return;
  found->second.phase = Phase::kAnswering;
  found->second.deadline = Clock::time_point::max();
}

void ConnectionTable::request_ended(int key, Clock::time_point now) {
  auto found = entries_.find(key);
  if (found == entries_.end() || found->second.closing) return;
  found->second.phase = Phase::kWaiting;
  found->second.waiting_since = ++order_;
  found->second.deadline = now + limits_.head_time;
}

void ConnectionTable::closed(int key) {
  auto found = entries_.find(key);
  if (found == entries_.end()) return;
  if (!found->second.closing) close(key);
  entries_.erase(found);
}

std::vector<int> ConnectionTable::expired(Clock::time_point now) {
  std::vector<int> keys;
  for (const auto& [key, entry] : entries_) {
    if (!entry.closing && entry.deadline <= now) keys.push_back(key);
  }
  for (int key : keys) close(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::size_t ConnectionTable::size(const std::string& client) const {
  auto found = per_client_.find(client);
  return found != per_client_.end() ? found->second : 0;
}

std::optional<int> ConnectionTable::longest_waiting(const std::string* client) const {
  std::optional<int> best;
  // Ranked by the client's connections (more first), then by the time waited (longer first).
  std::tuple<std::size_t, std::uint64_t> best_rank{0, 0};
  for (const auto& [key, entry] : entries_) {
    if (entry.closing || entry.phase != Phase::kWaiting) continue;
    if (client != nullptr && entry.client != *client) continue;
    const std::tuple<std::size_t, std::uint64_t> rank{size(entry.client),
                                                      UINT64_MAX - entry.waiting_since};
    if (!best || rank > best_rank) {
      best = key;
      best_rank = rank;
    }
  }
  return best;
}

int ConnectionTable::close(int key) {
  Entry& entry = entries_.at(key);
  entry.closing = true;
  --open_;
  if (--per_client_[entry.client] == 0) per_client_.erase(entry.client);
  return key;
}

}  // namespace neardup::ops
