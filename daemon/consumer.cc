#include "daemon/consumer.h"

#include <algorithm>
#include <thread>

#include "daemon/consumer_stats.h"
#include "kafka/admin.h"

namespace neardup::daemon {
namespace {

using std::chrono::milliseconds;

}  // namespace

InputConsumer::InputConsumer(const ops::ConfigHolder& holder, std::shared_ptr<const Config> startup,
                             Stage& stage, OffsetTracker& tracker, InFlight& in_flight,
                             ops::DaemonMetrics* metrics, const std::atomic<bool>& stop,
                             const std::atomic<bool>& failed, Hooks hooks)
    : holder_(holder),
      startup_(std::move(startup)),
      stage_(stage),
      tracker_(tracker),
      in_flight_(in_flight),
      metrics_(metrics),
      stop_(stop),
      failed_(failed),
      hooks_(std::move(hooks)),
      log_(logger("daemon")) {}

const std::string& InputConsumer::topic() const { return consumed_topic(*startup_, stage_.role()); }

void InputConsumer::attach(std::unique_ptr<RdKafka::KafkaConsumer> consumer,
                           std::set<std::int32_t> partitions, bool topics_checked) {
  thread_.assert_held();  // before the consumer thread starts
  consumer_ = std::move(consumer);
  assignment_.set_topic_partitions(std::move(partitions));
  topics_unchecked_ = !topics_checked;
  last_topic_check_ = Clock::now();
}

void InputConsumer::run() {
  ThreadRole::Scope consumer_thread(thread_);
  consume_loop();
  loop_ended_ = Clock::now().time_since_epoch().count();
  if (!failed_) drain();
  // close() revokes the (drained) assignment through rebalance_cb and leaves the group.
  consumer_->close();
}

// ---------------------------------------------------------------------------- librdkafka

void InputConsumer::event_cb(RdKafka::Event& event) {
  thread_.assert_held();  // served by the consumer's polls
  if (event.type() == RdKafka::Event::EVENT_STATS) {
    record_consumer_lag(event.str());
    if (auto up = brokers_up(event.str())) brokers_down_ = *up == 0;
    return;
  }
  if (event.type() == RdKafka::Event::EVENT_ERROR && !event.fatal() &&
      event.err() == RdKafka::ERR__ALL_BROKERS_DOWN) {
    brokers_down_ = true;
  }
  if (auto fatal = log_kafka_event(event, nullptr, *log_)) hooks_.fail(*fatal);
}

std::vector<std::string> InputConsumer::lag_labels(const PartitionId& id) const {
  return {startup_->kafka.group_id, id.first, std::to_string(id.second)};
}

// Sets neardup_consumer_lag from a statistics report, for assigned partitions only: both this
// and rebalance_cb run on the consumer thread, so a report that arrives after a revoke cannot
// bring a removed partition back.
void InputConsumer::record_consumer_lag(const std::string& json) {
  if (!metrics_) return;
  for (const auto& [id, lag] : consumer_lags(json)) {
    if (!assignment_.contains(id)) continue;
    metrics_->consumer_lag.labels(lag_labels(id)).set(static_cast<double>(lag));
  }
}

void InputConsumer::rebalance_cb(RdKafka::KafkaConsumer* kafka_consumer, RdKafka::ErrorCode err,
                                 std::vector<RdKafka::TopicPartition*>& partitions) {
  thread_.assert_held();  // served by the consumer's polls (and close())
  const bool cooperative = kafka_consumer->rebalance_protocol() == "COOPERATIVE";
  if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
    if (auto positioned = start_offsets(*kafka_consumer, partitions); !positioned) {
      hooks_.fail(positioned.error());
      return;
    }
    if (cooperative) {
      if (auto assigned_now = kafka::check(kafka_consumer->incremental_assign(partitions));
          !assigned_now) {
        hooks_.fail("incremental_assign: " + assigned_now.error().message);
        return;
      }
    } else if (RdKafka::ErrorCode code = kafka_consumer->assign(partitions); code) {
      hooks_.fail("assign: " + kafka::error_name(code) + ": " + RdKafka::err2str(code));
      return;
    }
    const std::string names = assignment_.add(partitions);
    assigned_count_ = assignment_.partitions().size();
    log_->info("assigned partitions={}", names);
    std::vector<PartitionId> ids;
    for (const auto* tp : partitions) ids.emplace_back(tp->topic(), tp->partition());
    stage_.assigned(ids);
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
    if (!stop_) wait_drained(revoked, Clock::now() + milliseconds(kDrainMillis));
    if (!startup_->kafka.exactly_once) {
      store_offsets();
      kafka::TopicPartitions commit;
      for (const auto& id : revoked) {
        if (auto offset = tracker_.committable(id)) commit.add(id.first, id.second, *offset);
      }
      if (!commit.empty()) {
        if (RdKafka::ErrorCode code = kafka_consumer->commitSync(commit.get()); code) {
          log_->warn("commit on revoke failed error={}", kafka::error_name(code));
        }
      }
    }
  }
  for (const auto& id : revoked) {
    std::size_t left = tracker_.outstanding(id);
    if (left > 0) {
      log_->warn("revoked partition={} with {} pages un-acknowledged: they will be replayed",
                 partition_key(id), left);
    }
    tracker_.forget(id);
    assignment_.remove(id);
    if (metrics_) metrics_->consumer_lag.remove(lag_labels(id));
  }
  if (cooperative) {
    if (auto unassigned = kafka::check(kafka_consumer->incremental_unassign(partitions));
        !unassigned) {
      log_->warn("incremental_unassign: {}", unassigned.error().message);
    }
  } else {
    kafka_consumer->unassign();
  }
  assigned_count_ = assignment_.partitions().size();
  log_->info("revoked partitions={} lost={}", revoked.size(), lost);
}

