#include "store/near_scan.h"

#include <bit>

#include "common/coding.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_NEAR_SCAN_AVX512 1
#endif

namespace neardup {
namespace {

#ifdef NEARDUP_NEAR_SCAN_AVX512
// GCC 12's AVX-512 intrinsics fill their unused operands with _mm512_undefined_epi32(), which
// it then warns of as uninitialized (GCC bug 105593, fixed in GCC 13).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// Eight entries a step: their bytes gathered, each shifted to its low part, and the eight
// distances counted at once. The entries left after the last whole step go one at a time.
__attribute__((target("avx512f,avx512vpopcntdq"))) std::uint64_t next_near_avx512_form(
    LowParts parts, std::uint64_t from, std::uint64_t end, std::uint64_t base, std::uint64_t query,
    int k) {
  if (k < 0 || from >= end) return end;
  const auto w = static_cast<long long>(parts.w);
  const __m512i mask = _mm512_set1_epi64(static_cast<long long>((std::uint64_t{1} << w) - 1));
  const __m512i bases = _mm512_set1_epi64(static_cast<long long>(base));
  const __m512i queries = _mm512_set1_epi64(static_cast<long long>(query));
  const __m512i ks = _mm512_set1_epi64(k);
  const __m512i seven = _mm512_set1_epi64(7);
  const __m512i step = _mm512_set1_epi64(8 * w);
  // The first bits of entries i, i + 1, ..., i + 7.
  __m512i bits =
      _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(from) * w),
                       _mm512_setr_epi64(0, w, 2 * w, 3 * w, 4 * w, 5 * w, 6 * w, 7 * w));
  std::uint64_t i = from;
  for (; i + 8 <= end; i += 8, bits = _mm512_add_epi64(bits, step)) {
    const __m512i words = _mm512_i64gather_epi64(_mm512_srli_epi64(bits, 3), parts.low, 1);
    const __m512i low =
        _mm512_and_si512(_mm512_srlv_epi64(words, _mm512_and_si512(bits, seven)), mask);
    const __m512i differ =
        _mm512_and_si512(_mm512_xor_si512(_mm512_add_epi64(bases, low), queries), mask);
    const __mmask8 near = _mm512_cmple_epu64_mask(_mm512_popcnt_epi64(differ), ks);
    if (near != 0) return i + static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(near)));
  }
  return next_near_scalar(parts, i, end, base, query, k);
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

bool cpu_has_avx512_form() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
}
#endif

const NextNearFn chosen_form =
    next_near_avx512() != nullptr ? next_near_avx512() : next_near_scalar;

}  // namespace

std::uint64_t next_near_scalar(LowParts parts, std::uint64_t from, std::uint64_t end,
                               std::uint64_t base, std::uint64_t query, int k) {
  const std::uint64_t mask = (std::uint64_t{1} << parts.w) - 1;
  std::uint64_t bit = from * parts.w;
  for (std::uint64_t i = from; i < end; ++i, bit += parts.w) {
    const std::uint64_t low = (coding::decode_fixed64(parts.low + bit / 8) >> (bit % 8)) & mask;
    if (std::popcount(((base + low) ^ query) & mask) <= k) return i;
  }
  return end;
}

NextNearFn next_near_avx512() {
#ifdef NEARDUP_NEAR_SCAN_AVX512
  static const bool has = cpu_has_avx512_form();
  return has ? next_near_avx512_form : nullptr;
#else
  return nullptr;
#endif
}

std::uint64_t next_near(LowParts parts, std::uint64_t from, std::uint64_t end, std::uint64_t base,
                        std::uint64_t query, int k) {
  return chosen_form(parts, from, end, base, query, k);
}

std::string_view next_near_name() { return chosen_form == next_near_scalar ? "scalar" : "avx512"; }

}  // namespace neardup
