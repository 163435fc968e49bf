// What the CPU running us can do beyond the x86-64 baseline the build targets, for the loops
// that have a vectorised version beside their portable one (pipeline/minhash/minima.h,
// pipeline/fingerprint/fingerprint.cc, pipeline/denoise/collapse.h, pipeline/decode/sniff.cc,
// pipeline/decode/text_runs.h, common/base64.cc). Header-only.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// Around the AVX-512 loops: GCC 12's AVX-512 intrinsics start some results from a deliberately
// undefined vector, which -Wmaybe-uninitialized reports inside its own headers.
#if defined(__GNUC__) && !defined(__clang__)
#define NEARDUP_AVX512_LOOPS_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define NEARDUP_AVX512_LOOPS_END _Pragma("GCC diagnostic pop")
#else
#define NEARDUP_AVX512_LOOPS_BEGIN
#define NEARDUP_AVX512_LOOPS_END
#endif

namespace neardup {

// AVX-512 F and DQ (512-bit vectors, 64-bit lane multiplies), with the OS saving their
// registers; false off x86-64.
inline bool cpu_has_avx512() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return has;
#else
  return false;
#endif
}

// AVX-512 BW, VBMI and VBMI2 (64 byte compares a vector, permutes of bytes, and compressing
// the bytes a mask keeps), with the OS saving their registers; false off x86-64.
inline bool cpu_has_avx512_bytes() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi") &&
                          __builtin_cpu_supports("avx512vbmi2");
  return has;
#else
  return false;
#endif
}

}  // namespace neardup