void InputConsumer::offset_commit_cb(RdKafka::ErrorCode err,
                                     std::vector<RdKafka::TopicPartition*>& offsets) {
  if (err != RdKafka::ERR_NO_ERROR && err != RdKafka::ERR__NO_OFFSET) {
    log_->warn("offset commit failed error={}", kafka::error_name(err));
    return;
  }
  for (auto* tp : offsets) {
    log_->debug("committed partition={}/{} offset={} error={}", tp->topic(), tp->partition(),
                tp->offset(), kafka::error_name(tp->err()));
    if (tp->err() == RdKafka::ERR_NO_ERROR && tp->offset() >= 0) {
      stage_.committed({tp->topic(), tp->partition()}, tp->offset());
    }
  }
  hooks_.committed();
}

// Sets each newly assigned partition's start to its committed offset, read here rather than by
// librdkafka. While a member that crashed inside a transaction holds offsets of the group
// (until the broker aborts it, after transaction.timeout.ms), the broker answers
// UNSTABLE_OFFSET_COMMIT for them; librdkafka 2.0 retries, but if the assignment changes
// meanwhile (a rebalance) it starts such a partition at auto.offset.reset, and every page of it
// would be processed again. consumer.committed() waits for stable offsets instead. A partition
// without a committed offset keeps OFFSET_INVALID: librdkafka then applies auto.offset.reset.
// The stage may then start a partition lower (Stage::start_offsets).
// While waiting the loop counts as polling (health()): it is waiting on Kafka, not stuck.
std::expected<void, std::string> InputConsumer::start_offsets(
    RdKafka::KafkaConsumer& kafka_consumer, std::vector<RdKafka::TopicPartition*>& partitions) {
  if (partitions.empty()) return {};
  const auto deadline = Clock::now() + milliseconds(kStartOffsetsMillis);
  bool warned = false;
  while (true) {
    for (auto* tp : partitions) tp->set_offset(RdKafka::Topic::OFFSET_INVALID);
    RdKafka::ErrorCode code = kafka_consumer.committed(partitions, kCommittedMillis);
    std::string failed;
    for (auto* tp : partitions) {
      if (code == RdKafka::ERR_NO_ERROR && tp->err() != RdKafka::ERR_NO_ERROR) {
        code = tp->err();
        failed = " partition=" + tp->topic() + "/" + std::to_string(tp->partition());
      }
    }
    if (code == RdKafka::ERR_NO_ERROR) {
      if (warned) log_->info("committed offsets read; consuming");
      std::map<PartitionId, std::int64_t> start;
      for (const auto* tp : partitions) start[{tp->topic(), tp->partition()}] = tp->offset();
      stage_.start_offsets(start);
      for (auto* tp : partitions) tp->set_offset(start.at({tp->topic(), tp->partition()}));
      return {};
    }
    last_poll_ = Clock::now().time_since_epoch().count();
    if (stop_) return {};  // nothing will be consumed: librdkafka's own start is harmless
    if (Clock::now() > deadline) {
      return std::unexpected("the committed offsets of the assigned partitions could not be read "
                             "in " + std::to_string(kStartOffsetsMillis / 1000) + " s (" +
                             kafka::error_name(code) + failed + ")");
    }
    if (!warned) {
      warned = true;
      log_->warn("waiting for committed offsets error={}{}: an open transaction (e.g. of a "
                 "member that crashed, aborted by the broker after its transaction.timeout.ms) "
                 "or an unreachable coordinator holds them",
                 kafka::error_name(code), failed);
    }
  }
}

