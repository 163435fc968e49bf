// neardupd's engine (docs/delivery.md): what every role shares. It consumes the role's topic
// (consumer.h: backpressure, the assignment, offsets), runs each record through the role's
// prepare() on a pool of workers, hands the prepared records to the role's decide() in batches
// in offset order per partition (lanes.h), publishes what the role renders for each record
// through an idempotent producer (publisher.h), and stores each offset once the outputs before
// it are delivered; with kafka.exactly_once each batch's outputs commit with its input offsets
// in one transaction. The role (role.h) is the rest.
//
// Threads: run()'s caller is the consumer thread; run() starts pipeline.threads workers, the
// ordered thread (nd:index, the only one that calls decide()) and the thread serving the
// producer's delivery reports (nd:deliver).
//
// Reload (docs/configuration.md): the running config comes from an ops::ConfigHolder that the
// signal thread swaps. A worker takes one snapshot per record and keeps it with the record, so
// the record's stages, its verdict and its output follow one config; the ordered thread reads
// pipeline.batch_* once per batch. The restart-only keys (kafka.*, store.*, pipeline.threads)
// are read from the config the engine was created with.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <expected>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "daemon/consumer.h"
#include "daemon/in_flight.h"
#include "daemon/lanes.h"
#include "daemon/offset_tracker.h"
#include "daemon/publisher.h"
#include "daemon/role.h"
#include "daemon/start_error.h"
#include "daemon/work.h"
#include "ops/metrics.h"
#include "ops/reload.h"

namespace neardup::daemon {

// The consume loop polls Kafka every 100 ms, also while paused; a rebalance callback may hold it
// up to kDrainMillis. Longer than this without a poll means the daemon is stuck (health()).
inline constexpr int kStallMillis = 15000;

struct EngineCounts {
  std::uint64_t pages_in = 0;
  std::uint64_t outputs = 0;
  std::uint64_t dead_letters = 0;
};

class Engine : public RdKafka::EventCb {
 public:
  // Creates the Kafka clients for `stage` (from holder.current()), checks the topics it needs
  // and subscribes. `stop` is the stop request (the caller's flag, set from any thread). Errors
  // name the property, topic or client that failed; a missing topic is a config_error.
  static std::expected<std::unique_ptr<Engine>, StartError> create(const ops::ConfigHolder& holder,
                                                                   std::unique_ptr<Stage> stage,
                                                                   ops::DaemonMetrics* metrics,
                                                                   std::atomic<bool>& stop);
  ~Engine() override;

  // Consumes until the stop request or a fatal error, then drains, commits and closes. Returns
  // after a clean stop, or the fatal error that stopped the engine.
  std::expected<void, std::string> run();

  Stage& stage() { return *stage_; }
  const Config& startup() const { return *startup_; }
  const Stage& stage() const { return *stage_; }
  EngineCounts counts() const;
  // How long the last stop took, from the end of the consume loop to the end of run().
  std::chrono::milliseconds stop_duration() const { return stop_duration_; }
  // health() and readiness() of daemon.h, any thread.
  std::expected<void, std::string> health() const;
  std::expected<void, std::string> readiness() const;

  // The producer's events (delivery-report thread, and the start).
  void event_cb(RdKafka::Event& event) override;

 private:
  Engine(const ops::ConfigHolder& holder, std::unique_ptr<Stage> stage, ops::DaemonMetrics* metrics,
         std::atomic<bool>& stop);

  void fail(const std::string& message) EXCLUDES(fatal_mutex_);
  void accept(RdKafka::Message& message);
  // A record's output or dead letter was written / its transaction committed.
  void delivered(const Work& work);
  void acknowledge(const Work& work);
  std::string progress() const;

  void start_threads();
  void stop_threads();
  void worker_loop() EXCLUDES(work_mutex_);
  void ordered_loop();
  void poll_loop();
  // The batch's outputs, each with its verdict (in a transaction under exactly_once).
  void publish(const std::vector<WorkPtr>& batch, const std::vector<Verdict>& verdicts);
  bool publish_transaction(const std::vector<WorkPtr>& batch, const std::vector<Verdict>& verdicts);
  // The role's companions of a record's output (Stage::companions); false after a failure.
  bool publish_companions(const Work& work, const Verdict& verdict);

  const ops::ConfigHolder& holder_;
  // The config at start-up, for the keys that need a restart (kafka.*, store.*,
  // pipeline.threads): a reload keeps them at these values anyway (ops/reload.h).
  const std::shared_ptr<const Config> startup_;
  const std::unique_ptr<Stage> stage_;
  ops::DaemonMetrics* const metrics_;  // may be null
  std::atomic<bool>& stop_;
  const std::shared_ptr<spdlog::logger> log_;

  OffsetTracker tracker_;
  InFlight in_flight_;
  Publisher publisher_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::unique_ptr<InputConsumer> input_;
  std::atomic<std::uint64_t> pages_in_{0};

  Mutex fatal_mutex_;
  std::string fatal_error_ GUARDED_BY(fatal_mutex_);
  std::atomic<bool> failed_{false};

  // Pipeline workers: records waiting for one.
  Mutex work_mutex_;
  CondVar work_cv_;
  std::deque<WorkPtr> work_queue_ GUARDED_BY(work_mutex_);
  std::vector<std::jthread> workers_;

  Lanes lanes_;  // from the workers to the ordered thread, in offset order
  std::jthread ordered_thread_;
  std::jthread poll_thread_;
  std::atomic<bool> pipeline_stop_{false};      // the threads' stop
  std::chrono::milliseconds stop_duration_{0};  // run()'s caller only
};

}  // namespace neardup::daemon
