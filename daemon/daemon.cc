#include "daemon/daemon.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/log.h"
#include "common/parallel.h"
#include "common/thread_name.h"
#include "daemon/consumer_stats.h"
#include "daemon/in_flight.h"
#include "daemon/lanes.h"
#include "daemon/offset_tracker.h"
#include "daemon/publisher.h"
#include "daemon/work.h"
#include "kafka/admin.h"
#include "message/fingerprinted.h"
#include "message/processing.h"

namespace neardup::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The producer's local limit; the broker (message.max.bytes / max.message.bytes) has the last
// word, and a record it refuses as too large is republished without its body.
constexpr const char* kProducerMessageMaxBytes = "1000000000";

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

void observe_stages(ops::DaemonMetrics& metrics, const StageTimes& times) {
  const std::pair<ops::Stage, const std::optional<std::chrono::nanoseconds>&> stages[] = {
      {ops::Stage::kDecode, times.decode},
      {ops::Stage::kDenoise, times.denoise},
      {ops::Stage::kFeatures, times.features},
      {ops::Stage::kFingerprint, times.fingerprint},
  };
  for (const auto& [stage, time] : stages) {
    if (time) metrics.stage(stage).observe(seconds(*time));
  }
}

}  // namespace

namespace {

// `properties` followed by kafka.properties and then one client's own map (`client`, at
// `client_path`), with {file: ...} and {env: ...} values read.
std::expected<kafka::Properties, std::string> with_configured(kafka::Properties properties,
                                                              const Config& config,
                                                              const PropertyMap& client,
                                                              const std::string& client_path) {
  for (const auto& [extra, path] : {std::pair{&config.kafka.properties, "kafka.properties"},
                                    std::pair{&client, client_path.c_str()}}) {
    for (const auto& [name, value] : *extra) {
      auto text = resolve_property(value);
      if (!text) return std::unexpected(std::string(path) + "." + name + ": " + text.error());
      properties.emplace_back(name, std::move(*text));
    }
  }
  return properties;
}

// A fingerprint worker publishes each record to the fingerprint partition of its input
// partition's number, so the fingerprint topic needs at least as many partitions.
std::expected<void, std::string> check_partition_counts(RdKafka::Handle& handle,
                                                        const Config& config, Role role) {
  if (role != Role::kFingerprint) return {};
  const KafkaConfig& k = config.kafka;
  auto input = kafka::topic_partitions(handle, k.input_topic, kTopicCheckMillis);
  if (!input) return std::unexpected(input.error());
  auto fingerprinted = kafka::topic_partitions(handle, k.fingerprint_topic, kTopicCheckMillis);
  if (!fingerprinted) return std::unexpected(fingerprinted.error());
  if (fingerprinted->size() < input->size()) {
    return std::unexpected(
        "kafka.fingerprint_topic " + k.fingerprint_topic + " has " +
        std::to_string(fingerprinted->size()) + " partitions, fewer than kafka.input_topic " +
        k.input_topic + "'s " + std::to_string(input->size()) +
        ": each input partition's pages go to the fingerprint partition of the same number. "
        "Add partitions to " + k.fingerprint_topic + " (kafka-topics.sh --alter --partitions " +
        std::to_string(input->size()) + ")");
  }
  return {};
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kFingerprint:
      return "fingerprint";
    case Role::kIndex:
      return "index";
    case Role::kSingle:
      break;
  }
  return "single";
}

std::optional<Role> parse_role(std::string_view name) {
  for (Role role : {Role::kSingle, Role::kFingerprint, Role::kIndex}) {
    if (role_name(role) == name) return role;
  }
  return std::nullopt;
}

std::string consumer_group(const Config& config, Role role) {
  return role == Role::kIndex ? config.kafka.group_id + "-index" : config.kafka.group_id;
}

const std::string& consumed_topic(const Config& config, Role role) {
  return role == Role::kIndex ? config.kafka.fingerprint_topic : config.kafka.input_topic;
}

std::expected<kafka::Properties, std::string> consumer_properties(const Config& config,
                                                                  Role role) {
  kafka::Properties properties = {
      {"bootstrap.servers", config.kafka.bootstrap_servers},
      {"group.id", consumer_group(config, role)},
      // A new group starts at the oldest page: a crawl pipeline must not skip what it missed.
      {"auto.offset.reset", "earliest"},
      // Offsets are stored by the daemon once outputs are delivered (docs/delivery.md).
      {"enable.auto.offset.store", "false"},
      {"enable.auto.commit", config.kafka.exactly_once ? "false" : "true"},
      {"auto.commit.interval.ms", "1000"},
      // The prefetch queue (one for all partitions) holds about a second of input at full
      // speed. When it is full the fetcher stops, and librdkafka 2.0 looks at it again only
      // when its broker thread wakes (I/O, an operation, or once a second): a queue that
      // drains sooner leaves the daemon waiting for records. At 16 MiB that cost 0.25-0.5 s
      // stalls and half the throughput (daemon/README.md, Backpressure).
      {"queued.max.messages.kbytes", "65536"},
      {"isolation.level", "read_committed"},
      // Per-partition consumer_lag for neardup_consumer_lag (event_cb, EVENT_STATS).
      {"statistics.interval.ms", std::to_string(kStatisticsMillis)},
  };
  return with_configured(std::move(properties), config, config.kafka.consumer_properties,
                         "kafka.consumer_properties");
}

std::expected<kafka::Properties, std::string> producer_properties(const Config& config,
                                                                  Role role) {
  kafka::Properties properties = {
      {"bootstrap.servers", config.kafka.bootstrap_servers},
      {"enable.idempotence", "true"},
      {"message.max.bytes", kProducerMessageMaxBytes},
      // In-flight pages are bounded before the producer; its queue holds at most those.
      {"queue.buffering.max.messages",
       std::to_string(std::max<std::uint32_t>(config.pipeline.max_in_flight, 1) * 2 + 1024)},
      {"queue.buffering.max.kbytes", std::to_string(2 * (kMaxInFlightBytes >> 10))},
      // Outputs wait up to 20 ms to join a batch. At librdkafka's 5 ms, a partition's batch
      // held one or two pages and the producer's broker thread, waking for each, took about 6 %
      // of two cores (2 % at 20 ms; daemon/README.md, Producer). A transaction's commit flushes
      // at once whatever the linger.
      {"linger.ms", "20"},
  };
  if (config.kafka.exactly_once) {
    std::string id = "neardupd-" + config.kafka.group_id;
    if (role == Role::kIndex) id += "-index";
    // Workers come and go: each has its own id (KIP-447 fences a zombie by the group's
    // generation, not by the id). A crashed worker's open transaction is aborted by the broker
    // after transaction.timeout.ms.
    if (role == Role::kFingerprint) {
      id += "-fingerprint-" + host_name() + "-" + std::to_string(getpid());
    }
    properties.emplace_back("transactional.id", std::move(id));
  }
  return with_configured(std::move(properties), config, config.kafka.producer_properties,
                         "kafka.producer_properties");
}

