// neardupd's engine (docs/delivery.md): consume pages from Kafka, run the pure pipeline on a
// thread pool, apply them to the index in offset order per partition and in batches, and
// publish each page tagged (or dead-lettered) through an idempotent producer.
//
// Delivery: at least once, deterministic verdicts. The consumer stores offset n + 1 of a
// partition (enable.auto.offset.store=false) only when the outputs of every offset <= n are
// delivered; librdkafka's auto commit (auto.commit.interval.ms) commits what is stored, and the
// daemon commits synchronously on revoke and at shutdown. A record consumed again after a crash
// gets the verdict the index stored against its offset. With kafka.exactly_once the producer is
// transactional and each index batch's outputs commit together with its input offsets.
//
// One index, one owner: the group must assign the daemon every input partition. While another
// member holds some, every assigned partition stays paused and readiness() fails.
//
// Backpressure: at most pipeline.max_in_flight records (and kMaxInFlightBytes of record values)
// are between consume and delivery; past that, the assigned partitions are paused (the consumer
// keeps polling, so it stays in the group) and resumed below three quarters of both bounds.
//
// Threads: the caller's thread runs run() (the consumer: Kafka callbacks are served there);
// run() starts the pipeline workers, one index thread (the index's single writer) and one thread
// serving the producer's delivery reports.
//
// Reload (docs/configuration.md): the daemon reads the running config from an ops::ConfigHolder that
// the signal thread swaps. A worker takes one snapshot per page and keeps it with the page, so
// the page's stages, its index request (scheme, dedup.max_distance) and its output (output.*,
// input.fields) all follow one config; the index thread reads pipeline.batch_* once per batch.
// The restart-only keys (kafka.*, store.*, pipeline.threads) are read from the config the
// daemon was created with. Nothing is restarted by a reload: no record is lost or repeated.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "kafka/client.h"
#include "message/answers.h"
#include "ops/metrics.h"
#include "ops/reload.h"
#include "store/index.h"

