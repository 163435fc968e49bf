#include "pipeline/decode/text_runs.h"

#include <bit>
#include <cstring>

#include "common/cjk.h"
#include "common/cpu.h"

namespace neardup::decode_internal {

int32_t skip_ascii_portable(const uint8_t* text, int32_t i, int32_t length) {
  for (uint64_t word; i + 8 <= length; i += 8) {
    std::memcpy(&word, text + i, 8);
    if ((word & 0x8080808080808080ull) != 0) break;
  }
  while (i < length && text[i] < 0x80) ++i;
  return i;
}

int32_t skip_kanji_and_kana_portable(const uint8_t* text, int32_t i, int32_t length) {
  while (i + 3 <= length && (text[i] & 0xF0) == 0xE0 && (text[i + 1] & 0xC0) == 0x80 &&
         (text[i + 2] & 0xC0) == 0x80) {
    const char32_t c =
        ((text[i] & 0x0F) << 12) | ((text[i + 1] & 0x3F) << 6) | (text[i + 2] & 0x3F);
    if (!is_common_han_or_kana(c)) break;
    i += 3;
  }
  return i;
}

#if defined(__x86_64__)
namespace {

NEARDUP_AVX512_LOOPS_BEGIN

// One bit per byte of v: equal to, at least, at most b.
__attribute__((target("avx512f,avx512bw"))) inline std::uint64_t eq(__m512i v, unsigned char b) {
  return _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(static_cast<char>(b)));
}
__attribute__((target("avx512f,avx512bw"))) inline std::uint64_t ge(__m512i v, unsigned char b) {
  return _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(static_cast<char>(b)));
}
__attribute__((target("avx512f,avx512bw"))) inline std::uint64_t le(__m512i v, unsigned char b) {
  return _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(static_cast<char>(b)));
}

__attribute__((target("avx512f,avx512bw"))) int32_t skip_ascii_avx512(const uint8_t* text,
                                                                      int32_t i, int32_t length) {
  for (; i + 64 <= length; i += 64) {
    const std::uint64_t high = _mm512_movepi8_mask(_mm512_loadu_si512(text + i));
    if (high != 0) return i + std::countr_zero(high);
  }
  return skip_ascii_portable(text, i, length);
}

// Sixteen characters (48 bytes) a step: with one bit per byte of a 64-byte load, a character
// starting at byte p is in the run when
//   bytes p+1 and p+2 are continuation bytes (10xxxxxx), and
//   U+4E00-9FFF:  byte p is E5-E9, or it is E4 and byte p+1 >= B8;
//   U+3041-3096, U+30A1-30FA (lead E3):  p+1 = 81 and p+2 >= 81, or p+1 = 82 and p+2 <= 96 or
//                                         >= A1, or p+1 = 83 and p+2 <= BA.
// (The byte form of is_common_han_or_kana's ranges; the test checks the two agree.)
__attribute__((target("avx512f,avx512bw"))) int32_t skip_kanji_and_kana_avx512(const uint8_t* text,
                                                                               int32_t i,
                                                                               int32_t length) {
  constexpr std::uint64_t kStarts = 0x0000249249249249ull;  // bytes 0, 3, ..., 45
  while (i + 64 <= length) {
    const __m512i v = _mm512_loadu_si512(text + i);
    const std::uint64_t continuation = ge(v, 0x80) & le(v, 0xBF);
    const std::uint64_t ge_b8 = ge(v, 0xB8);
    const std::uint64_t ge_81 = ge(v, 0x81);
    const std::uint64_t le_96 = le(v, 0x96);
    const std::uint64_t ge_a1 = ge(v, 0xA1);
    const std::uint64_t le_ba = le(v, 0xBA);
    const std::uint64_t han = (ge(v, 0xE5) & le(v, 0xE9)) | (eq(v, 0xE4) & ge_b8 >> 1);
    const std::uint64_t kana =
        eq(v, 0xE3) & ((eq(v, 0x81) >> 1 & ge_81 >> 2) | (eq(v, 0x82) >> 1 & (le_96 | ge_a1) >> 2) |
                       (eq(v, 0x83) >> 1 & le_ba >> 2));
    const std::uint64_t in_run = continuation >> 1 & continuation >> 2 & (han | kana);
    const std::uint64_t out = kStarts & ~in_run;
    if (out != 0) return i + std::countr_zero(out);
    i += 48;
  }
  return skip_kanji_and_kana_portable(text, i, length);
}

NEARDUP_AVX512_LOOPS_END

}  // namespace

int32_t skip_ascii(const uint8_t* text, int32_t i, int32_t length) {
  if (cpu_has_avx512_bytes()) return skip_ascii_avx512(text, i, length);
  return skip_ascii_portable(text, i, length);
}

int32_t skip_kanji_and_kana(const uint8_t* text, int32_t i, int32_t length) {
  if (cpu_has_avx512_bytes()) return skip_kanji_and_kana_avx512(text, i, length);
  return skip_kanji_and_kana_portable(text, i, length);
}
#else
int32_t skip_ascii(const uint8_t* text, int32_t i, int32_t length) {
  return skip_ascii_portable(text, i, length);
}

int32_t skip_kanji_and_kana(const uint8_t* text, int32_t i, int32_t length) {
  return skip_kanji_and_kana_portable(text, i, length);
}
#endif

}  // namespace neardup::decode_internal