// The daemon's consumer side and its threads. The parts with rules of their own are delegated:
// per-partition ordering to Lanes, the bounds on in-flight records to InFlight, which offsets
// may be stored to OffsetTracker, rendering and delivery accounting of outputs and dead
// letters to Publisher (and render_outgoing), the page -> index item -> output glue to
// message/processing.h.
struct Daemon::Impl : public RdKafka::EventCb,
                      public RdKafka::RebalanceCb,
                      public RdKafka::OffsetCommitCb {
  Impl(const ops::ConfigHolder& holder_in, std::unique_ptr<Index> index_in,
       std::atomic<bool>& stop_requested_in, ops::DaemonMetrics* metrics_in, Role role_in)
      : role(role_in),
        holder(holder_in),
        startup(holder.current()),
        index(std::move(index_in)),
        metrics(metrics_in),
        stop_requested(stop_requested_in),
        log(logger("daemon")),
        in_flight(kMaxInFlightBytes),
        publisher(startup->kafka, startup->kafka.exactly_once, metrics,
                  {.delivered = [this](const Work& work) { delivered(work); },
                   .fail = [this](const std::string& message) { fail(message); }},
                  role == Role::kFingerprint
                      ? Publisher::Render([this](const Work& work, const Verdict&,
                                                 const KafkaConfig& topics, bool shrunk) {
                          return render_fingerprinted(work, topics, shrunk, fingerprint_key);
                        })
                      : Publisher::Render(render_outgoing)) {}

  const Role role;

  // --- configuration and clients ---
  // The running config, swapped by reloads: read once per page (workers), per batch (index
  // thread) or per poll (backpressure).
  const ops::ConfigHolder& holder;
  // The config at start-up, for the keys that need a restart (kafka.*, store.*,
  // pipeline.threads): a reload keeps them at these values anyway (ops/reload.h).
  const std::shared_ptr<const Config> startup;
  std::unique_ptr<Index> index;
  ops::DaemonMetrics* metrics;  // may be null
  std::atomic<bool>& stop_requested;
  // kafka.fingerprint_key, read by create() (empty: records are not signed). Read-only after.
  std::string fingerprint_key;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::unique_ptr<RdKafka::Producer> producer;
  // Index role: a client of the fingerprint workers' group that never joins it, to read their
  // committed input offsets (plan_trims()).
  std::unique_ptr<RdKafka::KafkaConsumer> worker_offsets;

  // The topic this role consumes, and the ones create() checks exist.
  const std::string& consumed() const { return consumed_topic(*startup, role); }
  std::vector<std::string> required_topics() const {
    const KafkaConfig& k = startup->kafka;
    switch (role) {
      case Role::kFingerprint:
        return {k.input_topic, k.fingerprint_topic};
      case Role::kIndex:
        return {k.fingerprint_topic, k.output_topic, k.dead_letter_topic};
      case Role::kSingle:
        break;
    }
    return {k.input_topic, k.output_topic, k.dead_letter_topic};
  }

  // --- delivery state ---
  OffsetTracker tracker;
  InFlight in_flight;
  Publisher publisher;
  std::map<PartitionId, std::int64_t> stored;  // consumer thread only
  std::set<PartitionId> assigned;              // consumer thread only
  bool paused = false;                         // the consumer's pause state; consumer thread only
  bool backpressure = false;  // too much in flight: holds records back; consumer thread only
  Clock::time_point backpressure_since;  // when backpressure began; consumer thread only
  // The input topic's partitions (create(), refreshed at every assignment); consumer thread
  // only. The daemon owns one index, so it must be assigned all of them (update_coverage()).
  std::set<std::int32_t> input_partitions;
  std::atomic<std::uint64_t> pages_in{0}, replayed{0};
  // Clock::time_point of the consume loop's last poll, as ticks (health()).
  std::atomic<Clock::rep> last_poll{Clock::now().time_since_epoch().count()};
  // For readiness(): the size of `assigned`, and whether every broker is unreachable (set by
  // ERR__ALL_BROKERS_DOWN or a statistics report without a connected broker, cleared by a
  // report with one).
  std::atomic<std::size_t> assigned_count{0};
  std::atomic<bool> brokers_down{false};
  // The topics could not be checked at start (no broker answered): consume_loop checks them
  // before it handles a record. Consumer thread only after create().
  bool topics_unchecked = false;
  Clock::time_point last_topic_check;
  // Set after every assignment: how many of the input topic's partitions (of how many) went to
  // other members of the group. Non-zero means the input is split over separate indexes:
  // consumption stays paused, readiness() fails (update_coverage()).
  std::atomic<std::size_t> missing_partitions{0}, partitions_total{0};
  // Set while the store is out of space (index thread; readiness() reads it): why.
  std::mutex blocked_mutex;
  std::string store_blocked;

  std::mutex fatal_mutex;
  std::string fatal_error;
  std::atomic<bool> failed{false};

  // --- pipeline workers ---
  std::mutex work_mutex;
  std::condition_variable work_cv;
  std::deque<WorkPtr> work_queue;
  std::vector<std::jthread> workers;

  // --- index thread ---
  Lanes lanes;
  std::mutex trims_mutex;
  std::vector<std::pair<std::string, std::int64_t>> trims;  // committed offsets to trim
  // Index role (plan_trims()): per partition number, the workers' committed input offset and
  // the fingerprint partition's high watermark read after it. Under trims_mutex.
  struct TrimPlan {
    std::int64_t input_committed = 0;
    std::int64_t fingerprint_end = 0;
  };
  std::map<std::int32_t, TrimPlan> trim_plans;
  Clock::time_point last_trim_plan;
  std::jthread index_thread;
  std::jthread poll_thread;
  std::atomic<bool> pipeline_stop{false};

  void fail(const std::string& message) {
    {
      std::lock_guard lock(fatal_mutex);
      if (!fatal_error.empty()) return;
      fatal_error = message;
    }
    log->error("fatal error={}", message);
    failed = true;
    stop_requested = true;
  }

  // ---------------------------------------------------------------- librdkafka callbacks

  void event_cb(RdKafka::Event& event) override {
    switch (event.type()) {
      case RdKafka::Event::EVENT_ERROR:
        if (event.fatal()) {
          std::string reason;
          RdKafka::ErrorCode code = producer ? producer->fatal_error(reason) : event.err();
          fail("kafka fatal error " + kafka::error_name(code) + ": " +
               (reason.empty() ? event.str() : reason));
        } else {
          if (event.err() == RdKafka::ERR__ALL_BROKERS_DOWN) brokers_down = true;
          log->warn("kafka error={} detail={}", kafka::error_name(event.err()), event.str());
        }
        break;
      case RdKafka::Event::EVENT_STATS:
        record_consumer_lag(event.str());
        if (auto up = brokers_up(event.str())) brokers_down = *up == 0;
        break;
      case RdKafka::Event::EVENT_LOG:
        // Connection failures also arrive as EVENT_ERROR (logged above): log them once.
        if (event.fac() == "FAIL") break;
        if (event.severity() <= RdKafka::Event::EVENT_SEVERITY_ERROR) {
          log->error("kafka {} {}", event.fac(), event.str());
        } else if (event.severity() <= RdKafka::Event::EVENT_SEVERITY_WARNING) {
          log->warn("kafka {} {}", event.fac(), event.str());
        } else {
          log->debug("kafka {} {}", event.fac(), event.str());
        }
        break;
      default:
        break;
    }
  }

  // Labels of neardup_consumer_lag: the group, the topic and the partition.
  std::vector<std::string> lag_labels(const PartitionId& id) const {
    return {startup->kafka.group_id, id.first, std::to_string(id.second)};
  }

  // Sets neardup_consumer_lag from a statistics report, for assigned partitions only: both this
  // and rebalance_cb run on the consumer thread, so a report that arrives after a revoke cannot
  // bring a removed partition back.
  void record_consumer_lag(const std::string& json) {
    if (!metrics) return;
    for (const auto& [id, lag] : consumer_lags(json)) {
      if (!assigned.contains(id)) continue;
      metrics->consumer_lag.labels(lag_labels(id)).set(static_cast<double>(lag));
    }
  }

  // A record's output or dead letter was written (Publisher, on its delivery report).
  void delivered(const Work& work) {
    // Under exactly_once a record is acknowledged when its transaction commits.
    if (!startup->kafka.exactly_once) acknowledge(work);
  }

  void acknowledge(const Work& work) {
    tracker.delivered(work.input.partition, work.input.offset);
    in_flight.remove(work.input.value.size());
  }

  void rebalance_cb(RdKafka::KafkaConsumer* kafka_consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    const bool cooperative = kafka_consumer->rebalance_protocol() == "COOPERATIVE";
    if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
      if (cooperative) {
        if (auto assigned_now = kafka::check(kafka_consumer->incremental_assign(partitions));
            !assigned_now) {
          fail("incremental_assign: " + assigned_now.error().message);
          return;
        }
      } else if (RdKafka::ErrorCode code = kafka_consumer->assign(partitions); code) {
        fail("assign: " + kafka::error_name(code) + ": " + RdKafka::err2str(code));
        return;
      }
      std::string names;
      for (auto* tp : partitions) {
        assigned.insert({tp->topic(), tp->partition()});
        names += " " + tp->topic() + "/" + std::to_string(tp->partition());
      }
      assigned_count = assigned.size();
      log->info("assigned partitions={}", names);
      update_coverage(*kafka_consumer);
      // librdkafka keeps a partition's pause state across a lost/re-assigned cycle; set it
      // explicitly, for the whole assignment, so that it matches the daemon's state.
      set_paused(want_paused(), /*force=*/true);
      return;
    }
    // Revoked (or lost): finish the partitions' in-flight pages and commit them, so that the
    // next owner resumes exactly after them. When stopping, waiting is bounded by the drain.
    std::vector<PartitionId> revoked;
    for (auto* tp : partitions) revoked.emplace_back(tp->topic(), tp->partition());
    const bool lost = err != RdKafka::ERR__REVOKE_PARTITIONS || kafka_consumer->assignment_lost();
    if (!lost) {
      // A stop has already drained (drain()); a plain rebalance waits here, bounded.
      if (!stop_requested) wait_drained(revoked, Clock::now() + milliseconds(kDrainMillis));
      if (!startup->kafka.exactly_once) {
        store_offsets();
        kafka::TopicPartitions commit;
        for (const auto& id : revoked) {
          if (auto offset = tracker.committable(id)) commit.add(id.first, id.second, *offset);
        }
        if (!commit.empty()) {
          if (RdKafka::ErrorCode code = kafka_consumer->commitSync(commit.get()); code) {
            log->warn("commit on revoke failed error={}", kafka::error_name(code));
          }
        }
      }
    }
    for (const auto& id : revoked) {
      std::size_t left = tracker.outstanding(id);
      if (left > 0) {
        log->warn("revoked partition={} with {} pages un-acknowledged: they will be replayed",
                  partition_key(id), left);
      }
      tracker.forget(id);
      stored.erase(id);
      assigned.erase(id);
      if (metrics) metrics->consumer_lag.remove(lag_labels(id));
    }
    if (cooperative) {
      if (auto unassigned = kafka::check(kafka_consumer->incremental_unassign(partitions));
          !unassigned) {
        log->warn("incremental_unassign: {}", unassigned.error().message);
      }
    } else {
      kafka_consumer->unassign();
    }
    assigned_count = assigned.size();
    log->info("revoked partitions={} lost={}", revoked.size(), lost);
  }

  void offset_commit_cb(RdKafka::ErrorCode err,
                        std::vector<RdKafka::TopicPartition*>& offsets) override {
    if (err != RdKafka::ERR_NO_ERROR && err != RdKafka::ERR__NO_OFFSET) {
      log->warn("offset commit failed error={}", kafka::error_name(err));
      return;
    }
    {
      std::lock_guard lock(trims_mutex);
      for (auto* tp : offsets) {
        log->debug("committed partition={}/{} offset={} error={}", tp->topic(), tp->partition(),
                   tp->offset(), kafka::error_name(tp->err()));
        if (tp->err() == RdKafka::ERR_NO_ERROR && tp->offset() >= 0) {
          committed_locked({tp->topic(), tp->partition()}, tp->offset());
        }
      }
    }
    lanes.wake();
  }

  // The consumed partition `id` is committed up to `next` (under trims_mutex): queues the
  // verdicts stored against offsets that cannot come back for trimming. In one process those
  // are the consumed offsets below `next`. In the index role the verdicts are stored against
  // the crawler's input offsets, which a fingerprint worker may publish again until its group
  // commits past them: they are trimmed below the workers' committed offset once everything
  // the fingerprint partition held after that commit is committed here (plan_trims()).
  void committed_locked(const PartitionId& id, std::int64_t next) {
    if (role == Role::kFingerprint) return;  // no index, no verdicts to trim
    if (role == Role::kSingle) {
      trims.emplace_back(partition_key(id), next);
      return;
    }
    // Records dead-lettered against their own fingerprint-topic position.
    trims.emplace_back(partition_key(id), next);
    auto plan = trim_plans.find(id.second);
    if (plan == trim_plans.end() || next < plan->second.fingerprint_end) return;
    trims.emplace_back(partition_key({startup->kafka.input_topic, id.second}),
                       plan->second.input_committed);
    trim_plans.erase(plan);
  }

  // Index role, every kTrimCheckMillis (consumer thread): the workers' committed offset of each
  // assigned partition's input, then the fingerprint partition's end. Every copy of an input
  // offset below the former was published before that commit, so it lies below the latter.
  void plan_trims() {
    if (role != Role::kIndex || assigned.empty() ||
        Clock::now() - last_trim_plan < milliseconds(kTrimCheckMillis)) {
      return;
    }
    last_trim_plan = Clock::now();
    kafka::TopicPartitions wanted;
    for (const auto& id : assigned) {
      wanted.add(startup->kafka.input_topic, id.second, RdKafka::Topic::OFFSET_INVALID);
    }
    if (RdKafka::ErrorCode code = worker_offsets->committed(wanted.get(), kAssignmentCheckMillis);
        code) {
      log->debug("workers' committed offsets unknown error={}", kafka::error_name(code));
      return;
    }
    std::map<std::int32_t, TrimPlan> plans;
    for (auto* tp : wanted.get()) {
      if (tp->err() != RdKafka::ERR_NO_ERROR || tp->offset() < 0) continue;
      std::int64_t low = 0, high = 0;
      if (consumer->query_watermark_offsets(startup->kafka.fingerprint_topic, tp->partition(), &low,
                                            &high, kAssignmentCheckMillis) != RdKafka::ERR_NO_ERROR) {
        continue;
      }
      plans[tp->partition()] = TrimPlan{tp->offset(), high};
    }
    std::lock_guard lock(trims_mutex);
    for (const auto& [partition, plan] : plans) trim_plans[partition] = plan;
  }

  // ---------------------------------------------------------------- consumer thread

  void wait_drained(const std::vector<PartitionId>& partitions, Clock::time_point deadline) {
    auto drained = [&] {
      return std::ranges::all_of(
          partitions, [&](const PartitionId& id) { return tracker.outstanding(id) == 0; });
    };
    while (!drained() && !failed && Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(10));
    }
  }

  // offsets_store for every assigned partition whose committable offset advanced.
  void store_offsets() {
    if (startup->kafka.exactly_once) return;
    kafka::TopicPartitions advanced;
    for (const auto& id : assigned) {
      auto offset = tracker.committable(id);
      if (!offset) continue;
      auto it = stored.find(id);
      if (it != stored.end() && it->second >= *offset) continue;
      advanced.add(id.first, id.second, *offset);
      stored[id] = *offset;
    }
    if (advanced.empty()) return;
    if (RdKafka::ErrorCode code = consumer->offsets_store(advanced.get()); code) {
      log->warn("offsets_store failed error={}", kafka::error_name(code));
    }
  }

  kafka::TopicPartitions assignment() {
    std::vector<RdKafka::TopicPartition*> list;
    consumer->assignment(list);
    return kafka::TopicPartitions(std::move(list));
  }

  // Pauses or resumes the whole assignment when `want` differs from the current state (or
  // always, with `force`). Consumer thread.
  void set_paused(bool want, bool force = false) {
    if (want == paused && !force) return;
    auto partitions = assignment();
    if (want) {
      consumer->pause(partitions.get());
    } else {
      consumer->resume(partitions.get());
    }
    paused = want;
    log->debug("{} in_flight={} bytes={}", want ? "paused" : "resumed", in_flight.records(),
               in_flight.bytes());
  }

  // The error logged while the assignment is partial: names the group and the remedy.
  std::string split_message() const {
    return "consumer group " + startup->kafka.group_id + " assigned this daemon " +
           std::to_string(partitions_total - missing_partitions) + " of the " +
           std::to_string(partitions_total.load()) + " partitions of " + consumed() +
           ": another member joined the group, and each member has its own index, so pages "
           "would be tagged against part of the history. Consumption is paused until every "
           "partition is assigned here again. Remedy: stop the other member, or give it its "
           "own kafka.group_id and store";
  }

  void log_partial_assignment() const {
    log->error("partial assignment group={} topic={} missing={}: {}",
               consumer_group(*startup, role), consumed(), missing_partitions.load(),
               split_message());
  }

  // After an assignment: counts the input partitions assigned to other members (refreshing
  // the partition list, so that added partitions count) and logs a change. Consumer thread.
  void update_coverage(RdKafka::KafkaConsumer& kafka_consumer) {
    // Fingerprint workers share their input by design: each record is fingerprinted alone.
    if (role == Role::kFingerprint) return;
    const std::string& topic = consumed();
    if (auto listed = kafka::topic_partitions(kafka_consumer, topic, kAssignmentCheckMillis)) {
      input_partitions = std::set<std::int32_t>(listed->begin(), listed->end());
    } else {
      log->warn(
          "partitions of {} unknown ({}); checking the assignment against the last "
          "known {}",
          topic, listed.error(), input_partitions.size());
    }
    std::size_t missing = 0;
    for (std::int32_t partition : input_partitions) {
      if (!assigned.contains({topic, partition})) missing += 1;
    }
    const std::size_t before = missing_partitions.exchange(missing);
    partitions_total = input_partitions.size();
    if (metrics) metrics->partial_assignment.set(static_cast<double>(missing));
    if (missing > 0) {
      log_partial_assignment();
    } else if (before > 0) {
      log->info("assignment complete again group={} topic={} partitions={}: consuming",
                consumer_group(*startup, role), topic, input_partitions.size());
    }
  }

  void apply_backpressure() {
    const std::uint64_t max_pages =
        std::max<std::uint32_t>(holder.current()->pipeline.max_in_flight, 1);
    if (!backpressure && in_flight.over(max_pages)) {
      backpressure = true;
      backpressure_since = Clock::now();
    } else if (backpressure && in_flight.under(max_pages)) {
      backpressure = false;
    }
    set_paused(want_paused());
  }

  // Under backpressure the consume loop first only stops taking records: the fetched ones
  // wait in librdkafka's bounded queue (queued.max.messages.kbytes), ready the moment outputs
  // are delivered. Pausing the partitions drops that queue, and resuming waits for a new fetch
  // (about 250 ms a cycle measured on Kafka 4.1: a tenth of the throughput with small pages),
  // so they are paused only when backpressure lasts kPauseAfterMillis, e.g. while the output
  // topic is unreachable; paused, the loop polls again and the consumer stays in its group.
  bool holding() const { return backpressure && !paused; }

  // Paused under lasting backpressure, while the assignment is partial, and once a stop paused
  // it.
  bool want_paused() const {
    const bool lasting =
        backpressure && Clock::now() - backpressure_since >= milliseconds(kPauseAfterMillis);
    return lasting || missing_partitions > 0 || (paused && stop_requested);
  }

  void accept(RdKafka::Message& message) {
    auto work = std::make_shared<Work>(ConsumedRecord{
        .partition = {message.topic_name(), message.partition()},
        .offset = message.offset(),
        .timestamp_ms = message.timestamp().timestamp,
        .key = message.key() ? std::optional<std::string>(*message.key()) : std::nullopt,
        .headers = kafka::message_headers(message),
        .value = std::string(static_cast<const char*>(message.payload()), message.len())});
    tracker.consumed(work->input.partition, work->input.offset);
    in_flight.add(work->input.value.size());
    pages_in += 1;
    if (metrics) metrics->pages_in.inc();
    lanes.append(work);
    {
      std::lock_guard lock(work_mutex);
      work_queue.push_back(std::move(work));
    }
    work_cv.notify_one();
  }

  // The topic check create() could not do (see kTopicCheckMillis). `now`: do not wait for the
  // next retry time (a record arrived). False when the check failed: a topic is missing (the
  // daemon is stopping) or the cluster still does not answer.
  bool check_topics(bool now) {
    if (!topics_unchecked) return true;
    if (!now && Clock::now() - last_topic_check < milliseconds(kTopicRecheckMillis)) return false;
    last_topic_check = Clock::now();
    const Config& config = *startup;
    auto present = kafka::require_topics(*producer, required_topics(),
                                         config.kafka.bootstrap_servers, kTopicCheckMillis);
    if (!present) {
      if (!present.error().unreachable) fail(present.error().message);
      return false;
    }
    if (auto matched = check_partition_counts(*producer, config, role); !matched) {
      fail(matched.error());
      return false;
    }
    topics_unchecked = false;
    log->info("topics checked {}", fmt::join(required_topics(), " "));
    return true;
  }

  // Consumes `message` again later (its offset is neither handled nor stored).
  void rewind(const RdKafka::Message& message) {
    std::unique_ptr<RdKafka::TopicPartition> partition(RdKafka::TopicPartition::create(
        message.topic_name(), message.partition(), message.offset()));
    if (RdKafka::ErrorCode code = consumer->seek(*partition, 1000); code) {
      fail("seek back to " + message.topic_name() + "/" + std::to_string(message.partition()) +
           " offset " + std::to_string(message.offset()) + ": " + RdKafka::err2str(code));
    }
  }

  void consume_loop() {
    auto last_report = Clock::now();
    while (!stop_requested) {
      last_poll = Clock::now().time_since_epoch().count();
      check_topics(false);
      plan_trims();
      apply_backpressure();
      store_offsets();
      if (holding()) {  // see holding(): wait for deliveries without polling for records
        std::this_thread::sleep_for(milliseconds(1));
        continue;
      }
      std::unique_ptr<RdKafka::Message> message(consumer->consume(100));
      switch (message->err()) {
        case RdKafka::ERR_NO_ERROR:
          // Nothing is handled (and so produced) before the topics are known to exist. A
          // record that cannot be handled yet is read again: its offset is not stored.
          if (!check_topics(true)) {
            if (!stop_requested) rewind(*message);
            break;
          }
          accept(*message);
          break;
        case RdKafka::ERR__TIMED_OUT:
        case RdKafka::ERR__PARTITION_EOF:
          break;
        case RdKafka::ERR__FATAL:
          fail("consumer fatal error: " + message->errstr());
          break;
        default:
          log->warn("consume error={} detail={}", kafka::error_name(message->err()),
                    message->errstr());
          break;
      }
      if (Clock::now() - last_report > std::chrono::seconds(30)) {
        last_report = Clock::now();
        const PublishedCounts published = publisher.counts();
        log->info(
            "progress pages_in={} outputs={} dead_letters={} replayed={} in_flight={} "
            "paused={}",
            pages_in.load(), published.outputs, published.dead_letters, replayed.load(),
            in_flight.records(), paused);
        if (missing_partitions > 0) log_partial_assignment();
      }
    }
  }

  // Stops consuming, lets in-flight pages finish (bounded), stores and commits their offsets.
  void drain() {
    if (!assigned.empty()) {
      auto partitions = assignment();
      consumer->pause(partitions.get());
      paused = true;
    }
    const auto deadline = Clock::now() + milliseconds(kDrainMillis);
    std::vector<PartitionId> all(assigned.begin(), assigned.end());
    wait_drained(all, deadline);
    if (std::size_t left = tracker.outstanding_total(); left > 0) {
      log->warn("stopping with {} pages un-acknowledged: they will be replayed", left);
    }
    if (!startup->kafka.exactly_once) {
      store_offsets();
      RdKafka::ErrorCode code = consumer->commitSync();
      if (code != RdKafka::ERR_NO_ERROR && code != RdKafka::ERR__NO_OFFSET) {
        log->warn("final commit failed error={}", kafka::error_name(code));
      }
    }
  }

  // ---------------------------------------------------------------- pipeline workers

  void worker_loop() {
    name_this_thread("nd:work");
    // The snapshot and scheme id of the previous page: scheme_id() runs once per reload.
    std::shared_ptr<const Config> config;
    std::string scheme;
    while (true) {
      WorkPtr work;
      {
        std::unique_lock lock(work_mutex);
        work_cv.wait(lock, [&] { return pipeline_stop || !work_queue.empty(); });
        if (pipeline_stop) return;
        work = std::move(work_queue.front());
        work_queue.pop_front();
      }
      if (auto current = holder.current(); current != config) {
        config = std::move(current);
        scheme = scheme_id(*config);
      }
      if (role == Role::kIndex) {
        read_fingerprinted(*work, config, scheme);
      } else {
        StageTimes times;
        work->processed =
            process_record(work->input.value, config, scheme, metrics ? &times : nullptr);
        if (metrics) observe_stages(*metrics, times);
      }
      if (role != Role::kFingerprint) work->digest = record_digest(work->source().value);
      lanes.mark_ready(*work);
    }
  }

  // Index role: the fingerprinted record `work` consumed, as the crawler's record it carries and
  // that record's pipeline result. Bytes that are not a fingerprinted record are a dead letter
  // of their own (bad_fingerprinted_record).
  // A record that does not decode, does not fit the index (check_fingerprinted) or is not
  // signed with kafka.fingerprint_key is a dead letter against its own position in the
  // fingerprint topic, never against the input offset it names.
  void read_fingerprinted(Work& work, std::shared_ptr<const Config> config,
                          const std::string& scheme) {
    auto record = decode_fingerprinted(work.input.value);
    if (record) {
      if (auto fits = check_fingerprinted(*record, *config, scheme, work.input.partition.second);
          !fits) {
        record = std::unexpected(fits.error());
      } else if (!fingerprint_key.empty() &&
                 !signature_matches(fingerprint_key, work.input.key ? &*work.input.key : nullptr,
                                    work.input.headers, work.input.value)) {
        record = std::unexpected(std::string("its ") + std::string(kSignatureHeader) +
                                 " header is missing or not made with kafka.fingerprint_key");
      }
    }
    if (!record) {
      work.processed = ProcessedRecord{.config = std::move(config), .scheme = scheme};
      work.processed.page = std::unexpected(RecordError{"bad_fingerprinted_record", record.error()});
      return;
    }
    work.carried = ConsumedRecord{.partition = {record->source_topic, record->source_partition},
                                  .offset = record->source_offset,
                                  .timestamp_ms = record->timestamp_ms,
                                  .key = work.input.key,
                                  .headers = work.input.headers,
                                  .value = record->value};
    work.processed = processed_from(std::move(*record), std::move(config), scheme);
  }

  // ---------------------------------------------------------------- index thread

  void trim(const std::string& partition, std::int64_t offset) {
    if (auto trimmed = index->trim_pending(partition, offset); !trimmed) {
      log->warn("trim_pending partition={} error={}", partition, trimmed.error().message);
    }
  }

  // Under exactly_once: one transaction holds a batch's outputs and its input offsets.
  bool publish_transaction(const std::vector<WorkPtr>& batch,
                           const std::vector<Verdict>& verdicts) {
    if (auto begun = kafka::check(producer->begin_transaction()); !begun) {
      fail("begin_transaction: " + begun.error().message);
      return false;
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!publisher.publish(batch[i], verdicts[i], &pipeline_stop)) return false;
    }
    std::map<PartitionId, std::int64_t> next;
    for (const WorkPtr& work : batch) next[work->input.partition] = work->input.offset + 1;
    kafka::TopicPartitions offsets;
    for (const auto& [id, offset] : next) offsets.add(id.first, id.second, offset);
    std::unique_ptr<RdKafka::ConsumerGroupMetadata> group(consumer->groupMetadata());
    auto committed =
        kafka::check(producer->send_offsets_to_transaction(offsets.get(), group.get(), -1));
    if (committed) committed = kafka::check(producer->commit_transaction(-1));
    if (!committed) {
      // The index already holds these verdicts: after a restart the same outputs are
      // republished from the committed offsets.
      if (committed.error().txn_requires_abort) {
        if (auto aborted = kafka::check(producer->abort_transaction(-1)); !aborted) {
          log->warn("abort_transaction: {}", aborted.error().message);
        }
      }
      fail("transaction failed: " + committed.error().message);
      return false;
    }
    for (const WorkPtr& work : batch) acknowledge(*work);
    {
      std::lock_guard lock(trims_mutex);
      for (const auto& [id, offset] : next) committed_locked(id, offset);
    }
    return true;
  }

  void index_loop() {
    name_this_thread("nd:index");
    while (!pipeline_stop) {
      const std::shared_ptr<const Config> config = holder.current();  // once per batch
      std::vector<WorkPtr> batch = lanes.take(config->pipeline.batch_size, milliseconds(100),
                                              milliseconds(config->pipeline.batch_delay_ms));
      std::vector<std::pair<std::string, std::int64_t>> committed;
      {
        std::lock_guard lock(trims_mutex);
        committed.swap(trims);
      }
      for (const auto& [partition, offset] : committed) trim(partition, offset);
      if (batch.empty() || failed) continue;
      if (!index) {  // a fingerprint worker: no verdicts, the records go on as they are
        publish(batch, std::vector<Verdict>(batch.size()));
        continue;
      }
      std::vector<IndexItem> items;
      items.reserve(batch.size());
      for (const WorkPtr& work : batch) {
        const ConsumedRecord& source = work->source();
        items.push_back(
            index_item(work->processed,
                       SourceOffset{partition_key(source.partition), source.offset, work->digest},
                       source.timestamp_ms));
      }
      const auto apply_start = Clock::now();
      auto verdicts = apply(items);
      if (metrics) metrics->stage(ops::Stage::kIndex).observe(seconds(Clock::now() - apply_start));
      if (!verdicts) {
        // A stop while waiting for space leaves the batch to be replayed.
        if (!pipeline_stop) fail("index: " + verdicts.error().message);
        continue;
      }
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const Verdict& verdict = (*verdicts)[i];
        if (verdict.replayed) replayed += 1;
        if (verdict.offset_conflict) {
          const ConsumedRecord& source = batch[i]->source();
          log->warn(
              "source offset conflict partition={} offset={} read_from={}/{}: a record applied "
              "before names the same offset; this one was decided afresh",
              partition_key(source.partition), source.offset,
              partition_key(batch[i]->input.partition), batch[i]->input.offset);
          if (metrics) metrics->source_conflicts.inc();
        }
        if (metrics && items[i].page && !verdict.replayed) {
          metrics->probe_candidates.observe(verdict.candidates);
        }
      }
      publish(batch, *verdicts);
    }
  }

  // Index::apply, waiting out a store without space: the batch is applied again every
  // kStoreRetryMillis until it fits or the daemon stops (nothing of a failed batch is kept).
  // Meanwhile the batch holds its records in flight, so backpressure pauses the input.
  StoreResult<std::vector<Verdict>> apply(const std::vector<IndexItem>& items) {
    auto verdicts = index->apply(items);
    if (verdicts || !out_of_space(verdicts.error())) return verdicts;
    {
      std::lock_guard lock(blocked_mutex);
      store_blocked = verdicts.error().message;
    }
    if (metrics) metrics->store_blocked.set(1);
    Clock::time_point last_log;
    while (!verdicts && out_of_space(verdicts.error()) && !pipeline_stop) {
      if (Clock::now() - last_log >= std::chrono::seconds(30)) {
        last_log = Clock::now();
        log->error("store out of space, input paused, retrying every {} ms: {}",
                   kStoreRetryMillis, verdicts.error().message);
      }
      for (int waited = 0; waited < kStoreRetryMillis && !pipeline_stop; waited += 100) {
        std::this_thread::sleep_for(milliseconds(100));
      }
      if (!pipeline_stop) verdicts = index->apply(items);
    }
    {
      std::lock_guard lock(blocked_mutex);
      store_blocked.clear();
    }
    if (metrics) metrics->store_blocked.set(0);
    if (verdicts) log->info("store writable again: batch of {} applied, consuming", items.size());
    return verdicts;
  }

  void publish(const std::vector<WorkPtr>& batch, const std::vector<Verdict>& verdicts) {
    if (startup->kafka.exactly_once) {
      publish_transaction(batch, verdicts);
      return;
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!publisher.publish(batch[i], verdicts[i], &pipeline_stop)) break;
    }
  }

  void poll_loop() {
    name_this_thread("nd:deliver");
    while (!pipeline_stop) producer->poll(100);
  }

  void start_threads() {
    const unsigned threads = resolve_threads(startup->pipeline.threads);
    for (unsigned i = 0; i < threads; ++i) workers.emplace_back([this] { worker_loop(); });
    index_thread = std::jthread([this] { index_loop(); });
    poll_thread = std::jthread([this] { poll_loop(); });
  }

  void stop_threads() {
    pipeline_stop = true;
    work_cv.notify_all();
    lanes.stop();
    workers.clear();
    if (index_thread.joinable()) index_thread.join();
    // Whatever was produced gets its delivery report before the poll thread goes.
    if (producer) producer->flush(2000);
    if (poll_thread.joinable()) poll_thread.join();
  }
};

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Daemon::~Daemon() {
  if (impl_) impl_->stop_threads();
}

