// A 64-bit mixing bijection: splitmix64's finaliser (Steele, Lea, Flood 2014), whose output
// bits each depend on every input bit. Header-only; used where a value must be spread over all
// 64 bits (MinHash's per-hash orders, the index's Bloom filters).
#pragma once

#include <cstdint>

namespace neardup {

// Its two multipliers (vectorised copies of mix64 use them too).
inline constexpr std::uint64_t kMix64Multiplier1 = 0xbf58476d1ce4e5b9ull;
inline constexpr std::uint64_t kMix64Multiplier2 = 0x94d049bb133111ebull;

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= kMix64Multiplier1;
  x ^= x >> 27;
  x *= kMix64Multiplier2;
  return x ^ (x >> 31);
}

}  // namespace neardup
