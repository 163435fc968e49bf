// The engine's consumer side (daemon/README.md, "Delivery, offsets and replay"): the consume
// loop, backpressure, the assignment and its split guard, and the offsets it stores and commits.
//
// Offsets: the consumer stores offset n + 1 of a partition (enable.auto.offset.store=false) only
// when the outputs of every offset <= n are delivered (OffsetTracker); librdkafka's auto commit
// commits what is stored, and the consumer commits synchronously on revoke and at shutdown.
// Under kafka.exactly_once it stores nothing: offsets commit with each batch's transaction.
//
// Backpressure: at most pipeline.max_in_flight records (and kMaxInFlightBytes of record values)
// are between consume and delivery; past that the loop stops taking records, and pauses the
// assigned partitions when that lasts kPauseAfterMillis (it keeps polling, so it stays in the
// group), until both bounds are back at three quarters.
//
// Threads: everything here runs on the consumer thread (the thread in run(), which also serves
// the consumer's callbacks), which the ThreadRole `thread` names and the compiler checks;
// the atomics at the end are read by any thread for health and readiness.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "config/config.h"
#include "daemon/assignment.h"
#include "daemon/clients.h"
#include "daemon/in_flight.h"
#include "daemon/offset_tracker.h"
#include "daemon/role.h"
#include "ops/metrics.h"
#include "ops/reload.h"