std::expected<std::unique_ptr<Daemon>, std::string> Daemon::create(const ops::ConfigHolder& holder,
                                                                   std::unique_ptr<Index> index,
                                                                   ops::DaemonMetrics* metrics,
                                                                   Role role) {
  auto daemon = std::unique_ptr<Daemon>(new Daemon(nullptr));
  auto impl =
      std::make_unique<Impl>(holder, std::move(index), daemon->stop_requested_, metrics, role);
  const std::shared_ptr<const Config>& config = impl->startup;
  auto fingerprint_key = resolve_property(config->kafka.fingerprint_key);
  if (!fingerprint_key) return std::unexpected("kafka.fingerprint_key: " + fingerprint_key.error());
  impl->fingerprint_key = std::move(*fingerprint_key);

  auto producer_settings = producer_properties(*config, role);
  if (!producer_settings) return std::unexpected(producer_settings.error());
  auto producer_conf = kafka::make_conf(*producer_settings);
  if (!producer_conf) return std::unexpected("kafka producer: " + producer_conf.error());
  if (auto set = kafka::set_callback(**producer_conf, "dr_cb",
                                     static_cast<RdKafka::DeliveryReportCb*>(&impl->publisher));
      !set) {
    return std::unexpected(set.error());
  }
  if (auto set = kafka::set_callback(**producer_conf, "event_cb",
                                     static_cast<RdKafka::EventCb*>(impl.get()));
      !set) {
    return std::unexpected(set.error());
  }
  auto producer = kafka::make_producer(**producer_conf);
  if (!producer) return std::unexpected(producer.error());
  impl->producer = std::move(*producer);
  impl->publisher.attach(impl->producer.get());

  // A misspelt topic must not be created by the broker nor waited for: check them all now.
  if (auto present = kafka::require_topics(*impl->producer, impl->required_topics(),
                                           config->kafka.bootstrap_servers, kTopicCheckMillis);
      !present) {
    // Unreachable brokers are an outage, not a config error: start, not ready, and check once
    // they answer. Exactly-once needs the cluster now (init_transactions).
    if (!present.error().unreachable || config->kafka.exactly_once) {
      return std::unexpected(present.error().message);
    }
    impl->log->warn("{}; starting anyway, the topics are checked once a broker answers",
                    present.error().message);
    impl->topics_unchecked = true;
    impl->last_topic_check = Clock::now();
  }
  if (!impl->topics_unchecked) {  // else the first assignment lists them (update_coverage)
    if (auto matched = check_partition_counts(*impl->producer, *config, role); !matched) {
      return std::unexpected(matched.error());
    }
    auto input_partitions =
        kafka::topic_partitions(*impl->producer, impl->consumed(), kTopicCheckMillis);
    if (!input_partitions) return std::unexpected(input_partitions.error());
    impl->input_partitions =
        std::set<std::int32_t>(input_partitions->begin(), input_partitions->end());
  }
  // Records larger than their topic accepts are shrunk before producing when the limit is
  // known; otherwise the broker's refusal decides (which a transaction cannot survive).
  if (config->kafka.exactly_once) {
    // Inside a transaction a record the broker refuses cannot be republished: records larger
    // than their topic accepts must be shrunk before producing, so the limits must be known.
    // (At least once, the broker's refusal is enough: the record is republished smaller.)
    auto limits = kafka::topic_configs(
        *impl->producer,
        role == Role::kFingerprint
            ? std::vector<std::string>{config->kafka.fingerprint_topic}
            : std::vector<std::string>{config->kafka.output_topic, config->kafka.dead_letter_topic},
        "max.message.bytes", kDescribeConfigsMillis);
    if (!limits) {
      impl->log->warn(
          "max.message.bytes of the output topics unknown ({}): a record the broker "
          "refuses as too large will stop the daemon",
          limits.error());
    }
    for (const auto& [topic, text] : limits ? *limits : std::map<std::string, std::string>{}) {
      std::uint64_t bytes = 0;
      if (std::from_chars(text.data(), text.data() + text.size(), bytes).ec != std::errc()) {
        return std::unexpected("topic " + topic + ": max.message.bytes is not a number: " + text);
      }
      impl->publisher.set_size_limit(topic, bytes);
      impl->log->info("topic={} max.message.bytes={}", topic, bytes);
    }
  }
  if (config->kafka.exactly_once) {
    if (auto initialized = kafka::check(impl->producer->init_transactions(30000)); !initialized) {
      return std::unexpected("init_transactions: " + initialized.error().message);
    }
  }

  auto consumer_settings = consumer_properties(*config, role);
  if (!consumer_settings) return std::unexpected(consumer_settings.error());
  auto consumer_conf = kafka::make_conf(*consumer_settings);
  if (!consumer_conf) return std::unexpected("kafka consumer: " + consumer_conf.error());
  for (auto set : {kafka::set_callback(**consumer_conf, "event_cb",
                                       static_cast<RdKafka::EventCb*>(impl.get())),
                   kafka::set_callback(**consumer_conf, "rebalance_cb",
                                       static_cast<RdKafka::RebalanceCb*>(impl.get())),
                   kafka::set_callback(**consumer_conf, "offset_commit_cb",
                                       static_cast<RdKafka::OffsetCommitCb*>(impl.get()))}) {
    if (!set) return std::unexpected(set.error());
  }
  auto consumer = kafka::make_consumer(**consumer_conf);
  if (!consumer) return std::unexpected(consumer.error());
  impl->consumer = std::move(*consumer);
  if (role == Role::kIndex) {
    auto worker_settings = consumer_properties(*config, Role::kFingerprint);
    if (!worker_settings) return std::unexpected(worker_settings.error());
    auto worker_conf = kafka::make_conf(*worker_settings);
    if (!worker_conf) return std::unexpected("kafka consumer: " + worker_conf.error());
    auto worker_offsets = kafka::make_consumer(**worker_conf);
    if (!worker_offsets) return std::unexpected(worker_offsets.error());
    impl->worker_offsets = std::move(*worker_offsets);
  }
  if (RdKafka::ErrorCode code = impl->consumer->subscribe({impl->consumed()}); code) {
    return std::unexpected("subscribe to " + impl->consumed() + ": " + RdKafka::err2str(code));
  }
  daemon->impl_ = std::move(impl);
  return daemon;
}

