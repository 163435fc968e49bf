// fingerprint: weighted features -> 64-bit SimHash (Charikar 2002; docs/README.md).
//
// Bit i is 1 iff the sum over features of (+w if the feature hash's bit i is 1, else -w) is
// positive. Distance is the Hamming distance. Printed as 16 lower-case hex digits.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "pipeline/features/features.h"

namespace neardup {

std::uint64_t simhash(std::span<const Feature> features);

namespace fingerprint_internal {

// SimHash's 64 vote sums, whose signs simhash() takes. Two loops give identical sums (each the
// same additions in the same order): a portable one, and one with AVX-512 taken where the CPU has
// it (common/cpu.h).
std::array<double, 64> simhash_votes(std::span<const Feature> features);
std::array<double, 64> simhash_votes_portable(std::span<const Feature> features);

}  // namespace fingerprint_internal

inline int hamming_distance(std::uint64_t a, std::uint64_t b) { return std::popcount(a ^ b); }

std::string fingerprint_hex(std::uint64_t fingerprint);

// Parses exactly 16 hex digits; nullopt otherwise.
std::optional<std::uint64_t> parse_fingerprint_hex(std::string_view hex);

}  // namespace neardup
