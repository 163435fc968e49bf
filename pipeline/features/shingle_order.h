// shingle_order: the page's shingles put in hash order, so that equal shingles stand together
// to be counted (features.h), in the order std::sort would leave them.
//
// Why std::sort's order: equal shingles' shares are summed in the order they stand, and a
// different order can round differently and tip a SimHash bit whose votes cancel out (a stable
// radix sort did so on 13 of the 1,610 evaluation pages). The order among equal shingles
// matters only where three or more of them have shares whose sum depends on it: two shares sum
// the same either way round, equal shares in any order, and a group of up to six is tried in
// every order. So the shingles are first sorted by a counting sort on their top bits and an
// insertion sort (shingle hashes are uniform, so a bucket holds about one), which takes a few
// passes where std::sort mispredicts a branch at every other comparison, and only a page with
// a group whose order matters is sorted again by std::sort, from the order it came in (a fifth
// of synthetic-dev's pages, half of AEB's: frequent word pairs). Either way every group sums
// to the bits it sums to in std::sort's order. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup::features_internal {

struct WeightedHash {
  std::uint64_t hash;
  double share;  // the paragraph-length factor of this occurrence
};

// What order_shingles reuses from one call to the next (one per thread).
struct ShingleOrderScratch {
  std::vector<WeightedHash> sorted;
  std::vector<std::uint32_t> starts;  // per bucket
};

// Puts `shingles` in ascending hash order (the order among equal hashes: above). Pages of more
// than kMaxCountedShingles shingles go to std::sort directly.
void order_shingles(std::vector<WeightedHash>& shingles, ShingleOrderScratch& scratch);
inline constexpr std::size_t kMaxCountedShingles = std::size_t{1} << 18;

// The same with std::sort alone, which order_shingles must equal in every group's sum.
void order_shingles_by_std_sort(std::vector<WeightedHash>& shingles);

}  // namespace neardup::features_internal
