#include "daemon/daemon.h"

#include <algorithm>
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
#include "daemon/consumer_stats.h"
#include "daemon/offset_tracker.h"
#include "message/record.h"
#include "message/tag.h"
#include "pipeline/pipeline.h"

namespace neardup::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The producer's local limit; the broker (message.max.bytes / max.message.bytes) has the last
// word, and a record it refuses as too large is republished without its body.
constexpr const char* kProducerMessageMaxBytes = "1000000000";

// One consumed record on its way through the pipeline.
struct Work {
  PartitionId partition;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = 0;
  std::optional<std::string> key;
  kafka::Headers headers;
  std::string value;

  // Filled by a pipeline worker. The running config when the worker took the page and its
  // scheme: the page's stages, index request and output all use this one snapshot.
  std::shared_ptr<const Config> config;
  std::string scheme;
  std::expected<Page, RecordError> page = std::unexpected(RecordError{});
  PageFingerprint result;
  bool ready = false;  // guarded by the sequencer's mutex

  // Filled by the index thread.
  Verdict verdict;
  bool shrunk = false;  // republished without its body after the broker refused its size
  // When produce() took the output: the produce stage lasts until its delivery report.
  Clock::time_point produced_at;
};
using WorkPtr = std::shared_ptr<Work>;

bool is_own_header(const std::string& name) { return name.starts_with("neardup-"); }

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

kafka::Properties consumer_properties(const Config& config) {
  kafka::Properties properties = {
      {"bootstrap.servers", config.kafka.bootstrap_servers},
      {"group.id", config.kafka.group_id},
      // A new group starts at the oldest page: a crawl pipeline must not skip what it missed.
      {"auto.offset.reset", "earliest"},
      // Offsets are stored by the daemon once outputs are delivered (DESIGN.md §6).
      {"enable.auto.offset.store", "false"},
      {"enable.auto.commit", config.kafka.exactly_once ? "false" : "true"},
      {"auto.commit.interval.ms", "1000"},
      // Bound the prefetch queue per partition: memory stays bounded while paused.
      {"queued.max.messages.kbytes", "16384"},
      {"isolation.level", "read_committed"},
      // Per-partition consumer_lag for neardup_consumer_lag (event_cb, EVENT_STATS).
      {"statistics.interval.ms", std::to_string(kStatisticsMillis)},
  };
  for (const auto& property : config.kafka.properties) properties.push_back(property);
  return properties;
}

kafka::Properties producer_properties(const Config& config) {
  kafka::Properties properties = {
      {"bootstrap.servers", config.kafka.bootstrap_servers},
      {"enable.idempotence", "true"},
      {"message.max.bytes", kProducerMessageMaxBytes},
      // In-flight pages are bounded before the producer; its queue holds at most those.
      {"queue.buffering.max.messages",
       std::to_string(std::max<std::uint32_t>(config.pipeline.max_in_flight, 1) * 2 + 1024)},
      {"queue.buffering.max.kbytes", std::to_string(2 * (kMaxInFlightBytes >> 10))},
      {"linger.ms", "5"},
  };
  if (config.kafka.exactly_once) {
    properties.emplace_back("transactional.id", "neardupd-" + config.kafka.group_id);
  }
  for (const auto& property : config.kafka.properties) properties.push_back(property);
  return properties;
}

