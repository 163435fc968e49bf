// The partitions the consumer group gave this process (daemon/consumer.h): which, what offset of
// each was stored, and how many of the consumed topic's partitions went to other members (the
// split guard: a role with a store must own them all). Not thread-safe: the consumer thread's.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/log.h"
#include "daemon/offset_tracker.h"
#include "kafka/client.h"

namespace neardup::daemon {

class Assignment {
 public:
  // The consumed topic's partitions, as listed at start (else at the first assignment).
  void set_topic_partitions(std::set<std::int32_t> partitions) {
    topic_partitions_ = std::move(partitions);
  }

  // Partitions assigned now; returns their names for the log (" t/0 t/1").
  std::string add(const std::vector<RdKafka::TopicPartition*>& partitions);
  // A partition revoked: forgotten with its stored offset.
  void remove(const PartitionId& id);
  const std::set<PartitionId>& partitions() const { return assigned_; }
  bool contains(const PartitionId& id) const { return assigned_.contains(id); }

  // How many of `topic`'s partitions are not assigned here, and of how many: the list is read
  // again from the cluster (added partitions count), or else the last known one is used.
  struct Coverage {
    std::size_t missing = 0, total = 0;
  };
  Coverage coverage(RdKafka::KafkaConsumer& consumer, const std::string& topic, int timeout_ms,
                    spdlog::logger& log);

  // offsets_store of every assigned partition whose committable offset advanced.
  void store_offsets(RdKafka::KafkaConsumer& consumer, const OffsetTracker& tracker,
                     spdlog::logger& log);

 private:
  std::set<PartitionId> assigned_;
  std::map<PartitionId, std::int64_t> stored_;
  std::set<std::int32_t> topic_partitions_;
};

}  // namespace neardup::daemon
