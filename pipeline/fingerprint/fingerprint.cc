#include "pipeline/fingerprint/fingerprint.h"

#include <array>
#include <bit>
#include <charconv>

#include "common/cpu.h"

namespace neardup {

namespace fingerprint_internal {

// Charikar's SimHash: a weighted vote per bit over the feature hashes. Branch-free: the vote
// against a bit is the weight with its sign bit flipped (exactly -weight), so the sums, and the
// fingerprints, are those of the plain `bit ? w : -w` loop, added in the same order; the
// compiler vectorises the inner loop.
std::array<double, 64> simhash_votes_portable(std::span<const Feature> features) {
  std::array<double, 64> votes{};
  for (const Feature& f : features) {
    const std::uint64_t weight = std::bit_cast<std::uint64_t>(f.weight);
    const std::uint64_t against = ~f.hash;
    for (int bit = 0; bit < 64; ++bit) {
      votes[bit] += std::bit_cast<double>(weight ^ (((against >> bit) & 1) << 63));
    }
  }
  return votes;
}

#if defined(__x86_64__)
namespace {

// The same votes, eight bits a register: each feature's hash byte picks, lane by lane, the
// weight or its negation (the sign bit flipped, as above), added to the running sums, which stay
// in eight registers. Each vote is the same additions in the same order: identical sums.
__attribute__((target("avx512f,avx512dq"))) std::array<double, 64> simhash_votes_avx512(
    std::span<const Feature> features) {
  __m512d sums[8];
  for (__m512d& sum : sums) sum = _mm512_setzero_pd();
  const __m512d sign = _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<long long>(1ull << 63)));
  for (const Feature& f : features) {
    const __m512d weight = _mm512_set1_pd(f.weight);
    const __m512d against = _mm512_xor_pd(weight, sign);
    for (int byte = 0; byte < 8; ++byte) {
      const auto bits = static_cast<__mmask8>(f.hash >> (8 * byte));
      sums[byte] = _mm512_add_pd(sums[byte], _mm512_mask_blend_pd(bits, against, weight));
    }
  }
  std::array<double, 64> votes;
  for (int byte = 0; byte < 8; ++byte) _mm512_storeu_pd(votes.data() + 8 * byte, sums[byte]);
  return votes;
}

}  // namespace
#endif

std::array<double, 64> simhash_votes(std::span<const Feature> features) {
#if defined(__x86_64__)
  if (cpu_has_avx512()) return simhash_votes_avx512(features);
#endif
  return simhash_votes_portable(features);
}

}  // namespace fingerprint_internal

std::uint64_t simhash(std::span<const Feature> features) {
  const std::array<double, 64> votes = fingerprint_internal::simhash_votes(features);
  std::uint64_t fingerprint = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (votes[bit] > 0) fingerprint |= std::uint64_t{1} << bit;
  }
  return fingerprint;
}

std::string fingerprint_hex(std::uint64_t fingerprint) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, fingerprint >>= 4) hex[i] = kDigits[fingerprint & 0xF];
  return hex;
}

std::optional<std::uint64_t> parse_fingerprint_hex(std::string_view hex) {
  if (hex.size() != 16) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
  if (ec != std::errc() || end != hex.data() + hex.size()) return std::nullopt;
  return value;
}

}  // namespace neardup
