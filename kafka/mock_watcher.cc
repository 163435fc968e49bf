#include "kafka/mock_watcher.h"

#include <chrono>
#include <set>
#include <vector>

#include "kafka/client.h"

namespace neardup::kafka {

struct MockWatcher::Impl {
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::map<std::pair<std::string, std::int32_t>, std::uint64_t> bytes;
  std::set<std::string> refused;
};

MockWatcher::MockWatcher(MockCluster& cluster, std::function<void(const WatchEvent&)> report)
    : cluster_(cluster), report_(std::move(report)) {}

std::expected<std::unique_ptr<MockWatcher>, std::string> MockWatcher::start(
    MockCluster& cluster, const std::vector<std::string>& topics,
    std::function<void(const WatchEvent&)> report) {
  auto conf = make_conf({
      {"bootstrap.servers", cluster.bootstrap_servers()},
      // Required by the consumer API; the watcher never joins the group (assign only).
      {"group.id", "neardup-broker-watch"},
      {"enable.auto.commit", "false"},
      {"auto.offset.reset", "earliest"},
      {"allow.auto.create.topics", "false"},
      {"queued.max.messages.kbytes", "1024"},
      {"fetch.wait.max.ms", "100"},
      {"log_level", "3"},
  });
  if (!conf) return std::unexpected("broker watcher: " + conf.error());
  auto consumer = make_consumer(**conf);
  if (!consumer) return std::unexpected("broker watcher: " + consumer.error());
  std::unique_ptr<MockWatcher> watcher(new MockWatcher(cluster, std::move(report)));
  watcher->impl_ = std::make_unique<Impl>();
  watcher->impl_->consumer = std::move(*consumer);
  for (const auto& topic : topics) watcher->add_topic(topic);
  watcher->thread_ = std::thread([raw = watcher.get()] { raw->run(); });
  return watcher;
}

MockWatcher::~MockWatcher() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (impl_ && impl_->consumer) impl_->consumer->close();
}

void MockWatcher::add_topic(const std::string& name) {
  MutexLock lock(mutex_);
  known_.try_emplace(name, false);
}

void MockWatcher::run() {
  using Clock = std::chrono::steady_clock;
  RdKafka::KafkaConsumer& consumer = *impl_->consumer;
  auto next_listing = Clock::now();
  while (!stop_) {
    if (Clock::now() >= next_listing) {
      next_listing = Clock::now() + std::chrono::milliseconds(kTopicPollMillis);
      RdKafka::Metadata* raw = nullptr;
      if (consumer.metadata(true, nullptr, &raw, 1000) == RdKafka::ERR_NO_ERROR) {
        std::unique_ptr<RdKafka::Metadata> metadata(raw);
        TopicPartitions newly_known;
        MutexLock lock(mutex_);
        for (const RdKafka::TopicMetadata* topic : *metadata->topics()) {
          auto known = known_.find(topic->topic());
          if (known == known_.end()) {
            if (impl_->refused.insert(topic->topic()).second) {
              cluster_.set_topic_error(topic->topic(), RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
              report_({.kind = WatchEvent::Kind::kRefusedTopic, .topic = topic->topic()});
            }
            continue;
          }
          if (known->second || topic->partitions()->empty()) continue;
          for (const RdKafka::PartitionMetadata* partition : *topic->partitions()) {
            newly_known.add(topic->topic(), partition->id(), RdKafka::Topic::OFFSET_BEGINNING);
          }
          known->second = true;
        }
        if (!newly_known.empty()) {
          if (RdKafka::Error* error = consumer.incremental_assign(newly_known.get())) {
            report_({.kind = WatchEvent::Kind::kError, .detail = "assign: " + error->str()});
            delete error;
          }
        }
      }
    }
    std::unique_ptr<RdKafka::Message> message(consumer.consume(50));
    if (message->err() != RdKafka::ERR_NO_ERROR) continue;
    auto& bytes = impl_->bytes[{message->topic_name(), message->partition()}];
    const std::uint64_t before = bytes;
    bytes += message->len() + message->key_len();
    for (auto [threshold, kind] : {std::pair{kNearLimitBytes, WatchEvent::Kind::kNearLimit},
                                   std::pair{kLimitBytes, WatchEvent::Kind::kOverLimit}}) {
      if (before < threshold && bytes >= threshold) {
        report_({.kind = kind,
                 .topic = message->topic_name(),
                 .partition = message->partition(),
                 .bytes = bytes});
      }
    }
  }
}

}  // namespace neardup::kafka
