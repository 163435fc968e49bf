#include "daemon/assignment.h"

#include "kafka/admin.h"

namespace neardup::daemon {

std::string Assignment::add(const std::vector<RdKafka::TopicPartition*>& partitions) {
  std::string names;
  for (auto* tp : partitions) {
    assigned_.insert({tp->topic(), tp->partition()});
    names += " " + tp->topic() + "/" + std::to_string(tp->partition());
  }
  return names;
}

void Assignment::remove(const PartitionId& id) {
  stored_.erase(id);
  assigned_.erase(id);
}

Assignment::Coverage Assignment::coverage(RdKafka::KafkaConsumer& consumer,
                                          const std::string& topic, int timeout_ms,
                                          spdlog::logger& log) {
  if (auto listed = kafka::topic_partitions(consumer, topic, timeout_ms)) {
    topic_partitions_ = std::set<std::int32_t>(listed->begin(), listed->end());
  } else {
    log.warn("partitions of {} unknown ({}); checking the assignment against the last known {}",
             topic, listed.error(), topic_partitions_.size());
  }
  Coverage coverage{.total = topic_partitions_.size()};
  for (std::int32_t partition : topic_partitions_) {
    if (!assigned_.contains({topic, partition})) coverage.missing += 1;
  }
  return coverage;
}

void Assignment::store_offsets(RdKafka::KafkaConsumer& consumer, const OffsetTracker& tracker,
                               spdlog::logger& log) {
  kafka::TopicPartitions advanced;
  for (const auto& id : assigned_) {
    auto offset = tracker.committable(id);
    if (!offset) continue;
    auto it = stored_.find(id);
    if (it != stored_.end() && it->second >= *offset) continue;
    advanced.add(id.first, id.second, *offset);
    stored_[id] = *offset;
  }
  if (advanced.empty()) return;
  if (RdKafka::ErrorCode code = consumer.offsets_store(advanced.get()); code) {
    log.warn("offsets_store failed error={}", kafka::error_name(code));
  }
}

}  // namespace neardup::daemon