std::string Daemon::run() {
  Impl& impl = *impl_;
  const Config& config = *impl.startup;
  impl.log->info("started role={} input={} group={} produces={} scheme={} exactly_once={}",
                 role_name(impl.role), impl.consumed(), consumer_group(config, impl.role),
                 impl.role == Role::kFingerprint
                     ? config.kafka.fingerprint_topic
                     : config.kafka.output_topic + "," + config.kafka.dead_letter_topic,
                 scheme_id(config), config.kafka.exactly_once);
  impl.start_threads();
  impl.consume_loop();
  const auto stop_started = Clock::now();
  if (!impl.failed) impl.drain();
  // close() revokes the (drained) assignment through rebalance_cb and leaves the group.
  impl.consumer->close();
  if (impl.worker_offsets) impl.worker_offsets->close();
  impl.stop_threads();
  const PublishedCounts published = impl.publisher.counts();
  impl.log->info("stopped pages_in={} outputs={} dead_letters={} replayed={} stop_ms={}",
                 impl.pages_in.load(), published.outputs, published.dead_letters,
                 impl.replayed.load(),
                 std::chrono::duration_cast<milliseconds>(Clock::now() - stop_started).count());
  finished_ = true;
  std::lock_guard lock(impl.fatal_mutex);
  return impl.fatal_error;
}

