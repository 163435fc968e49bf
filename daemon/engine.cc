#include "daemon/engine.h"

#include <map>

#include "common/parallel.h"
#include "common/thread_name.h"
#include "daemon/clients.h"
#include "kafka/admin.h"

namespace neardup::daemon {
namespace {

using std::chrono::milliseconds;

}  // namespace

Engine::Engine(const ops::ConfigHolder& holder, std::unique_ptr<Stage> stage,
               ops::DaemonMetrics* metrics, std::atomic<bool>& stop)
    : holder_(holder),
      startup_(holder.current()),
      stage_(std::move(stage)),
      metrics_(metrics),
      stop_(stop),
      log_(logger("daemon")),
      in_flight_(kMaxInFlightBytes),
      publisher_(startup_->kafka, startup_->kafka.exactly_once, metrics,
                 {.delivered = [this](const Work& work) { delivered(work); },
                  .fail = [this](const std::string& message) { fail(message); }},
                 [this](const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                        bool shrunk) { return stage_->render(work, verdict, topics, shrunk); }) {}

Engine::~Engine() { stop_threads(); }

std::expected<std::unique_ptr<Engine>, StartError> Engine::create(const ops::ConfigHolder& holder,
                                                                  std::unique_ptr<Stage> stage,
                                                                  ops::DaemonMetrics* metrics,
                                                                  std::atomic<bool>& stop) {
  const Role role = stage->role();
  auto engine = std::unique_ptr<Engine>(new Engine(holder, std::move(stage), metrics, stop));
  const Config& config = *engine->startup_;
  Stage& roles = *engine->stage_;

  auto producer =
      make_daemon_producer(config, role, &engine->publisher_, static_cast<RdKafka::EventCb*>(engine.get()));
  if (!producer) return std::unexpected(producer.error());
  engine->producer_ = std::move(*producer);
  engine->publisher_.attach(engine->producer_.get());

  // A misspelt topic must not be created by the broker nor waited for: check them all now.
  bool topics_checked = true;
  if (auto present = check_cluster_for(*engine->producer_, roles, config.kafka.bootstrap_servers);
      !present) {
    // Unreachable brokers are an outage, not a config error: start, not ready, and check once
    // they answer. Exactly-once needs the cluster now (init_transactions).
    if (!present.error().unreachable || config.kafka.exactly_once) {
      return std::unexpected(StartError(present.error().message, !present.error().unreachable));
    }
    engine->log_->warn("{}; starting anyway, the topics are checked once a broker answers",
                       present.error().message);
    topics_checked = false;
  }
  std::set<std::int32_t> partitions;
  if (topics_checked) {  // else the first assignment lists them (InputConsumer)
    auto listed = kafka::topic_partitions(*engine->producer_, consumed_topic(config, role),
                                          kTopicCheckMillis);
    if (!listed) return std::unexpected(listed.error());
    partitions = std::set<std::int32_t>(listed->begin(), listed->end());
  }
  if (config.kafka.exactly_once) {
    // Inside a transaction a record the broker refuses cannot be republished: records larger
    // than their topic accepts must be shrunk before producing, so the limits must be known.
    // (At least once, the broker's refusal is enough: the record is republished smaller.)
    std::vector<std::string> produced;
    for (const std::string& topic : roles.required_topics()) {
      if (topic != consumed_topic(config, role)) produced.push_back(topic);
    }
    auto limits = max_message_bytes(*engine->producer_, produced);
    if (!limits) {
      engine->log_->warn(
          "max.message.bytes of the output topics unknown ({}): a record the broker refuses as "
          "too large will stop the daemon",
          limits.error());
    }
    for (const auto& [topic, bytes] : limits ? *limits : std::map<std::string, std::uint64_t>{}) {
      engine->publisher_.set_size_limit(topic, bytes);
      engine->log_->info("topic={} max.message.bytes={}", topic, bytes);
    }
    if (auto initialized = kafka::check(engine->producer_->init_transactions(30000));
        !initialized) {
      return std::unexpected("init_transactions: " + initialized.error().message);
    }
  }

  Engine* self = engine.get();
  engine->input_ = std::make_unique<InputConsumer>(
      holder, engine->startup_, roles, engine->tracker_, engine->in_flight_, metrics, stop,
      engine->failed_,
      InputConsumer::Hooks{.accept = [self](RdKafka::Message& message) { self->accept(message); },
                           .fail = [self](const std::string& message) { self->fail(message); },
                           .committed = [self] { self->lanes_.wake(); },
                           .progress = [self] { return self->progress(); }});
  InputConsumer* input = engine->input_.get();
  auto consumer = make_daemon_consumer(config, role, input, input, input);
  if (!consumer) return std::unexpected(consumer.error());
  input->attach(std::move(*consumer), std::move(partitions), topics_checked);
  if (auto attached = roles.attach(input->consumer()); !attached) {
    return std::unexpected(attached.error());
  }
  const std::string& topic = consumed_topic(config, role);
  if (RdKafka::ErrorCode code = input->consumer().subscribe({topic}); code) {
    return std::unexpected("subscribe to " + topic + ": " + RdKafka::err2str(code));
  }
  return engine;
}

std::expected<void, std::string> Engine::run() {
  start_threads();
  input_->run();
  stop_threads();
  stop_duration_ = std::chrono::duration_cast<milliseconds>(Clock::now() - input_->loop_ended());
  MutexLock lock(fatal_mutex_);
  if (!fatal_error_.empty()) return std::unexpected(fatal_error_);
  return {};
}

EngineCounts Engine::counts() const {
  const PublishedCounts published = publisher_.counts();
  return {pages_in_.load(), published.outputs, published.dead_letters};
}

std::string Engine::progress() const {
  const EngineCounts c = counts();
  return "pages_in=" + std::to_string(c.pages_in) + " outputs=" + std::to_string(c.outputs) +
         " dead_letters=" + std::to_string(c.dead_letters) +
         " replayed=" + std::to_string(stage_->replayed());
}

std::expected<void, std::string> Engine::health() const {
  if (stop_) return {};
  const Clock::duration since = Clock::now() - input_->last_poll();
  if (since > milliseconds(kStallMillis)) {
    return std::unexpected("the consume loop has not polled Kafka for " +
                           std::to_string(std::chrono::duration_cast<milliseconds>(since).count()) +
                           " ms");
  }
  return {};
}

std::expected<void, std::string> Engine::readiness() const {
  if (input_->brokers_down()) return std::unexpected("no Kafka broker is reachable");
  if (auto role_ready = stage_->readiness(); !role_ready) return role_ready;
  if (std::string partial = input_->partial_assignment(); !partial.empty()) {
    return std::unexpected("partial assignment, consumption paused: " + partial);
  }
  if (input_->assigned_count() == 0) {
    return std::unexpected("no partition of " + consumed_topic(*startup_, stage_->role()) +
                           " is assigned (joining the consumer group)");
  }
  if (stop_) return std::unexpected("stopping");
  return {};
}

void Engine::event_cb(RdKafka::Event& event) {
  if (event.type() == RdKafka::Event::EVENT_ERROR && !event.fatal() &&
      event.err() == RdKafka::ERR__ALL_BROKERS_DOWN && input_) {
    input_->note_brokers_down();
  }
  if (auto fatal = log_kafka_event(event, producer_.get(), *log_)) fail(*fatal);
}

void Engine::fail(const std::string& message) {
  {
    MutexLock lock(fatal_mutex_);
    if (!fatal_error_.empty()) return;
    fatal_error_ = message;
  }
  log_->error("fatal error={}", message);
  failed_ = true;
  stop_ = true;
}

void Engine::accept(RdKafka::Message& message) {
  auto work = std::make_shared<Work>(ConsumedRecord{
      .partition = {message.topic_name(), message.partition()},
      .offset = message.offset(),
      .timestamp_ms = message.timestamp().timestamp,
      .key = message.key() ? std::optional<std::string>(*message.key()) : std::nullopt,
      .headers = kafka::message_headers(message),
      .value = std::string(static_cast<const char*>(message.payload()), message.len())});
  tracker_.consumed(work->input.partition, work->input.offset);
  in_flight_.add(work->input.value.size());
  pages_in_ += 1;
  if (metrics_) metrics_->pages_in.inc();
  lanes_.append(work);
  {
    MutexLock lock(work_mutex_);
    work_queue_.push_back(std::move(work));
  }
  work_cv_.notify_one();
}

void Engine::delivered(const Work& work) {
  // Under exactly_once a record is acknowledged when its transaction commits.
  if (!startup_->kafka.exactly_once) acknowledge(work);
}

void Engine::acknowledge(const Work& work) {
  tracker_.delivered(work.input.partition, work.input.offset);
  in_flight_.remove(work.input.value.size());
}

// ------------------------------------------------------------------------------ threads

void Engine::start_threads() {
  const unsigned threads = resolve_threads(startup_->pipeline.threads);
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  ordered_thread_ = std::jthread([this] { ordered_loop(); });
  poll_thread_ = std::jthread([this] { poll_loop(); });
}

void Engine::stop_threads() {
  pipeline_stop_ = true;
  {
    MutexLock lock(work_mutex_);  // a worker between its check and its wait sees the stop
  }
  work_cv_.notify_all();
  lanes_.stop();
  workers_.clear();
  if (ordered_thread_.joinable()) ordered_thread_.join();
  // Whatever was produced gets its delivery report before the poll thread goes.
  if (producer_) producer_->flush(2000);
  if (poll_thread_.joinable()) poll_thread_.join();
}

void Engine::worker_loop() {
  name_this_thread("nd:work");
  // The snapshot and scheme id of the previous record: scheme_id() runs once per reload.
  std::shared_ptr<const Config> config;
  std::string scheme;
  while (true) {
    WorkPtr work;
    {
      MutexLock lock(work_mutex_);
      while (!pipeline_stop_ && work_queue_.empty()) work_cv_.wait(work_mutex_);
      if (pipeline_stop_) return;
      work = std::move(work_queue_.front());
      work_queue_.pop_front();
    }
    if (auto current = holder_.current(); current != config) {
      config = std::move(current);
      scheme = scheme_id(*config);
    }
    stage_->prepare(*work, config, scheme);
    lanes_.mark_ready(*work);
  }
}

void Engine::ordered_loop() {
  name_this_thread("nd:index");
  while (!pipeline_stop_) {
    const std::shared_ptr<const Config> config = holder_.current();  // once per batch
    std::vector<WorkPtr> batch = lanes_.take(config->pipeline.batch_size, milliseconds(100),
                                             milliseconds(config->pipeline.batch_delay_ms));
    stage_->between_batches();
    if (batch.empty() || failed_) continue;
    auto verdicts = stage_->decide(batch, *config, pipeline_stop_);
    if (!verdicts) {
      // A stop while waiting (for space in the store) leaves the batch to be replayed.
      if (!pipeline_stop_) fail(verdicts.error());
      continue;
    }
    publish(batch, *verdicts);
  }
}

void Engine::poll_loop() {
  name_this_thread("nd:deliver");
  while (!pipeline_stop_) producer_->poll(100);
}

void Engine::publish(const std::vector<WorkPtr>& batch, const std::vector<Verdict>& verdicts) {
  if (startup_->kafka.exactly_once) {
    publish_transaction(batch, verdicts);
    return;
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!publisher_.publish(batch[i], verdicts[i], &pipeline_stop_)) break;
    if (!publish_companions(*batch[i], verdicts[i])) break;
  }
}

