#include "store/merge_schedule.h"

#include <algorithm>

namespace neardup {

std::vector<std::uint64_t> plan_merge_budgets(std::span<const MergeDue> due,
                                              std::uint64_t idle_budget) {
  std::vector<std::uint64_t> budgets(due.size(), 0);
  // A merge with nothing left to write has still to end (its last slice finds its inputs
  // exhausted and frees them): it counts as one entry.
  const auto remaining = [](const MergeDue& d) { return std::max<std::uint64_t>(1, d.remaining); };
  const auto share = [&](const MergeDue& d) {
    const std::uint64_t left = std::max<std::uint64_t>(1, d.batches_left);
    return std::max((remaining(d) + left - 1) / left, std::min(d.least, remaining(d)));
  };
  std::uint64_t pool = 0;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < due.size(); ++i) {
    if (due[i].idle) {
      budgets[i] = std::max(share(due[i]), idle_budget);
      continue;
    }
    pool += share(due[i]);
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return due[a].batches_left < due[b].batches_left;
  });
  for (const std::size_t i : order) {
    budgets[i] = std::min(pool, remaining(due[i]));
    pool -= budgets[i];
  }
  return budgets;
}

}  // namespace neardup
