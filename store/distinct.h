// Sorting a probe's candidate documents and dropping repeats. A page finds a document once per
// band (and per table) it shares with it, so a page with many exact copies in the index finds
// each of them tens of times: 3,000 copies and 16 bands are 48,000 entries for 3,000 documents,
// and sorting them all was half the time of such a page. The repeats are dropped first, and
// only the distinct values sorted: while there are at most kFewDistinct of them, by comparison
// with those kept; past that, when there are more than kDistinctSortDirectly values, with a hash
// set that grows with the distinct values (one pass).
// Pure; the scratch table is the caller's, reused from call to call.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup {

inline constexpr std::size_t kDistinctSortDirectly = 256;
// Most probes find a few documents, each once per band they share (a hundred values, four
// distinct, on synthetic-dev): while at most this many are distinct, repeats are dropped by
// comparing each value with the distinct ones kept so far, a few predictable comparisons, and
// only those are sorted.
inline constexpr std::size_t kFewDistinct = 16;

// Sorts `values` ascending and removes repeats. ~0 is not a value (the set's empty slot).
inline void sort_distinct(std::vector<std::uint64_t>& values, std::vector<std::uint64_t>& table) {
  constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  std::size_t few = 0;  // values[0, few): the distinct values of values[0, i)
  std::size_t i = 0;
  for (; i < values.size(); ++i) {
    const std::uint64_t value = values[i];
    if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(few), value) !=
        values.begin() + static_cast<std::ptrdiff_t>(few)) {
      continue;
    }
    if (few == kFewDistinct) break;
    values[few++] = value;
  }
  if (i == values.size()) {
    values.resize(few);
    std::sort(values.begin(), values.end());
    return;
  }
  // More than a few: the repeats dropped so far leave a gap, closed before going on.
  values.erase(values.begin() + static_cast<std::ptrdiff_t>(few),
               values.begin() + static_cast<std::ptrdiff_t>(i));
  if (values.size() > kDistinctSortDirectly) {
    // The set starts at four slots a value of the first kDistinctSortDirectly and doubles when
    // half full, so it follows the distinct values, not all of them.
    std::size_t slots = 4 * kDistinctSortDirectly;
    table.assign(slots, kEmpty);
    auto insert = [&](std::uint64_t value) {
      // Fibonacci hashing spreads consecutive document numbers over the table.
      const int shift = 64 - std::countr_zero(slots);
      std::size_t i = static_cast<std::size_t>((value * 0x9E3779B97F4A7C15ull) >> shift);
      while (table[i] != kEmpty && table[i] != value) i = (i + 1) & (slots - 1);
      if (table[i] != kEmpty) return false;
      table[i] = value;
      return true;
    };
    std::size_t kept = 0;
    for (const std::uint64_t value : values) {
      if (!insert(value)) continue;
      values[kept++] = value;
      if (2 * kept > slots) {
        slots *= 2;
        table.assign(slots, kEmpty);
        for (std::size_t i = 0; i < kept; ++i) insert(values[i]);
      }
    }
    values.resize(kept);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace neardup
