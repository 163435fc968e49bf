#include "daemon/lanes.h"

#include <algorithm>

namespace neardup::daemon {

void Lanes::append(WorkPtr work) {
  MutexLock lock(mutex_);
  const PartitionId partition = work->input.partition;
  lanes_[partition].push_back(Entry{std::move(work)});
}

void Lanes::mark_ready(const Work& work) {
  {
    MutexLock lock(mutex_);
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
  MutexLock lock(mutex_);
  const auto first_deadline = std::chrono::steady_clock::now() + first_wait;
  while (!(stopped_ || woken_ || ready_count(1) > 0)) {
    if (!cv_.wait_until(mutex_, first_deadline)) break;
  }
  if (!stopped_ && !woken_ && ready_count(1) > 0 && ready_count(batch_size) < batch_size) {
    const auto fill_deadline = std::chrono::steady_clock::now() + fill_wait;
    while (!(stopped_ || woken_ || ready_count(batch_size) >= batch_size)) {
      if (!cv_.wait_until(mutex_, fill_deadline)) break;
    }
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
    MutexLock lock(mutex_);
    woken_ = true;
  }
  cv_.notify_all();
}

void Lanes::stop() {
  {
    MutexLock lock(mutex_);
    stopped_ = true;
  }
  cv_.notify_all();
}

std::size_t Lanes::size() const {
  MutexLock lock(mutex_);
  std::size_t total = 0;
  for (const auto& [partition, lane] : lanes_) total += lane.size();
  return total;
}

}  // namespace neardup::daemon