bool Engine::publish_companions(const Work& work, const Verdict& verdict) {
  for (const Outgoing& out : stage_->companions(work, verdict)) {
    RdKafka::ErrorCode code = kafka::produce(*producer_, out.record(), nullptr, &pipeline_stop_);
    if (code != RdKafka::ERR_NO_ERROR) {
      fail("produce to " + out.topic + " failed source=" + source_position(work.source()) +
           " error=" + kafka::error_name(code));
      return false;
    }
  }
  return true;
}

// Under exactly_once: one transaction holds a batch's outputs and its input offsets.
bool Engine::publish_transaction(const std::vector<WorkPtr>& batch,
                                 const std::vector<Verdict>& verdicts) {
  if (auto begun = kafka::check(producer_->begin_transaction()); !begun) {
    fail("begin_transaction: " + begun.error().message);
    return false;
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!publisher_.publish(batch[i], verdicts[i], &pipeline_stop_)) return false;
    if (!publish_companions(*batch[i], verdicts[i])) return false;
  }
  std::map<PartitionId, std::int64_t> next;
  for (const WorkPtr& work : batch) next[work->input.partition] = work->input.offset + 1;
  stage_->bound_commits(next);
  kafka::TopicPartitions offsets;
  for (const auto& [id, offset] : next) offsets.add(id.first, id.second, offset);
  std::unique_ptr<RdKafka::ConsumerGroupMetadata> group(input_->consumer().groupMetadata());
  auto committed =
      kafka::check(producer_->send_offsets_to_transaction(offsets.get(), group.get(), -1));
  if (committed) committed = kafka::check(producer_->commit_transaction(-1));
  if (!committed) {
    // The store already holds these verdicts: after a restart the same outputs are
    // republished from the committed offsets.
    if (committed.error().txn_requires_abort) {
      if (auto aborted = kafka::check(producer_->abort_transaction(-1)); !aborted) {
        log_->warn("abort_transaction: {}", aborted.error().message);
      }
    }
    fail("transaction failed: " + committed.error().message);
    return false;
  }
  for (const WorkPtr& work : batch) acknowledge(*work);
  for (const auto& [id, offset] : next) stage_->committed(id, offset);
  return true;
}

}  // namespace neardup::daemon
