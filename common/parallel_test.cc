#include "common/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

namespace neardup {
namespace {

TEST(ParallelFor, RunsEveryIndexOnce) {
  std::vector<std::atomic<int>> runs(1000);
  parallel_for(runs.size(), 4, [&](std::size_t i) { runs[i]++; });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
}

TEST(FifoPool, RunsEveryJobOfEveryBatchOnce) {
  FifoPool pool(3);
  std::vector<std::vector<std::atomic<int>>> runs(5);
  std::vector<std::shared_ptr<FifoPool::Batch>> batches;
  for (std::size_t b = 0; b < runs.size(); ++b) {
    runs[b] = std::vector<std::atomic<int>>(100 + b);
    batches.push_back(pool.submit(runs[b].size(), [&runs, b](std::size_t i) { runs[b][i]++; }));
  }
  for (auto& batch : batches) batch->wait();
  for (const auto& batch_runs : runs) {
    for (const auto& r : batch_runs) EXPECT_EQ(r.load(), 1);
  }
  pool.submit(0, [](std::size_t) { FAIL() << "an empty batch runs nothing"; })->wait();
}

// A later batch's jobs never start while an earlier batch still has jobs waiting to start: when
// one of them starts, every job of the first batch has started, except any the other threads
// have taken but not yet begun (at most threads - 1).
TEST(FifoPool, StartsJobsInTheOrderTheyWereQueued) {
  constexpr unsigned kThreads = 2;
  constexpr std::size_t kJobs = 50;
  FifoPool pool(kThreads);
  std::atomic<std::size_t> first_started = 0;
  std::atomic<std::size_t> fewest_seen = kJobs;
  auto first = pool.submit(kJobs, [&](std::size_t) {
    first_started++;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  });
  auto second = pool.submit(kJobs, [&](std::size_t) {
    std::size_t seen = first_started.load();
    std::size_t fewest = fewest_seen.load();
    while (seen < fewest && !fewest_seen.compare_exchange_weak(fewest, seen)) {
    }
  });
  second->wait();
  first->wait();
  EXPECT_EQ(first_started.load(), kJobs);
  EXPECT_GE(fewest_seen.load(), kJobs - (kThreads - 1));
}

TEST(FifoPool, DestructorRunsWhatIsQueued) {
  std::atomic<int> runs = 0;
  {
    FifoPool pool(1);
    pool.submit(20, [&](std::size_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      runs++;
    });
  }
  EXPECT_EQ(runs.load(), 20);
}

}  // namespace
}  // namespace neardup
