// Per-partition ordering between the pipeline workers and the index thread (docs/delivery.md).
//
// The consumer appends each record to its partition's lane, in offset order; workers finish
// records in any order; the index thread takes from every lane the longest prefix of finished
// ("ready") records. So a partition's records reach the index in offset order, the verdicts
// are those of a sequential run, and one slow page holds up its own partition only.
// Thread-safe: append (consumer thread), mark_ready (workers) and take (index thread) may run
// at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <vector>

#include "common/mutex.h"
#include "daemon/work.h"

namespace neardup::daemon {

class Lanes {
 public:
  // Appends a record to its partition's lane. A partition's records must come in increasing
  // offset order.
  void append(WorkPtr work) EXCLUDES(mutex_);

  // The worker has filled work.processed: the record may go to the index once every earlier
  // record of its partition has. Wakes take(). A record not in any lane is ignored.
  void mark_ready(const Work& work) EXCLUDES(mutex_);

  // Removes and returns the ready prefixes of the lanes, at most `batch_size` records in all
  // (lanes in partition order, each in offset order). Waits up to `first_wait` for a ready
  // record; then, while fewer than `batch_size` are ready, up to `fill_wait` for more (a
  // batch's delay). Returns early, possibly empty, on wake() or stop().
  std::vector<WorkPtr> take(std::size_t batch_size, std::chrono::milliseconds first_wait,
                            std::chrono::milliseconds fill_wait) EXCLUDES(mutex_);

  // Makes a waiting take() return now (e.g. there is other work for the index thread).
  void wake() EXCLUDES(mutex_);
  // Makes every take(), now and later, return without waiting.
  void stop() EXCLUDES(mutex_);

  // Records in the lanes, ready or not.
  std::size_t size() const EXCLUDES(mutex_);

 private:
  struct Entry {
    WorkPtr work;
    bool ready = false;
  };
  // Ready records at the heads of the lanes, counting no further than `limit`.
  std::size_t ready_count(std::size_t limit) const REQUIRES(mutex_);

  mutable Mutex mutex_;
  CondVar cv_;
  std::map<PartitionId, std::deque<Entry>> lanes_ GUARDED_BY(mutex_);
  bool woken_ GUARDED_BY(mutex_) = false;
  bool stopped_ GUARDED_BY(mutex_) = false;
};

}  // namespace neardup::daemon
