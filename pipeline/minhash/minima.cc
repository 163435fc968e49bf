#include "pipeline/minhash/minima.h"

#include <algorithm>

#include "common/cpu.h"
#include "common/mix.h"

namespace neardup::minhash_internal {

void fold_minima_portable(std::span<const std::uint64_t> shingles,
                          std::span<const std::uint64_t> salts, std::span<std::uint64_t> minima) {
  std::uint64_t* const min = minima.data();
  const std::uint64_t* const salt = salts.data();
  const std::size_t hashes = minima.size();
  for (const std::uint64_t shingle : shingles) {
    for (std::size_t j = 0; j < hashes; ++j) min[j] = std::min(min[j], mix64(shingle ^ salt[j]));
  }
}

#if defined(__x86_64__)
namespace {

NEARDUP_AVX512_LOOPS_BEGIN

// Eight hashes a register: for each block of eight, its minima stay in a register while every
// shingle passes; the hashes past the last whole block take the portable loop.
__attribute__((target("avx512f,avx512dq"))) void fold_minima_avx512(
    std::span<const std::uint64_t> shingles, std::span<const std::uint64_t> salts,
    std::span<std::uint64_t> minima) {
  const __m512i m1 = _mm512_set1_epi64(static_cast<long long>(kMix64Multiplier1));
  const __m512i m2 = _mm512_set1_epi64(static_cast<long long>(kMix64Multiplier2));
  const std::size_t blocks = minima.size() / 8;
  for (std::size_t b = 0; b < blocks; ++b) {
    const __m512i salt = _mm512_loadu_si512(salts.data() + 8 * b);
    __m512i min = _mm512_loadu_si512(minima.data() + 8 * b);
    for (const std::uint64_t shingle : shingles) {
      __m512i x = _mm512_xor_si512(_mm512_set1_epi64(static_cast<long long>(shingle)), salt);
      x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 30));
      x = _mm512_mullo_epi64(x, m1);
      x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 27));
      x = _mm512_mullo_epi64(x, m2);
      x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
      min = _mm512_min_epu64(min, x);
    }
    _mm512_storeu_si512(minima.data() + 8 * b, min);
  }
  fold_minima_portable(shingles, salts.subspan(8 * blocks), minima.subspan(8 * blocks));
}
NEARDUP_AVX512_LOOPS_END

}  // namespace

void fold_minima(std::span<const std::uint64_t> shingles, std::span<const std::uint64_t> salts,
                 std::span<std::uint64_t> minima) {
  if (cpu_has_avx512()) return fold_minima_avx512(shingles, salts, minima);
  fold_minima_portable(shingles, salts, minima);
}
#else
void fold_minima(std::span<const std::uint64_t> shingles, std::span<const std::uint64_t> salts,
                 std::span<std::uint64_t> minima) {
  fold_minima_portable(shingles, salts, minima);
}
#endif

}  // namespace neardup::minhash_internal