struct Daemon::Impl : public RdKafka::DeliveryReportCb,
                      public RdKafka::EventCb,
                      public RdKafka::RebalanceCb,
                      public RdKafka::OffsetCommitCb {
  Impl(const ops::ConfigHolder& holder_in, std::unique_ptr<Index> index_in,
       std::atomic<bool>& stop_requested_in, ops::DaemonMetrics* metrics_in)
      : holder(holder_in),
        startup(holder.current()),
        index(std::move(index_in)),
        metrics(metrics_in),
        stop_requested(stop_requested_in),
        log(logger("daemon")) {}

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
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::unique_ptr<RdKafka::Producer> producer;

  // --- delivery state ---
  OffsetTracker tracker;
  std::map<PartitionId, std::int64_t> stored;  // consumer thread only
  std::set<PartitionId> assigned;              // consumer thread only
  bool paused = false;                         // consumer thread only
  std::atomic<std::uint64_t> in_flight{0}, in_flight_bytes{0};
  std::atomic<std::uint64_t> pages_in{0}, outputs{0}, dead_letters{0}, replayed{0};
  // Clock::time_point of the consume loop's last poll, as ticks (health()).
  std::atomic<Clock::rep> last_poll{Clock::now().time_since_epoch().count()};

  std::mutex fatal_mutex;
  std::string fatal_error;
  std::atomic<bool> failed{false};

  // --- pipeline workers ---
  std::mutex work_mutex;
  std::condition_variable work_cv;
  std::deque<WorkPtr> work_queue;
  std::vector<std::jthread> workers;

  // --- sequencer: per-partition lanes in offset order, read by the index thread ---
  std::mutex lane_mutex;
  std::condition_variable lane_cv;
  std::map<PartitionId, std::deque<WorkPtr>> lanes;
  std::vector<std::pair<std::string, std::int64_t>> trims;  // committed offsets to trim
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
          log->warn("kafka error={} detail={}", kafka::error_name(event.err()), event.str());
        }
        break;
      case RdKafka::Event::EVENT_STATS:
        record_consumer_lag(event.str());
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

  // Sets neardup_consumer_lag{partition} from a statistics report, for assigned partitions
  // only: both this and rebalance_cb run on the consumer thread, so a report that arrives after
  // a revoke cannot bring a removed partition back.
  void record_consumer_lag(const std::string& json) {
    if (!metrics) return;
    for (const auto& [id, lag] : consumer_lags(json)) {
      if (!assigned.contains(id)) continue;
      metrics->consumer_lag.labels({partition_key(id)}).set(static_cast<double>(lag));
    }
  }

  // Delivery reports, served by poll_thread.
  void dr_cb(RdKafka::Message& message) override {
    std::unique_ptr<WorkPtr> opaque(static_cast<WorkPtr*>(message.msg_opaque()));
    if (!opaque) return;
    const WorkPtr& work = *opaque;
    if (message.err() == RdKafka::ERR_MSG_SIZE_TOO_LARGE && !work->shrunk) {
      log->warn("record too large for topic={} source={}/{}/{}: republished without its body",
                message.topic_name(), work->partition.first, work->partition.second, work->offset);
      work->shrunk = true;
      publish(work);
      return;
    }
    if (message.err() != RdKafka::ERR_NO_ERROR) {
      // librdkafka has retried until message.timeout.ms: the output is lost, so the offset must
      // never be stored. Stop; a restart replays it with its stored verdict.
      fail("delivery failed topic=" + message.topic_name() +
           " source=" + partition_key(work->partition) + "/" + std::to_string(work->offset) +
           " error=" + kafka::error_name(message.err()) + ": " + message.errstr());
      return;
    }
    if (metrics)
      metrics->stage(ops::Stage::kProduce).observe(seconds(Clock::now() - work->produced_at));
    if (!startup->kafka.exactly_once) acknowledge(*work);
  }

  void acknowledge(const Work& work) {
    tracker.delivered(work.partition, work.offset);
    in_flight_bytes -= work.value.size();
    in_flight -= 1;
  }

  void rebalance_cb(RdKafka::KafkaConsumer* kafka_consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    const bool cooperative = kafka_consumer->rebalance_protocol() == "COOPERATIVE";
    if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
      RdKafka::Error* error = nullptr;
      RdKafka::ErrorCode code = RdKafka::ERR_NO_ERROR;
      if (cooperative) {
        error = kafka_consumer->incremental_assign(partitions);
      } else {
        code = kafka_consumer->assign(partitions);
      }
      if (error) {
        fail("incremental_assign: " + error->str());
        delete error;
        return;
      }
      if (code != RdKafka::ERR_NO_ERROR) {
        fail("assign: " + RdKafka::err2str(code));
        return;
      }
      std::string names;
      for (auto* tp : partitions) {
        assigned.insert({tp->topic(), tp->partition()});
        names += " " + tp->topic() + "/" + std::to_string(tp->partition());
      }
      log->info("assigned partitions={}", names);
      // librdkafka keeps a partition's pause state across a lost/re-assigned cycle; set it
      // explicitly so that it matches the daemon's backpressure state.
      if (paused) {
        kafka_consumer->pause(partitions);
      } else {
        kafka_consumer->resume(partitions);
      }
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
      if (metrics) metrics->consumer_lag.remove({partition_key(id)});
    }
    if (cooperative) {
      if (RdKafka::Error* error = kafka_consumer->incremental_unassign(partitions)) {
        log->warn("incremental_unassign: {}", error->str());
        delete error;
      }
    } else {
      kafka_consumer->unassign();
    }
    log->info("revoked partitions={} lost={}", revoked.size(), lost);
  }

  void offset_commit_cb(RdKafka::ErrorCode err,
                        std::vector<RdKafka::TopicPartition*>& offsets) override {
    if (err != RdKafka::ERR_NO_ERROR && err != RdKafka::ERR__NO_OFFSET) {
      log->warn("offset commit failed error={}", kafka::error_name(err));
      return;
    }
    std::lock_guard lock(lane_mutex);
    for (auto* tp : offsets) {
      log->debug("committed partition={}/{} offset={} error={}", tp->topic(), tp->partition(),
                 tp->offset(), kafka::error_name(tp->err()));
      if (tp->err() == RdKafka::ERR_NO_ERROR && tp->offset() >= 0) {
        trims.emplace_back(partition_key({tp->topic(), tp->partition()}), tp->offset());
      }
    }
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

  void apply_backpressure() {
    const std::uint64_t max_pages =
        std::max<std::uint32_t>(holder.current()->pipeline.max_in_flight, 1);
    const bool over = in_flight >= max_pages || in_flight_bytes >= kMaxInFlightBytes;
    const bool under =
        in_flight <= max_pages * 3 / 4 && in_flight_bytes <= kMaxInFlightBytes * 3 / 4;
    if (!paused && over) {
      auto partitions = assignment();
      consumer->pause(partitions.get());
      paused = true;
      log->debug("paused in_flight={} bytes={}", in_flight.load(), in_flight_bytes.load());
    } else if (paused && under && !stop_requested) {
      auto partitions = assignment();
      consumer->resume(partitions.get());
      paused = false;
      log->debug("resumed in_flight={}", in_flight.load());
    }
  }

  void accept(RdKafka::Message& message) {
    auto work = std::make_shared<Work>();
    work->partition = {message.topic_name(), message.partition()};
    work->offset = message.offset();
    work->timestamp_ms = message.timestamp().timestamp;
    if (message.key()) work->key = *message.key();
    work->headers = kafka::message_headers(message);
    work->value.assign(static_cast<const char*>(message.payload()), message.len());
    tracker.consumed(work->partition, work->offset);
    in_flight += 1;
    in_flight_bytes += work->value.size();
    pages_in += 1;
    if (metrics) metrics->pages_in.inc();
    {
      std::lock_guard lock(lane_mutex);
      lanes[work->partition].push_back(work);
    }
    {
      std::lock_guard lock(work_mutex);
      work_queue.push_back(std::move(work));
    }
    work_cv.notify_one();
  }

  void consume_loop() {
    auto last_report = Clock::now();
    while (!stop_requested) {
      last_poll = Clock::now().time_since_epoch().count();
      apply_backpressure();
      store_offsets();
      std::unique_ptr<RdKafka::Message> message(consumer->consume(100));
      switch (message->err()) {
        case RdKafka::ERR_NO_ERROR:
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
        log->info(
            "progress pages_in={} outputs={} dead_letters={} replayed={} in_flight={} "
            "paused={}",
            pages_in.load(), outputs.load(), dead_letters.load(), replayed.load(), in_flight.load(),
            paused);
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
      work->config = config;
      work->scheme = scheme;
      work->page = parse_page(work->value, config->input);
      if (work->page) {
        StageTimes times;
        work->result = fingerprint_page(work->page->body, work->page->content_type, *config,
                                        {.times = metrics ? &times : nullptr});
        if (metrics) observe_stages(*metrics, times);
      }
      {
        std::lock_guard lock(lane_mutex);
        work->ready = true;
      }
      lane_cv.notify_one();
    }
  }

  // ---------------------------------------------------------------- index thread

  // Ready pages at the heads of the lanes, at most `limit`. Caller holds lane_mutex.
  std::size_t ready_count(std::size_t limit) const {
    std::size_t count = 0;
    for (const auto& [id, lane] : lanes) {
      for (const WorkPtr& work : lane) {
        if (!work->ready || count >= limit) break;
        ++count;
      }
    }
    return count;
  }

  std::vector<WorkPtr> next_batch(std::vector<std::pair<std::string, std::int64_t>>& trims_out) {
    const std::shared_ptr<const Config> config = holder.current();  // once per batch
    const std::size_t batch_size = std::max<std::uint32_t>(config->pipeline.batch_size, 1);
    std::unique_lock lock(lane_mutex);
    lane_cv.wait_for(lock, milliseconds(100),
                     [&] { return pipeline_stop || !trims.empty() || ready_count(1) > 0; });
    if (!pipeline_stop && ready_count(batch_size) > 0 && ready_count(batch_size) < batch_size) {
      lane_cv.wait_for(lock, milliseconds(config->pipeline.batch_delay_ms),
                       [&] { return pipeline_stop || ready_count(batch_size) >= batch_size; });
    }
    trims_out.swap(trims);
    std::vector<WorkPtr> batch;
    for (auto& [id, lane] : lanes) {
      while (!lane.empty() && lane.front()->ready && batch.size() < batch_size) {
        batch.push_back(std::move(lane.front()));
        lane.pop_front();
      }
    }
    std::erase_if(lanes, [](const auto& entry) { return entry.second.empty(); });
    return batch;
  }

  IndexItem index_item(const Work& work) const {
    IndexItem item;
    item.source = SourceOffset{partition_key(work.partition), work.offset};
    if (!work.page) {
      item.decided =
          Verdict{.status = Verdict::Status::kDeadLetter, .reason = work.page.error().code};
    } else if (work.result.skip) {
      item.decided =
          Verdict{.status = Verdict::Status::kSkipped, .reason = work.result.skip->reason};
    } else {
      item.page =
          index_request(*work.page, work.result, work.scheme, *work.config);
      // First-seen time without fetched_at: the record's timestamp, the same on every replay.
      if (!work.page->fetched_at_ms && work.timestamp_ms > 0)
        item.page->seen_at_ms = work.timestamp_ms;
    }
    return item;
  }

  // Produces the page's output or dead letter. The delivery report acknowledges it.
  void publish(const WorkPtr& work) {
    kafka::OutgoingRecord record;
    record.key = work->key ? &*work->key : nullptr;
    for (const auto& header : work->headers) {
      if (!is_own_header(header.first)) record.headers.push_back(header);
    }
    std::string value;
    const bool dead = !work->page || work->verdict.status == Verdict::Status::kDeadLetter;
    if (dead) {
      record.topic = startup->kafka.dead_letter_topic;
      std::string code = work->page ? work->verdict.reason : work->page.error().code;
      std::string detail =
          work->page ? "verdict stored for this offset" : work->page.error().detail;
      if (work->shrunk) detail += " (value dropped: larger than the topic accepts)";
      record.headers.emplace_back("neardup-error", code);
      record.headers.emplace_back("neardup-error-detail", detail);
      record.headers.emplace_back(
          "neardup-source", partition_key(work->partition) + "/" + std::to_string(work->offset));
      record.value = work->shrunk ? std::string_view() : std::string_view(work->value);
      dead_letters += 1;
      if (metrics) metrics->dead_letters.labels({code}).inc();
    } else {
      Tag tag = make_tag(work->result, work->verdict, work->scheme);
      OutputConfig output = work->config->output;
      if (work->shrunk) output.include_body = false;
      value = render_output(*work->page, tag, output, work->config->input.fields);
      record.topic = startup->kafka.output_topic;
      record.headers.emplace_back("neardup-status", tag.status);
      if (tag.status == "duplicate")
        record.headers.emplace_back("neardup-duplicate-of", tag.duplicate_of);
      record.headers.emplace_back("neardup-scheme", tag.scheme);
      record.value = value;
      outputs += 1;
      if (metrics) metrics->pages_out_for(tag.status).inc();
    }
    auto* opaque = new WorkPtr(work);
    work->produced_at = Clock::now();
    RdKafka::ErrorCode code = kafka::produce(*producer, record, opaque, &pipeline_stop);
    if (code == RdKafka::ERR_MSG_SIZE_TOO_LARGE && !work->shrunk) {
      delete opaque;
      work->shrunk = true;
      publish(work);
      return;
    }
    if (code != RdKafka::ERR_NO_ERROR) {
      delete opaque;
      fail("produce to " + std::string(record.topic) + " failed: " + kafka::error_name(code));
    }
  }

  bool publish_transaction(const std::vector<WorkPtr>& batch) {
    if (RdKafka::Error* error = producer->begin_transaction()) {
      fail("begin_transaction: " + error->str());
      delete error;
      return false;
    }
    for (const WorkPtr& work : batch) publish(work);
    std::map<PartitionId, std::int64_t> next;
    for (const WorkPtr& work : batch) next[work->partition] = work->offset + 1;
    kafka::TopicPartitions offsets;
    for (const auto& [id, offset] : next) offsets.add(id.first, id.second, offset);
    std::unique_ptr<RdKafka::ConsumerGroupMetadata> group(consumer->groupMetadata());
    RdKafka::Error* error = producer->send_offsets_to_transaction(offsets.get(), group.get(), -1);
    if (!error) error = producer->commit_transaction(-1);
    if (error) {
      // The index already holds these verdicts: after a restart the same outputs are
      // republished from the committed offsets.
      std::string message = error->str();
      bool abort = error->txn_requires_abort();
      delete error;
      if (abort) {
        if (RdKafka::Error* abort_error = producer->abort_transaction(-1)) delete abort_error;
      }
      fail("transaction failed: " + message);
      return false;
    }
    for (const WorkPtr& work : batch) acknowledge(*work);
    for (const auto& [id, offset] : next) {
      if (auto trimmed = index->trim_pending(partition_key(id), offset); !trimmed) {
        log->warn("trim_pending partition={} error={}", partition_key(id), trimmed.error().message);
      }
    }
    return true;
  }

  void index_loop() {
    std::vector<std::pair<std::string, std::int64_t>> pending_trims;
    while (!pipeline_stop) {
      std::vector<WorkPtr> batch = next_batch(pending_trims);
      for (const auto& [partition, offset] : pending_trims) {
        if (auto trimmed = index->trim_pending(partition, offset); !trimmed) {
          log->warn("trim_pending partition={} error={}", partition, trimmed.error().message);
        }
      }
      pending_trims.clear();
      if (batch.empty() || failed) continue;
      std::vector<IndexItem> items;
      items.reserve(batch.size());
      for (const WorkPtr& work : batch) items.push_back(index_item(*work));
      const auto apply_start = Clock::now();
      auto verdicts = index->apply(items);
      if (metrics) metrics->stage(ops::Stage::kIndex).observe(seconds(Clock::now() - apply_start));
      if (!verdicts) {
        fail("index: " + verdicts.error().message);
        continue;
      }
      for (std::size_t i = 0; i < batch.size(); ++i) {
        batch[i]->verdict = std::move((*verdicts)[i]);
        if (batch[i]->verdict.replayed) replayed += 1;
        if (metrics && items[i].page && !batch[i]->verdict.replayed) {
          metrics->probe_candidates.observe(batch[i]->verdict.candidates);
        }
      }
      if (startup->kafka.exactly_once) {
        publish_transaction(batch);
      } else {
        for (const WorkPtr& work : batch) publish(work);
      }
    }
  }

  void poll_loop() {
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
    lane_cv.notify_all();
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
                                                                   ops::DaemonMetrics* metrics) {
  auto daemon = std::unique_ptr<Daemon>(new Daemon(nullptr));
  auto impl = std::make_unique<Impl>(holder, std::move(index), daemon->stop_requested_, metrics);
  const std::shared_ptr<const Config>& config = impl->startup;

  auto producer_conf = kafka::make_conf(producer_properties(*config));
  if (!producer_conf) return std::unexpected("kafka producer: " + producer_conf.error());
  if (auto set = kafka::set_callback(**producer_conf, "dr_cb",
                                     static_cast<RdKafka::DeliveryReportCb*>(impl.get()));
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
  if (config->kafka.exactly_once) {
    if (RdKafka::Error* error = impl->producer->init_transactions(30000)) {
      std::string message = "init_transactions: " + error->str();
      delete error;
      return std::unexpected(message);
    }
  }

  auto consumer_conf = kafka::make_conf(consumer_properties(*config));
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
  if (RdKafka::ErrorCode code = impl->consumer->subscribe({config->kafka.input_topic}); code) {
    return std::unexpected("subscribe to " + config->kafka.input_topic + ": " +
                           RdKafka::err2str(code));
  }
  daemon->impl_ = std::move(impl);
  return daemon;
}

std::string Daemon::run() {
  Impl& impl = *impl_;
  const Config& config = *impl.startup;
  impl.log->info("started input={} output={} dead_letter={} group={} scheme={} exactly_once={}",
                 config.kafka.input_topic, config.kafka.output_topic,
                 config.kafka.dead_letter_topic, config.kafka.group_id, scheme_id(config),
                 config.kafka.exactly_once);
  impl.start_threads();
  impl.consume_loop();
  const auto stop_started = Clock::now();
  if (!impl.failed) impl.drain();
  // close() revokes the (drained) assignment through rebalance_cb and leaves the group.
  impl.consumer->close();
  impl.stop_threads();
  impl.log->info("stopped pages_in={} outputs={} dead_letters={} replayed={} stop_ms={}",
                 impl.pages_in.load(), impl.outputs.load(), impl.dead_letters.load(),
                 impl.replayed.load(),
                 std::chrono::duration_cast<milliseconds>(Clock::now() - stop_started).count());
  finished_ = true;
  std::lock_guard lock(impl.fatal_mutex);
  return impl.fatal_error;
}

IndexStats Daemon::index_stats() { return impl_->index->stats(); }

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

DaemonCounts Daemon::counts() const {
  return DaemonCounts{impl_->pages_in.load(), impl_->outputs.load(), impl_->dead_letters.load(),
                      impl_->replayed.load()};
}

}  // namespace neardup::daemon
