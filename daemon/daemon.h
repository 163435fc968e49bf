// neardupd (docs/delivery.md, daemon/README.md): one process of a role, made of the engine that
// every role shares (engine.h: consume with backpressure, workers, batches in offset order,
// publishing with delivery reports, offsets and transactions) and the role's stage (role.h).
//
// Delivery: at least once, deterministic verdicts. The consumer stores offset n + 1 of a
// partition only when the outputs of every offset <= n are delivered; a record consumed again
// after a crash gets the verdict the index stored against its offset. With kafka.exactly_once
// the producer is transactional and each batch's outputs commit together with its input
// offsets.
//
// One index, one owner: a role with a store must be assigned every partition of what it
// consumes; while another member of its group holds some, every assigned partition stays paused
// and readiness() fails.
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "daemon/role.h"
#include "daemon/start_error.h"
#include "message/answers.h"
#include "ops/metrics.h"
#include "ops/reload.h"
#include "store/index.h"

namespace neardup::daemon {

class Engine;

struct DaemonCounts {
  std::uint64_t pages_in = 0;
  std::uint64_t outputs = 0;
  std::uint64_t dead_letters = 0;
  std::uint64_t replayed = 0;
};

class Daemon {
 public:
  // Makes the role's stage and the engine's Kafka clients (from config.current()), checks the
  // topics the role needs and subscribes. Errors name the property, secret, topic or client
  // that failed; a missing topic is a config_error. The daemon owns the index from here on (null,
  // and never opened, for Role::kFingerprint); `config` and `metrics` (may be null) must outlive
  // the daemon.
  static std::expected<std::unique_ptr<Daemon>, StartError> create(
      const ops::ConfigHolder& config, std::unique_ptr<Index> index,
      ops::DaemonMetrics* metrics = nullptr, Role role = Role::kSingle);

  Role role() const;
  // What `role` needs of the cluster `config` names (its topics, their partition counts and
  // settings: Stage::required_topics, check_cluster), checked without starting it (neardupd
  // --check-config F --role R). The error says what is missing and how to mend it.
  static std::expected<void, std::string> check_cluster(const std::shared_ptr<const Config>& config,
                                                        Role role);
  ~Daemon();

  // Consumes until request_stop() or a fatal error, then drains, commits and closes. Returns
  // after a clean stop, or the fatal error that stopped the daemon.
  std::expected<void, std::string> run();

  // Thread-safe and async-signal-safe in effect (sets a flag).
  void request_stop() { stop_requested_.store(true); }
  bool finished() const { return finished_.load(); }
  DaemonCounts counts() const;

  // The index's counts and sizes (Index::stats(): a read transaction on the calling thread,
  // which never blocks the ordered thread); empty without an index (a fingerprint worker). Any
  // thread, for the life of the daemon.
  IndexStats index_stats();

  // The index's questions (metrics.queries; daemon/queries.h): what a processed record would be
  // tagged, without inserting it, and the live page stored under an id with its cluster
  // (message/answers.h). Any thread: each waits for the batch being applied to probe, and reads
  // what it found without holding up the next.
  StoreResult<LookupAnswer> lookup(const ProcessedRecord& record);
  StoreResult<std::optional<nlohmann::json>> describe_page(const std::string& id,
                                                           std::size_t max_members);
  // Why the stored page `id` matched another (explain_stored, message/answers.h).
  StoreResult<nlohmann::json> explain_stored(const std::string& id, const std::string& with);

  // Healthy while the consume loop has polled Kafka within kStallMillis (engine.h), or while a
  // requested stop drains; otherwise the reason. Any thread. For the systemd watchdog and
  // /healthz.
  std::expected<void, std::string> health() const;

  // Ready to process pages: the index is open, a Kafka broker is reachable (the consumer's
  // latest statistics show one connected; librdkafka's "all brokers down" clears it at once)
  // and at least one partition is assigned, none of them to another member of the group when
  // the role owns them all; not while stopping. Otherwise the reason. Any thread. For READY=1,
  // STATUS= and /readyz.
  std::expected<void, std::string> readiness() const;

 private:
  explicit Daemon(std::unique_ptr<Engine> engine);
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> finished_{false};
  std::unique_ptr<Engine> engine_;
};

}  // namespace neardup::daemon
