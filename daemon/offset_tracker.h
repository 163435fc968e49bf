// Which consumed offsets still wait for their output to be delivered, per partition
// (docs/delivery.md): offset n + 1 may be stored for a partition only once the outputs of every
// offset <= n are delivered. Offsets may have gaps (compaction, transaction markers), so the
// outstanding ones are kept as a set rather than a counter. Thread-safe: the consumer thread
// records consumption, the producer's delivery reports record deliveries.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace neardup::daemon {

using PartitionId = std::pair<std::string, std::int32_t>;  // topic, partition

// "topic/partition", the index's partition key (SourceOffset::partition).
std::string partition_key(const PartitionId& partition);

class OffsetTracker {
 public:
  // A record was handed to the pipeline. Offsets of one partition arrive in increasing order.
  void consumed(const PartitionId& partition, std::int64_t offset) EXCLUDES(mutex_);
  // Its one output (or dead letter) was delivered. Unknown offsets are ignored.
  void delivered(const PartitionId& partition, std::int64_t offset) EXCLUDES(mutex_);

  // The offset to store: the lowest offset not yet delivered, or one past the highest consumed
  // when all are. nullopt when nothing was consumed from the partition since it was forgotten.
  std::optional<std::int64_t> committable(const PartitionId& partition) const EXCLUDES(mutex_);
  // Offsets of the partition not yet delivered.
  std::size_t outstanding(const PartitionId& partition) const EXCLUDES(mutex_);
  std::size_t outstanding_total() const EXCLUDES(mutex_);
  // Drops a partition (revoked): late delivery reports for it are ignored.
  void forget(const PartitionId& partition) EXCLUDES(mutex_);
  std::vector<PartitionId> partitions() const EXCLUDES(mutex_);

 private:
  struct Partition {
    std::set<std::int64_t> outstanding;
    std::int64_t next = 0;  // one past the highest consumed offset
  };
  mutable Mutex mutex_;
  std::map<PartitionId, Partition> partitions_ GUARDED_BY(mutex_);
};

}  // namespace neardup::daemon
