// The MinHash inner loop (minhash.h): for every shingle s and every hash j < H,
//   minima[j] = min(minima[j], mix64(s ^ salts[j])).
// Two loops give identical minima: a portable one, and one with AVX-512 (F and DQ: eight 64-bit
// multiplies an instruction, about five times fewer cycles a shingle), taken at run time when
// the CPU and the OS have it (common/cpu.h). Pure; any number of threads.
#pragma once

#include <cstdint>
#include <span>

namespace neardup::minhash_internal {

// salts.size() == minima.size().
void fold_minima(std::span<const std::uint64_t> shingles, std::span<const std::uint64_t> salts,
                 std::span<std::uint64_t> minima);

// The portable loop, which fold_minima must equal.
void fold_minima_portable(std::span<const std::uint64_t> shingles,
                          std::span<const std::uint64_t> salts, std::span<std::uint64_t> minima);

}  // namespace neardup::minhash_internal
