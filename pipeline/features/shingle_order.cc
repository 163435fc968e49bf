#include "pipeline/features/shingle_order.h"

#include <algorithm>
#include <bit>
#include <cstddef>

namespace neardup::features_internal {
namespace {

// Up to this many equal shingles, every order of their shares is tried.
constexpr std::size_t kMaxTriedGroup = 6;

// True when the shares of group (three or more equal shingles) can sum to different bits in
// some order: when they are not all the same and, for a group of up to kMaxTriedGroup, some
// order of them sums differently from another.
bool order_changes_sum(const WeightedHash* group, std::size_t size) {
  double shares[kMaxTriedGroup];
  if (size > kMaxTriedGroup) {
    return std::any_of(group + 1, group + size,
                       [&](const WeightedHash& s) { return s.share != group[0].share; });
  }
  for (std::size_t i = 0; i < size; ++i) shares[i] = group[i].share;
  std::sort(shares, shares + size);
  if (shares[0] == shares[size - 1]) return false;
  auto sum = [&] {
    double total = shares[0];
    for (std::size_t i = 1; i < size; ++i) total += shares[i];
    return total;
  };
  const double first = sum();
  while (std::next_permutation(shares, shares + size)) {
    if (sum() != first) return true;
  }
  return false;
}

// True when some run of three or more equal hashes in `sorted` holds shares whose order changes
// their sum: the one case where the order among equal shingles matters.
bool order_matters(const std::vector<WeightedHash>& sorted) {
  for (std::size_t i = 0; i + 2 < sorted.size();) {
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j].hash == sorted[i].hash) ++j;
    if (j - i >= 3 && order_changes_sum(&sorted[i], j - i)) return true;
    i = j;
  }
  return false;
}

}  // namespace

void order_shingles_by_std_sort(std::vector<WeightedHash>& shingles) {
  std::sort(shingles.begin(), shingles.end(),
            [](const WeightedHash& a, const WeightedHash& b) { return a.hash < b.hash; });
}

void order_shingles(std::vector<WeightedHash>& shingles, ShingleOrderScratch& scratch) {
  const std::size_t n = shingles.size();
  if (n < 2) return;
  if (n > kMaxCountedShingles) return order_shingles_by_std_sort(shingles);
  // About one shingle a bucket: 2^bits >= n, from 16 to 2^18 buckets.
  const int bits = std::max(static_cast<int>(std::bit_width(n - 1)), 4);
  const int shift = 64 - bits;
  std::vector<std::uint32_t>& starts = scratch.starts;
  starts.assign((std::size_t{1} << bits) + 1, 0);
  for (const WeightedHash& s : shingles) ++starts[(s.hash >> shift) + 1];
  for (std::size_t b = 1; b < starts.size(); ++b) starts[b] += starts[b - 1];
  std::vector<WeightedHash>& sorted = scratch.sorted;
  sorted.resize(n);
  for (const WeightedHash& s : shingles) sorted[starts[s.hash >> shift]++] = s;
  // Each shingle is now in its bucket, the buckets in order: only shingles within a bucket can
  // be out of order, and an insertion sort puts them right in a step or two each.
  for (std::size_t i = 1; i < n; ++i) {
    const WeightedHash s = sorted[i];
    std::size_t j = i;
    for (; j > 0 && sorted[j - 1].hash > s.hash; --j) sorted[j] = sorted[j - 1];
    sorted[j] = s;
  }
  if (order_matters(sorted)) return order_shingles_by_std_sort(shingles);
  shingles.swap(sorted);
}

}  // namespace neardup::features_internal
