// Guards the development cluster (mock_cluster.h) against its two silent ways of losing data:
//
//   - Storage: librdkafka 2.0's mock keeps about 5 MiB of record batches per partition and
//     drops the oldest beyond that. The watcher reads every partition of the known topics (a
//     consumer of its own, no group) and reports once when a partition holds kNearLimitBytes and
//     once when it passes kLimitBytes, so the user knows to spread data over more partitions.
//   - Auto-creation: the mock creates any topic a client's metadata request names (a producer
//     with a misspelt topic). Every kTopicPollMillis the watcher lists the cluster's topics and
//     marks each one it was not told about (add_topic) with UNKNOWN_TOPIC_OR_PART, so clients
//     see the mistake from then on; records produced in that window are lost with the topic.
//
// Sizes are counted from the consumed records (key + value bytes), so they are slightly below
// the stored batch sizes, and the count for a partition only grows: it is a warning, not a
// model of what the mock still holds.
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "kafka/mock_cluster.h"

namespace neardup::kafka {

inline constexpr std::uint64_t kLimitBytes = 5ull << 20;
inline constexpr std::uint64_t kNearLimitBytes = 4ull << 20;
inline constexpr int kTopicPollMillis = 100;

struct WatchEvent {
  enum class Kind { kNearLimit, kOverLimit, kRefusedTopic, kError };
  Kind kind;
  std::string topic;
  std::int32_t partition = -1;
  std::uint64_t bytes = 0;
  std::string detail;  // kError: what failed
};

class MockWatcher {
 public:
  // Starts watching `cluster` (which must outlive the watcher), whose topics so far are
  // `topics`; `report` is called from the watcher's thread. The error names the client
  // property or call that failed.
  static std::expected<std::unique_ptr<MockWatcher>, std::string> start(
      MockCluster& cluster, const std::vector<std::string>& topics,
      std::function<void(const WatchEvent&)> report);
  ~MockWatcher();  // stops the thread
  MockWatcher(const MockWatcher&) = delete;
  MockWatcher& operator=(const MockWatcher&) = delete;

  // A topic the cluster was told to create (--topic, the `topic` command): watched, not
  // refused. Thread-safe.
  void add_topic(const std::string& name) EXCLUDES(mutex_);

 private:
  MockWatcher(MockCluster& cluster, std::function<void(const WatchEvent&)> report);
  void run() EXCLUDES(mutex_);

  struct Impl;
  MockCluster& cluster_;
  std::function<void(const WatchEvent&)> report_;
  Mutex mutex_;
  std::map<std::string, bool> known_ GUARDED_BY(mutex_);  // topic -> assigned to the consumer yet
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace neardup::kafka
