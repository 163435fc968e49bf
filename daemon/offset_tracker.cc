#include "daemon/offset_tracker.h"

namespace neardup::daemon {

std::string partition_key(const PartitionId& partition) {
  return partition.first + "/" + std::to_string(partition.second);
}

void OffsetTracker::consumed(const PartitionId& partition, std::int64_t offset) {
  MutexLock lock(mutex_);
  Partition& state = partitions_[partition];
  state.outstanding.insert(offset);
  if (offset + 1 > state.next) state.next = offset + 1;
}

void OffsetTracker::delivered(const PartitionId& partition, std::int64_t offset) {
  MutexLock lock(mutex_);
  auto it = partitions_.find(partition);
  if (it != partitions_.end()) it->second.outstanding.erase(offset);
}

std::optional<std::int64_t> OffsetTracker::committable(const PartitionId& partition) const {
  MutexLock lock(mutex_);
  auto it = partitions_.find(partition);
  if (it == partitions_.end()) return std::nullopt;
  const Partition& state = it->second;
  return state.outstanding.empty() ? state.next : *state.outstanding.begin();
}

std::size_t OffsetTracker::outstanding(const PartitionId& partition) const {
  MutexLock lock(mutex_);
  auto it = partitions_.find(partition);
  return it == partitions_.end() ? 0 : it->second.outstanding.size();
}

std::size_t OffsetTracker::outstanding_total() const {
  MutexLock lock(mutex_);
  std::size_t total = 0;
  for (const auto& [id, state] : partitions_) total += state.outstanding.size();
  return total;
}

void OffsetTracker::forget(const PartitionId& partition) {
  MutexLock lock(mutex_);
  partitions_.erase(partition);
}

std::vector<PartitionId> OffsetTracker::partitions() const {
  MutexLock lock(mutex_);
  std::vector<PartitionId> result;
  for (const auto& [id, state] : partitions_) result.push_back(id);
  return result;
}

}  // namespace neardup::daemon
