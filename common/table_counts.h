// The table counts of the permuted-table index (store/table_design.h; Manku et al., WWW 2007):
// a design of k differing bits and r prefix blocks has C(k + r, r) tables, for r >= 1 with
// k + r <= 64 blocks of at least one bit, and the store refuses more than kMaxTables. One rule
// for the config's validation (store.tables) and the store's design.
#pragma once

#include <cstdint>
#include <vector>

namespace neardup {

// More tables than this are refused: each costs an in-memory delta and a probe per page. k = 3
// needs 4 (to 134M pages) or 10; k = 5 at 100M pages 21, k = 7 120.
inline constexpr std::uint64_t kMaxTables = 100;

// C(n, r), exact while the result fits (every count up to kMaxTables and well past).
constexpr std::uint64_t binomial(std::uint32_t n, std::uint32_t r) {
  std::uint64_t c = 1;
  for (std::uint32_t i = 1; i <= r; ++i) c = c * (n - r + i) / i;
  return c;
}

// Every table count a design with this k may have, ascending: C(k + r, r) for r = 1, 2, ...
// while it is at most kMaxTables and k + r <= 64. Empty when k >= 64 or C(k + 1, 1) is too many.
inline std::vector<std::uint64_t> allowed_table_counts(std::uint32_t k) {
  std::vector<std::uint64_t> counts;
  for (std::uint32_t r = 1; k + r <= 64 && binomial(k + r, r) <= kMaxTables; ++r) {
    counts.push_back(binomial(k + r, r));
  }
  return counts;
}

}  // namespace neardup
