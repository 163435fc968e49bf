#include "pipeline/denoise/collapse.h"

#include <array>
#include <bit>

#include "common/cpu.h"

namespace neardup::denoise_internal {
namespace {

unsigned char byte_at(std::string_view s, std::size_t i) {
  return static_cast<unsigned char>(s[i]);
}

// The bytes the portable loop copies as they come: all but whitespace, ',' and the first bytes
// of U+00A0 (C2), U+FF0C (EF), U+3001 (E3) and U+060C (D8).
constexpr std::array<bool, 256> kOrdinaryByte = [] {
  std::array<bool, 256> ordinary{};
  ordinary.fill(true);
  for (unsigned char c : {' ', '\n', '\t', '\r', '\f', ','}) ordinary[c] = false;
  for (unsigned char c : {0xC2, 0xEF, 0xE3, 0xD8}) ordinary[c] = false;
  return ordinary;
}();

}  // namespace

namespace collapse_internal {

Collapsed append_collapsed_portable(std::string_view text, std::string& out, bool space) {
  Collapsed result{space, 0, 0};
  for (std::size_t i = 0; i < text.size(); ++i) {
    // A run of ordinary bytes goes over whole, its characters counted by their first bytes.
    std::size_t run_end = i;
    while (run_end < text.size() && kOrdinaryByte[byte_at(text, run_end)]) ++run_end;
    if (run_end > i) {
      out.append(text, i, run_end - i);
      for (std::size_t k = i; k < run_end; ++k) result.chars += (byte_at(text, k) & 0xC0) != 0x80;
      result.space = false;
      i = run_end;
      if (i == text.size()) break;
    }
    const unsigned char c = byte_at(text, i);
    bool is_space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f';
    if (c == 0xC2 && i + 1 < text.size() && byte_at(text, i + 1) == 0xA0) {
      is_space = true;  // U+00A0 no-break space
      ++i;
    }
    if (is_space) {
      if (!result.space) {
        out += ' ';
        ++result.chars;
      }
      result.space = true;
      continue;
    }
    result.space = false;
    out += static_cast<char>(c);
    if ((c & 0xC0) != 0x80) ++result.chars;
    const auto next_are = [&](unsigned char b1, int b2) {
      return i + 1 < text.size() && byte_at(text, i + 1) == b1 &&
             (b2 < 0 || (i + 2 < text.size() && byte_at(text, i + 2) == b2));
    };
    if (c == ',' || (c == 0xEF && next_are(0xBC, 0x8C)) || (c == 0xE3 && next_are(0x80, 0x81)) ||
        (c == 0xD8 && next_are(0x8C, -1))) {
      ++result.commas;
    }
  }
  return result;
}

}  // namespace collapse_internal

#if defined(__x86_64__)
namespace {

NEARDUP_AVX512_LOOPS_BEGIN

#define NEARDUP_COLLAPSE_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi2,bmi2")))

// The mask of the first n (at most 64) bytes.
NEARDUP_COLLAPSE_TARGET inline __mmask64 first_bytes(std::size_t n) {
  return n >= 64 ? ~__mmask64{0} : _bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(n));
}

NEARDUP_COLLAPSE_TARGET inline __mmask64 equal(__m512i v, unsigned char c) {
  return _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(static_cast<char>(c)));
}

// 64 bytes a step, as masks: the whitespace to write as ' ', the bytes to drop (whitespace after
// whitespace, the A0 of a no-break space), the rest copied; kept bytes are packed with a
// compress and stored under a mask, so nothing is written past dst + text.size(). Returns the
// bytes written.
NEARDUP_COLLAPSE_TARGET std::size_t collapse_avx512(std::string_view text, char* dst,
                                                    Collapsed& result) {
  const std::size_t n = text.size();
  const char* p = text.data();
  std::size_t written = 0;
  std::uint64_t trail_in = 0;  // the A0 of a no-break space whose C2 ended the last step
  bool before_space = result.space;
  for (std::size_t i = 0; i < n; i += 64) {
    const std::size_t left = n - i;
    const __mmask64 in = first_bytes(left);
    // Bytes past the text load as zero, which matches none of the bytes looked for.
    const __m512i v = _mm512_maskz_loadu_epi8(in, p + i);
    const __m512i v1 = _mm512_maskz_loadu_epi8(first_bytes(left - 1), p + i + 1);
    const __m512i v2 = _mm512_maskz_loadu_epi8(left >= 2 ? first_bytes(left - 2) : 0, p + i + 2);
    const __mmask64 nbsp = equal(v, 0xC2) & equal(v1, 0xA0);
    const __mmask64 trail = (nbsp << 1) | trail_in;
    trail_in = nbsp >> 63;
    const __mmask64 white =
        (equal(v, ' ') | equal(v, '\t') | equal(v, '\n') | equal(v, '\r') | equal(v, '\f') | nbsp) &
        ~trail;
    const __mmask64 spacey = white | trail;
    const __mmask64 after_space = (spacey << 1) | (before_space ? 1 : 0);
    const __mmask64 keep = in & ~(trail | (white & after_space));
    const __m512i bytes = _mm512_mask_blend_epi8(white, v, _mm512_set1_epi8(' '));
    const __m512i packed = _mm512_maskz_compress_epi8(keep, bytes);
    const auto kept = static_cast<std::size_t>(std::popcount(keep));
    _mm512_mask_storeu_epi8(dst + written, first_bytes(kept), packed);
    written += kept;
    const __mmask64 continuation =
        _mm512_cmpeq_epi8_mask(_mm512_and_si512(v, _mm512_set1_epi8(static_cast<char>(0xC0))),
                               _mm512_set1_epi8(static_cast<char>(0x80)));
    result.chars += static_cast<std::uint32_t>(std::popcount(keep & ~continuation));
    const __mmask64 commas = equal(v, ',') | (equal(v, 0xEF) & equal(v1, 0xBC) & equal(v2, 0x8C)) |
                             (equal(v, 0xE3) & equal(v1, 0x80) & equal(v2, 0x81)) |
                             (equal(v, 0xD8) & equal(v1, 0x8C));
    result.commas += static_cast<std::uint32_t>(std::popcount(commas & in));
    before_space = (spacey >> (std::min<std::size_t>(left, 64) - 1)) & 1;
  }
  result.space = before_space;
  return written;
}

#undef NEARDUP_COLLAPSE_TARGET
NEARDUP_AVX512_LOOPS_END

}  // namespace

Collapsed append_collapsed(std::string_view text, std::string& out, bool space) {
  if (cpu_has_avx512_bytes()) {
    Collapsed result{space, 0, 0};
    const std::size_t old_size = out.size();
    out.resize_and_overwrite(old_size + text.size(), [&](char* dst, std::size_t) {
      return old_size + collapse_avx512(text, dst + old_size, result);
    });
    return result;
  }
  return collapse_internal::append_collapsed_portable(text, out, space);
}
#else
Collapsed append_collapsed(std::string_view text, std::string& out, bool space) {
  return collapse_internal::append_collapsed_portable(text, out, space);
}
#endif

}  // namespace neardup::denoise_internal