namespace neardup::daemon {

// Values of all records between consume and delivery stay below this (plus one record).
inline constexpr std::uint64_t kMaxInFlightBytes = 256ull << 20;

// How long a stop request may take to drain in-flight pages before the rest is left to replay.
inline constexpr int kDrainMillis = 8000;

// The consume loop polls Kafka every 100 ms, also while paused; a rebalance callback may hold it
// up to kDrainMillis. Longer than this without a poll means the daemon is stuck (health()).
inline constexpr int kStallMillis = 15000;

// Backpressure (pipeline.max_in_flight) holds records back without polling for this long
// before it pauses the input partitions (Impl::holding()): well under max.poll.interval.ms, so
// that the consumer stays in its group.
inline constexpr int kPauseAfterMillis = 2000;

// While the store is out of space (out_of_space(): a full file system or store.max_map_size),
// the index thread keeps the failed batch and applies it again this often; meanwhile
// backpressure pauses the input, readiness() names the cause, and nothing is lost.
inline constexpr int kStoreRetryMillis = 2000;

// How long create() waits for the cluster's metadata to check that the topics exist. When no
// broker answers in time (and kafka.exactly_once is off), the daemon starts anyway, not ready,
// and the consume loop repeats the check every kTopicRecheckMillis, and before it handles any
// record: a misspelt topic still stops it before anything is produced.
inline constexpr int kTopicCheckMillis = 5000;
inline constexpr int kTopicRecheckMillis = 2000;

// How long the assign callback waits for the input topic's partition list (it holds up the
// consume loop, well within kStallMillis; on a timeout the last known list is used).
inline constexpr int kAssignmentCheckMillis = 5000;

// How long create() waits for the output topics' max.message.bytes under kafka.exactly_once
// (a real broker answers at once; librdkafka 2.0's mock cluster never does).
inline constexpr int kDescribeConfigsMillis = 5000;

// How often librdkafka reports consumer statistics (statistics.interval.ms), from which
// neardup_consumer_lag{partition} is set; kafka.properties may override it.
inline constexpr int kStatisticsMillis = 5000;

// What one neardupd process does (daemon/README.md, "Scaled out: two roles"):
//   kSingle       consume kafka.input_topic, fingerprint, apply to the index, publish outputs
//                 (the default; one process per consumer group and store)
//   kFingerprint  consume kafka.input_topic in group kafka.group_id (any number of processes)
//                 and publish each record's fingerprinted form to kafka.fingerprint_topic, to the
//                 partition of the same number; no store
//   kIndex        consume kafka.fingerprint_topic in group "<kafka.group_id>-index" (one
//                 process: the store's owner), apply to the index and publish outputs and dead
//                 letters exactly as kSingle does
enum class Role { kSingle, kFingerprint, kIndex };
std::string_view role_name(Role role);  // single, fingerprint, index
std::optional<Role> parse_role(std::string_view name);

// The consumer group and topic a role consumes.
std::string consumer_group(const Config& config, Role role);
const std::string& consumed_topic(const Config& config, Role role);

// How often the index role reads the fingerprint workers' committed input offsets, to trim the
// verdicts stored against source offsets that can no longer come back (Impl::plan_trims).
inline constexpr int kTrimCheckMillis = 10000;

// The librdkafka properties of neardupd's consumer and producer: neardupd's own, then
// kafka.properties, then kafka.consumer_properties / kafka.producer_properties (each overriding
// the ones before), with {file: ...} and {env: ...} values read. The error names the property
// and why its value could not be read ("kafka.properties.sasl.password: file /x: cannot read:
// No such file or directory").
// `role` sets the consumer's group.id and the producer's transactional.id (exactly_once):
// "neardupd-<group>" (single), "neardupd-<group>-index", and for a fingerprint worker, of which
// several run at once, "neardupd-<group>-fingerprint-<host>-<pid>".
std::expected<kafka::Properties, std::string> consumer_properties(const Config& config,
                                                                  Role role = Role::kSingle);
std::expected<kafka::Properties, std::string> producer_properties(const Config& config,
                                                                  Role role = Role::kSingle);

struct DaemonCounts {
  std::uint64_t pages_in = 0;
  std::uint64_t outputs = 0;
  std::uint64_t dead_letters = 0;
  std::uint64_t replayed = 0;
};

class Daemon {
 public:
  // Creates the Kafka clients (from config.current()) and subscribes to the role's topic.
  // Errors name the property or client that failed. The daemon owns the index from here on
  // (null, and never opened, for Role::kFingerprint); `config` and `metrics` (may be null) must
  // outlive the daemon.
  static std::expected<std::unique_ptr<Daemon>, std::string> create(
      const ops::ConfigHolder& config, std::unique_ptr<Index> index,
      ops::DaemonMetrics* metrics = nullptr, Role role = Role::kSingle);

  Role role() const;
  ~Daemon();

  // Consumes until request_stop() or a fatal error, then drains, commits and closes.
  // Returns an empty string after a clean stop, or the fatal error that stopped the daemon.
  std::string run();

  // Thread-safe and async-signal-safe in effect (sets a flag).
  void request_stop() { stop_requested_.store(true); }
  bool finished() const { return finished_.load(); }
  DaemonCounts counts() const;

  // The index's counts and sizes (Index::stats(): a read transaction on the calling thread,
  // which never blocks the index thread); empty without an index (a fingerprint worker). Any
  // thread, for the life of the daemon.
  IndexStats index_stats();

  // The index's questions (metrics.queries; daemon/queries.h): what a processed record would be
  // tagged, without inserting it, and the live page stored under an id with its cluster
  // (message/answers.h). Any thread: each waits for the batch being applied, and holds the
  // next one back only while it reads.
  StoreResult<LookupAnswer> lookup(const ProcessedRecord& record);
  StoreResult<std::optional<nlohmann::json>> describe_page(const std::string& id,
                                                           std::size_t max_members);

  // Healthy while the consume loop has polled Kafka within kStallMillis, or while a requested
  // stop drains (bounded by kDrainMillis); otherwise the reason. Any thread. For the systemd
  // watchdog and /healthz.
  std::expected<void, std::string> health() const;

  // Ready to process pages: the index is open, a Kafka broker is reachable (the consumer's
  // latest statistics, every kStatisticsMillis, show one connected; librdkafka's "all brokers
  // down" clears it at once) and at least one input partition is assigned, none of them to
  // another member of the group (a partial assignment pauses consumption: daemon/README.md,
  // "One daemon per consumer group"); not while stopping. Otherwise the reason. Any thread. For
  // READY=1, STATUS= and /readyz.
  std::expected<void, std::string> readiness() const;

 private:
  struct Impl;
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> finished_{false};
};

}  // namespace neardup::daemon