namespace neardup::daemon {

using Clock = std::chrono::steady_clock;

// How long a stop request may take to drain in-flight pages before the rest is left to replay.
inline constexpr int kDrainMillis = 8000;

// Backpressure holds records back without polling for this long before it pauses the input
// partitions (holding()): well under max.poll.interval.ms, so that the consumer stays in its
// group.
inline constexpr int kPauseAfterMillis = 2000;

// How long the assign callback waits for the consumed topic's partition list (it holds up the
// consume loop, well within kStallMillis; on a timeout the last known list is used).
inline constexpr int kAssignmentCheckMillis = 5000;

// The assign callback reads the assigned partitions' committed offsets itself (start_offsets()):
// one request waits this long, and all of them at most kStartOffsetsMillis (below librdkafka's
// max.poll.interval.ms of 300 s) before the daemon stops with an error.
inline constexpr int kCommittedMillis = 2000;
inline constexpr int kStartOffsetsMillis = 240000;

class InputConsumer : public RdKafka::RebalanceCb,
                      public RdKafka::OffsetCommitCb,
                      public RdKafka::EventCb {
 public:
  struct Hooks {
    // A record to handle (its offset will be stored once its output is delivered).
    std::function<void(RdKafka::Message&)> accept;
    // A fatal error: the daemon stops.
    std::function<void(const std::string&)> fail;
    // Offsets were committed (the ordered thread may have work: trims).
    std::function<void()> committed;
    // Every 30 s: the progress line to log.
    std::function<std::string()> progress;
  };

  // `tracker` and `in_flight` are the engine's (shared with the delivery side); `stop` and
  // `failed` its flags. Must outlive the KafkaConsumer that calls back into it.
  InputConsumer(const ops::ConfigHolder& holder, std::shared_ptr<const Config> startup,
                Stage& stage, OffsetTracker& tracker, InFlight& in_flight,
                ops::DaemonMetrics* metrics, const std::atomic<bool>& stop,
                const std::atomic<bool>& failed, Hooks hooks);

  // Takes the consumer created with this object as its rebalance_cb, offset_commit_cb and
  // event_cb, and the partitions its topic had at start (or none, when the topics could not be
  // checked yet: then they are checked before the first record is handled).
  void attach(std::unique_ptr<RdKafka::KafkaConsumer> consumer, std::set<std::int32_t> partitions,
              bool topics_checked);
  RdKafka::KafkaConsumer& consumer() { return *consumer_; }

  // The consume loop, until `stop`; then, unless `failed`, drains (bounded by kDrainMillis),
  // stores and commits what was delivered, and closes the consumer (which revokes the
  // assignment and leaves the group). The calling thread becomes the consumer thread.
  void run();

  // Any thread:
  // When the loop last polled Kafka (for health()).
  Clock::time_point last_poll() const { return Clock::time_point(Clock::duration(last_poll_)); }
  std::size_t assigned_count() const { return assigned_count_; }
  bool brokers_down() const { return brokers_down_; }
  // Non-empty while the assignment is partial: why consumption is paused, with the remedy.
  std::string partial_assignment() const;
  bool paused_now() const { return paused_now_; }
  // When the consume loop ended (a stop began), once run() is past it.
  Clock::time_point loop_ended() const { return Clock::time_point(Clock::duration(loop_ended_)); }
  // librdkafka's "all brokers down" reached the other client (the producer): not ready until a
  // statistics report shows a broker connected again.
  void note_brokers_down() { brokers_down_ = true; }

  // librdkafka callbacks, on the consumer thread (served by its polls).
  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override;
  void offset_commit_cb(RdKafka::ErrorCode err,
                        std::vector<RdKafka::TopicPartition*>& offsets) override;
  void event_cb(RdKafka::Event& event) override;

 private:
  void consume_loop() REQUIRES(thread_);
  void drain() REQUIRES(thread_);
  void wait_drained(const std::vector<PartitionId>& partitions, Clock::time_point deadline)
      REQUIRES(thread_);
  void store_offsets() REQUIRES(thread_);
  kafka::TopicPartitions assignment() REQUIRES(thread_);
  void set_paused(bool want, bool force = false) REQUIRES(thread_);
  std::expected<void, std::string> start_offsets(RdKafka::KafkaConsumer& consumer,
                                                 std::vector<RdKafka::TopicPartition*>& partitions)
      REQUIRES(thread_);
  void update_coverage(RdKafka::KafkaConsumer& consumer) REQUIRES(thread_);
  void log_partial_assignment() const;
  void apply_backpressure() REQUIRES(thread_);
  bool holding() const REQUIRES(thread_) { return backpressure_ && !paused_; }
  bool want_paused() const REQUIRES(thread_);
  bool check_topics(bool now) REQUIRES(thread_);
  void rewind(const RdKafka::Message& message) REQUIRES(thread_);
  void record_consumer_lag(const std::string& json) REQUIRES(thread_);
  std::vector<std::string> lag_labels(const PartitionId& id) const;
  const std::string& topic() const;

  const ops::ConfigHolder& holder_;
  const std::shared_ptr<const Config> startup_;
  Stage& stage_;
  OffsetTracker& tracker_;
  InFlight& in_flight_;
  ops::DaemonMetrics* const metrics_;
  const std::atomic<bool>& stop_;
  const std::atomic<bool>& failed_;
  const Hooks hooks_;
  const std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;

  // The consumer thread: the loop, and librdkafka's callbacks it serves.
  ThreadRole thread_;
  Assignment assignment_ GUARDED_BY(thread_);
  bool paused_ GUARDED_BY(thread_) = false;        // the consumer's pause state
  // The partitions the daemon paused and has not resumed. librdkafka keeps a partition's pause
  // across a revoke and a new assignment, and only these are resumed: librdkafka 2.0 may
  // restart a partition that is resumed without being paused at an older offset (its issue
  // 4686, fixed in 2.4).
  std::set<PartitionId> paused_partitions_ GUARDED_BY(thread_);
  bool backpressure_ GUARDED_BY(thread_) = false;  // too much in flight: holding records back
  Clock::time_point backpressure_since_ GUARDED_BY(thread_);
  bool topics_unchecked_ GUARDED_BY(thread_) = false;
  Clock::time_point last_topic_check_ GUARDED_BY(thread_);

  std::atomic<Clock::rep> last_poll_{Clock::now().time_since_epoch().count()};
  std::atomic<std::size_t> assigned_count_{0};
  // Every broker unreachable (ERR__ALL_BROKERS_DOWN, or a statistics report without a connected
  // broker), cleared by a report with one.
  std::atomic<bool> brokers_down_{false};
  // After every assignment: how many of the topic's partitions (of how many) went to other
  // members of the group.
  std::atomic<std::size_t> missing_partitions_{0}, partitions_total_{0};
  std::atomic<bool> paused_now_{false};
  std::atomic<Clock::rep> loop_ended_{0};
};

}  // namespace neardup::daemon
