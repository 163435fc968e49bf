#include "store/merge_schedule.h"

#include <algorithm>
#include <numeric>

namespace neardup {

std::vector<std::uint64_t> plan_merge_budgets(std::span<const MergeDue> due,
                                              std::uint64_t idle_budget) {
  std::vector<std::uint64_t> budgets(due.size(), 0);
  const auto share = [&](const MergeDue& d) {
    const std::uint64_t left = std::max<std::uint64_t>(1, d.batches_left);
    return std::max((d.remaining + left - 1) / left, std::min(d.least, d.remaining));
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
    budgets[i] = std::min(pool, due[i].remaining);
    pool -= budgets[i];
  }
  return budgets;
}

}  // namespace neardup