Role Daemon::role() const { return impl_->role; }

namespace {
StoreError no_index() {
  return StoreError{StoreError::Code::kNotFound, 0,
                    "a fingerprint worker has no index: ask the index role"};
}
}  // namespace

IndexStats Daemon::index_stats() { return impl_->index ? impl_->index->stats() : IndexStats{}; }

StoreResult<LookupAnswer> Daemon::lookup(const ProcessedRecord& record) {
  if (!impl_->index) return std::unexpected(no_index());
  return lookup_record(*impl_->index, record);
}

StoreResult<std::optional<nlohmann::json>> Daemon::describe_page(const std::string& id,
                                                                 std::size_t max_members) {
  if (!impl_->index) return std::unexpected(no_index());
  return neardup::describe_page(*impl_->index, id, max_members);
}

std::expected<void, std::string> Daemon::health() const {
  if (stop_requested_) return {};
  const Clock::duration since =
      Clock::now().time_since_epoch() - Clock::duration(impl_->last_poll.load());
  if (since > milliseconds(kStallMillis)) {
    return std::unexpected("the consume loop has not polled Kafka for " +
                           std::to_string(std::chrono::duration_cast<milliseconds>(since).count()) +
                           " ms");
  }
  return {};
}

std::expected<void, std::string> Daemon::readiness() const {
  if (!impl_->index && impl_->role != Role::kFingerprint) {
    return std::unexpected("the index is not open");
  }
  if (impl_->brokers_down) return std::unexpected("no Kafka broker is reachable");
  {
    std::lock_guard lock(impl_->blocked_mutex);
    if (!impl_->store_blocked.empty()) {
      return std::unexpected("store out of space, input paused: " + impl_->store_blocked);
    }
  }
  if (impl_->missing_partitions > 0) {
    return std::unexpected("partial assignment, consumption paused: " + impl_->split_message());
  }
  if (impl_->assigned_count == 0) {
    return std::unexpected("no partition of " + impl_->consumed() +
                           " is assigned (joining the consumer group)");
  }
  if (stop_requested_) return std::unexpected("stopping");
  return {};
}

DaemonCounts Daemon::counts() const {
  const PublishedCounts published = impl_->publisher.counts();
  return DaemonCounts{impl_->pages_in.load(), published.outputs, published.dead_letters,
                      impl_->replayed.load()};
}

}  // namespace neardup::daemon
