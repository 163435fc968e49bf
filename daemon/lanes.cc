#include "daemon/lanes.h"

#include <algorithm>

namespace neardup::daemon {

void Lanes::append(WorkPtr work) {
  std::lock_guard lock(mutex_);
  const PartitionId partition = work->input.partition;
  lanes_[partition].push_back(Entry{std::move(work)});
}

void Lanes::mark_ready(const Work& work) {
  {
    std::lock_guard lock(mutex_);
    auto lane = lanes_.find(work.input.partition);
    if (lane == lanes_.end()) return;
    auto entry = std::ranges::lower_bound(lane->second, work.input.offset, std::less{},
                                          [](const Entry& e) { return e.work->input.offset; });
    if (entry == lane->second.end() || entry->work.get() != &work) return;
    entry->ready = true;
  }
  cv_.notify_all();
}

std::size_t Lanes::ready_count(std::size_t limit) const {
  std::size_t count = 0;
  for (const auto& [partition, lane] : lanes_) {
    for (const Entry& entry : lane) {
      if (!entry.ready || count >= limit) break;
      ++count;
    }
  }
  return count;
}

std::vector<WorkPtr> Lanes::take(std::size_t batch_size, std::chrono::milliseconds first_wait,
                                 std::chrono::milliseconds fill_wait) {
  batch_size = std::max<std::size_t>(batch_size, 1);
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, first_wait, [&] { return stopped_ || woken_ || ready_count(1) > 0; });
  if (!stopped_ && !woken_ && ready_count(1) > 0 && ready_count(batch_size) < batch_size) {
    cv_.wait_for(lock, fill_wait,
                 [&] { return stopped_ || woken_ || ready_count(batch_size) >= batch_size; });
  }
  woken_ = false;
  std::vector<WorkPtr> batch;
  for (auto& [partition, lane] : lanes_) {
    while (!lane.empty() && lane.front().ready && batch.size() < batch_size) {
      batch.push_back(std::move(lane.front().work));
      lane.pop_front();
    }
  }
  std::erase_if(lanes_, [](const auto& entry) { return entry.second.empty(); });
  return batch;
}

void Lanes::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  cv_.notify_all();
}

void Lanes::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  cv_.notify_all();
}

std::size_t Lanes::size() const {
  std::lock_guard lock(mutex_);
  std::size_t total = 0;
  for (const auto& [partition, lane] : lanes_) total += lane.size();
  return total;
}

}  // namespace neardup::daemon
