#include "store/merge_schedule.h"

#include <gtest/gtest.h>

#include <vector>

namespace neardup {
namespace {

TEST(MergeSchedule, MergesStartedTogetherRunOneAfterAnotherWithTheSameWorkABatch) {
  // Six wide columns full at the same page, 1,000 entries each, 10 batches to go.
  std::vector<MergeDue> due(6, MergeDue{1000, 10, false});
  const auto budgets = plan_merge_budgets(due, 1u << 18);
  EXPECT_EQ(budgets, (std::vector<std::uint64_t>{600, 0, 0, 0, 0, 0}));
}

TEST(MergeSchedule, WhatTheFirstLeavesGoesToTheNext) {
  std::vector<MergeDue> due = {{50, 10, false}, {1000, 10, false}, {1000, 10, false}};
  // Shares 5 + 100 + 100: the first takes its 50, the second the other 155.
  EXPECT_EQ(plan_merge_budgets(due, 1u << 18), (std::vector<std::uint64_t>{50, 155, 0}));
}

TEST(MergeSchedule, EarliestDeadlineFirst) {
  std::vector<MergeDue> due = {{1000, 100, false}, {300, 3, false}};
  // Shares 10 + 100, both spent on the second, due first.
  EXPECT_EQ(plan_merge_budgets(due, 1u << 18), (std::vector<std::uint64_t>{0, 110}));
  // A delta full again (one batch left) finishes its merge now, ahead of the others.
  due = {{1000, 10, false}, {5000, 1, false}};
  EXPECT_EQ(plan_merge_budgets(due, 1u << 18), (std::vector<std::uint64_t>{100, 5000}));
}

TEST(MergeSchedule, IdleMergesKeepTheirOwnBudgetOutsideTheSum) {
  std::vector<MergeDue> due = {{1000, 10, false}, {10, 50, true}, {1000, 10, false}};
  EXPECT_EQ(plan_merge_budgets(due, 256), (std::vector<std::uint64_t>{200, 256, 0}));
}

// Simulated to the end, batch by batch: every merge ends by its deadline, and at most one merge
// of those that started together is part-written at a time.
TEST(MergeSchedule, EveryMergeEndsByItsDeadlineAndOneIsHalfWrittenAtATime) {
  struct Merge {
    std::uint64_t remaining, deadline;  // the batch it must end by
    std::uint64_t total;
  };
  std::vector<Merge> merges = {{7000, 40, 7000}, {6000, 40, 6000}, {9000, 40, 9000},
                               {500, 12, 500},   {8000, 40, 8000}, {3000, 25, 3000}};
  for (std::uint64_t batch = 0; batch < 40; ++batch) {
    std::vector<MergeDue> due;
    for (const Merge& m : merges) {
      due.push_back({m.remaining, m.deadline > batch ? m.deadline - batch : 1, false});
    }
    const auto budgets = plan_merge_budgets(due, 1u << 18);
    int partial = 0;
    for (std::size_t i = 0; i < merges.size(); ++i) {
      merges[i].remaining -= std::min(budgets[i], merges[i].remaining);
      if (merges[i].remaining != 0 && merges[i].remaining != merges[i].total) ++partial;
      if (batch + 1 == merges[i].deadline) {
        EXPECT_EQ(merges[i].remaining, 0u) << i;
      }
    }
    EXPECT_LE(partial, 1) << "batch " << batch;
  }
}

TEST(MergeSchedule, EachMergeAddsAtLeastItsSmallestShareToTheSum) {
  // Shares of 10 each, but at least 64 a merge (a record a slice) unless it has less left.
  std::vector<MergeDue> due = {
      {1000, 100, false, 64}, {1000, 100, false, 64}, {20, 100, false, 64}};
  EXPECT_EQ(plan_merge_budgets(due, 1u << 18), (std::vector<std::uint64_t>{148, 0, 0}));
}

// A merge whose entries are all written but that has not yet found its inputs exhausted still
// gets a slice, which ends it; without one it would never end, and its column never merge again.
TEST(MergeSchedule, AMergeWithNothingLeftStillGetsTheSliceThatEndsIt) {
  std::vector<MergeDue> due = {{0, 500, false, 64}};
  EXPECT_EQ(plan_merge_budgets(due, 1u << 18), (std::vector<std::uint64_t>{1}));
  due = {{1000, 10, false, 64}, {0, 500, false, 64}};
  // Its turn comes after the one due first, which takes the shares' sum (100 + 1).
  EXPECT_EQ(plan_merge_budgets(due, 1u << 18), (std::vector<std::uint64_t>{101, 0}));
  due[0].remaining = 50;
  EXPECT_EQ(plan_merge_budgets(due, 1u << 18), (std::vector<std::uint64_t>{50, 1}));
}

}  // namespace
}  // namespace neardup
