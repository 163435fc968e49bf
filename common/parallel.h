// Running the pure pipeline stages over batches of pages on all cores.
//
// parallel_for: f(i) for i in [0, n) on up to `threads` threads (0: one per core); returns when
// all are done.
// FifoPool: threads that keep running jobs queued in batches, first queued first started, so
// that the next batches keep every core busy while the caller waits for the oldest.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace neardup {

inline unsigned resolve_threads(unsigned threads) {
  return threads ? threads : std::max(1u, std::thread::hardware_concurrency());
}

template <typename F>
void parallel_for(std::size_t n, unsigned threads, F&& f) {
  threads = static_cast<unsigned>(std::min<std::size_t>(resolve_threads(threads), n));
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) f(i);
  };
  std::vector<std::jthread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
}

// Thread-safe. Jobs start in the order they were queued: every job of a batch starts before any
// job of a later batch, so batches finish roughly in order and the one the caller waits for
// has every core. The destructor runs what is still queued, then joins the threads.
class FifoPool {
 public:
  // Jobs f(0) .. f(n - 1), queued by submit(); wait() returns once all have run.
  class Batch {
   public:
    void wait() {
      std::unique_lock lock(mutex_);
      done_cv_.wait(lock, [&] { return done_ == n_; });
    }

   private:
    friend class FifoPool;
    std::function<void(std::size_t)> f_;
    std::size_t n_ = 0;
    std::size_t next_ = 0;  // the next job to start; under the pool's mutex
    std::size_t done_ = 0;  // under mutex_
    std::mutex mutex_;
    std::condition_variable done_cv_;
  };

  explicit FifoPool(unsigned threads) {
    threads = resolve_threads(threads);
    workers_.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { run(); });
  }
  ~FifoPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    queued_cv_.notify_all();
    workers_.clear();  // joins, once the queue is empty
  }
  FifoPool(const FifoPool&) = delete;
  FifoPool& operator=(const FifoPool&) = delete;

  // Queues f(i) for i in [0, n) behind everything queued before. f must stay callable until
  // the batch's wait() returns.
  std::shared_ptr<Batch> submit(std::size_t n, std::function<void(std::size_t)> f) {
    auto batch = std::make_shared<Batch>();
    batch->f_ = std::move(f);
    batch->n_ = n;
    if (n == 0) return batch;
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(batch);
    }
    queued_cv_.notify_all();
    return batch;
  }

 private:
  void run() {
    for (;;) {
      std::shared_ptr<Batch> batch;
      std::size_t i;
      {
        std::unique_lock lock(mutex_);
        queued_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        batch = queue_.front();
        i = batch->next_++;
        if (batch->next_ == batch->n_) queue_.pop_front();
      }
      batch->f_(i);
      std::lock_guard lock(batch->mutex_);
      if (++batch->done_ == batch->n_) batch->done_cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable queued_cv_;
  std::deque<std::shared_ptr<Batch>> queue_;  // batches with jobs not yet started
  bool stopping_ = false;
  std::vector<std::jthread> workers_;  // last: joined before the members above go
};

}  // namespace neardup