// ---------------------------------------------------------------------------- the loop

void InputConsumer::wait_drained(const std::vector<PartitionId>& partitions,
                                 Clock::time_point deadline) {
  auto drained = [&] {
    return std::ranges::all_of(
        partitions, [&](const PartitionId& id) { return tracker_.outstanding(id) == 0; });
  };
  while (!drained() && !failed_ && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
}

void InputConsumer::store_offsets() {
  if (startup_->kafka.exactly_once) return;
  assignment_.store_offsets(*consumer_, tracker_, *log_);
}

kafka::TopicPartitions InputConsumer::assignment() {
  std::vector<RdKafka::TopicPartition*> list;
  consumer_->assignment(list);
  return kafka::TopicPartitions(std::move(list));
}

void InputConsumer::set_paused(bool want, bool force) {
  if (want == paused_ && !force) return;
  kafka::TopicPartitions changed;
  for (const auto& id : assignment_.partitions()) {
    if (want != paused_partitions_.contains(id)) changed.add(id.first, id.second, 0);
    if (want) {
      paused_partitions_.insert(id);
    } else {
      paused_partitions_.erase(id);
    }
  }
  if (!changed.empty()) {
    if (want) {
      consumer_->pause(changed.get());
    } else {
      consumer_->resume(changed.get());
    }
  }
  paused_ = want;
  paused_now_ = want;
  log_->debug("{} in_flight={} bytes={}", want ? "paused" : "resumed", in_flight_.records(),
              in_flight_.bytes());
}

std::string InputConsumer::partial_assignment() const {
  if (missing_partitions_ == 0) return "";
  return "consumer group " + startup_->kafka.group_id + " assigned this daemon " +
         std::to_string(partitions_total_ - missing_partitions_) + " of the " +
         std::to_string(partitions_total_.load()) + " partitions of " + topic() +
         ": another member joined the group, and each member has its own index, so pages "
         "would be tagged against part of the history. Consumption is paused until every "
         "partition is assigned here again. Remedy: stop the other member, or give it its own "
         "kafka.group_id and store";
}

void InputConsumer::log_partial_assignment() const {
  log_->error("partial assignment group={} topic={} missing={}: {}",
              consumer_group(*startup_, stage_.role()), topic(), missing_partitions_.load(),
              partial_assignment());
}

// After an assignment: counts the consumed topic's partitions assigned to other members
// (refreshing the partition list, so that added partitions count) and logs a change.
void InputConsumer::update_coverage(RdKafka::KafkaConsumer& kafka_consumer) {
  // A fingerprint worker shares its input by design: each record is fingerprinted alone.
  if (!stage_.owns_every_partition()) return;
  const Assignment::Coverage coverage =
      assignment_.coverage(kafka_consumer, topic(), kAssignmentCheckMillis, *log_);
  const std::size_t before = missing_partitions_.exchange(coverage.missing);
  partitions_total_ = coverage.total;
  if (metrics_) metrics_->partial_assignment.set(static_cast<double>(coverage.missing));
  if (coverage.missing > 0) {
    log_partial_assignment();
  } else if (before > 0) {
    log_->info("assignment complete again group={} topic={} partitions={}: consuming",
               consumer_group(*startup_, stage_.role()), topic(), coverage.total);
  }
}

void InputConsumer::apply_backpressure() {
  const std::uint64_t max_pages =
      std::max<std::uint32_t>(holder_.current()->pipeline.max_in_flight, 1);
  if (!backpressure_ && in_flight_.over(max_pages)) {
    backpressure_ = true;
    backpressure_since_ = Clock::now();
  } else if (backpressure_ && in_flight_.under(max_pages)) {
    backpressure_ = false;
  }
  set_paused(want_paused());
}

// Under backpressure the consume loop first only stops taking records: the fetched ones wait in
// librdkafka's bounded queue (queued.max.messages.kbytes), ready the moment outputs are
// delivered. Pausing the partitions drops that queue, and resuming waits for a new fetch (about
// 250 ms a cycle measured on Kafka 4.1: a tenth of the throughput with small pages), so they are
// paused only when backpressure lasts kPauseAfterMillis, e.g. while the output topic is
// unreachable; paused, the loop polls again and the consumer stays in its group. Also paused
// while the assignment is partial, and once a stop paused it.
bool InputConsumer::want_paused() const {
  const bool lasting =
      backpressure_ && Clock::now() - backpressure_since_ >= milliseconds(kPauseAfterMillis);
  return lasting || missing_partitions_ > 0 || (paused_ && stop_);
}

// The topic check the start could not do (see kTopicCheckMillis). `now`: do not wait for the
// next retry time (a record arrived). False when the check failed: a topic is missing (the
// daemon is stopping) or the cluster still does not answer.
bool InputConsumer::check_topics(bool now) {
  if (!topics_unchecked_) return true;
  if (!now && Clock::now() - last_topic_check_ < milliseconds(kTopicRecheckMillis)) return false;
  last_topic_check_ = Clock::now();
  if (auto present = check_cluster_for(*consumer_, stage_, startup_->kafka.bootstrap_servers);
      !present) {
    if (!present.error().unreachable) hooks_.fail(present.error().message);
    return false;
  }
  topics_unchecked_ = false;
  log_->info("topics checked {}", fmt::join(stage_.required_topics(), " "));
  return true;
}

// Consumes `message` again later (its offset is neither handled nor stored).
void InputConsumer::rewind(const RdKafka::Message& message) {
  std::unique_ptr<RdKafka::TopicPartition> partition(
      RdKafka::TopicPartition::create(message.topic_name(), message.partition(), message.offset()));
  if (RdKafka::ErrorCode code = consumer_->seek(*partition, 1000); code) {
    hooks_.fail("seek back to " + message.topic_name() + "/" + std::to_string(message.partition()) +
                " offset " + std::to_string(message.offset()) + ": " + RdKafka::err2str(code));
  }
}

void InputConsumer::consume_loop() {
  auto last_report = Clock::now();
  while (!stop_) {
    last_poll_ = Clock::now().time_since_epoch().count();
    check_topics(false);
    stage_.poll(assignment_.partitions());
    apply_backpressure();
    store_offsets();
    if (holding()) {  // see want_paused(): wait for deliveries without polling for records
      std::this_thread::sleep_for(milliseconds(1));
      continue;
    }
    std::unique_ptr<RdKafka::Message> message(consumer_->consume(100));
    switch (message->err()) {
      case RdKafka::ERR_NO_ERROR:
        // Nothing is handled (and so produced) before the topics are known to exist. A record
        // that cannot be handled yet is read again: its offset is not stored.
        if (!check_topics(true)) {
          if (!stop_) rewind(*message);
          break;
        }
        hooks_.accept(*message);
        break;
      case RdKafka::ERR__TIMED_OUT:
      case RdKafka::ERR__PARTITION_EOF:
        break;
      case RdKafka::ERR__FATAL:
        hooks_.fail("consumer fatal error: " + message->errstr());
        break;
      default:
        log_->warn("consume error={} detail={}", kafka::error_name(message->err()),
                   message->errstr());
        break;
    }
    if (Clock::now() - last_report > std::chrono::seconds(30)) {
      last_report = Clock::now();
      log_->info("progress {} in_flight={} paused={}", hooks_.progress(), in_flight_.records(),
                 paused_);
      if (missing_partitions_ > 0) log_partial_assignment();
    }
  }
}

// Stops consuming, lets in-flight pages finish (bounded), stores and commits their offsets.
void InputConsumer::drain() {
  if (!assignment_.partitions().empty()) set_paused(true, /*force=*/true);
  const auto deadline = Clock::now() + milliseconds(kDrainMillis);
  std::vector<PartitionId> all(assignment_.partitions().begin(), assignment_.partitions().end());
  wait_drained(all, deadline);
  if (std::size_t left = tracker_.outstanding_total(); left > 0) {
    log_->warn("stopping with {} pages un-acknowledged: they will be replayed", left);
  }
  if (!startup_->kafka.exactly_once) {
    store_offsets();
    RdKafka::ErrorCode code = consumer_->commitSync();
    if (code != RdKafka::ERR_NO_ERROR && code != RdKafka::ERR__NO_OFFSET) {
      log_->warn("final commit failed error={}", kafka::error_name(code));
    }
  }
}

}  // namespace neardup::daemon
