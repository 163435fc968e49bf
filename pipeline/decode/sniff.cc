#include "pipeline/decode/sniff.h"

#include <array>
#include <bit>
#include <cstdint>

#include "common/cpu.h"

namespace neardup::decode_internal {
namespace {

unsigned char byte_at(std::string_view bytes, std::size_t i) {
  return static_cast<unsigned char>(bytes[i]);
}

// Whether every 4-byte unit is a Unicode scalar value in the given byte order.
bool well_formed_utf32(std::string_view sample, bool little_endian) {
  std::size_t units = sample.size() / 4;
  if (units < 2) return false;
  for (std::size_t i = 0; i < units; ++i) {
    std::uint32_t value = 0;
    for (int k = 0; k < 4; ++k) {
      int shift = little_endian ? 8 * k : 8 * (3 - k);
      value |= static_cast<std::uint32_t>(byte_at(sample, 4 * i + k)) << shift;
    }
    if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return false;
  }
  return true;
}

// Whether surrogates pair up (a truncated pair at the end of the sample is allowed).
bool well_formed_utf16(std::string_view sample, bool little_endian) {
  std::size_t units = sample.size() / 2;
  bool expect_low = false;
  for (std::size_t i = 0; i < units; ++i) {
    std::uint16_t unit = little_endian ? byte_at(sample, 2 * i) | byte_at(sample, 2 * i + 1) << 8
                                       : byte_at(sample, 2 * i) << 8 | byte_at(sample, 2 * i + 1);
    bool high = unit >= 0xD800 && unit <= 0xDBFF;
    bool low = unit >= 0xDC00 && unit <= 0xDFFF;
    if (expect_low != low) return false;
    expect_low = high;
  }
  return true;
}

// C0 controls other than \t \n \f \r SO SI ESC (which text has).
bool is_binary_control(unsigned char c) {
  return c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0C && c != 0x0D && c != 0x0E && c != 0x0F &&
         c != 0x1B;
}

#if defined(__x86_64__)
NEARDUP_AVX512_LOOPS_BEGIN
__attribute__((target("avx512f,avx512bw"))) inline __m512i byte(char c) {
  return _mm512_set1_epi8(c);
}

// 64 bytes a step (AVX-512 BW); the tail and other CPUs byte by byte.
__attribute__((target("avx512f,avx512bw"))) std::size_t count_controls_avx512(
    std::string_view bytes) {
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + 64 <= bytes.size(); i += 64) {
    const __m512i v = _mm512_loadu_si512(bytes.data() + i);
    const __mmask64 text =
        _mm512_cmpeq_epi8_mask(v, byte(0x09)) | _mm512_cmpeq_epi8_mask(v, byte(0x0A)) |
        _mm512_cmpeq_epi8_mask(v, byte(0x0C)) | _mm512_cmpeq_epi8_mask(v, byte(0x0D)) |
        _mm512_cmpeq_epi8_mask(v, byte(0x0E)) | _mm512_cmpeq_epi8_mask(v, byte(0x0F)) |
        _mm512_cmpeq_epi8_mask(v, byte(0x1B));
    count += static_cast<std::size_t>(std::popcount(_mm512_cmplt_epu8_mask(v, byte(0x20)) & ~text));
  }
  for (; i < bytes.size(); ++i) count += is_binary_control(static_cast<unsigned char>(bytes[i]));
  return count;
}
NEARDUP_AVX512_LOOPS_END
#endif

std::size_t count_controls(std::string_view bytes) {
#if defined(__x86_64__)
  if (cpu_has_avx512_bytes()) return count_controls_avx512(bytes);
#endif
  std::size_t count = 0;
  for (char c : bytes) count += is_binary_control(static_cast<unsigned char>(c));
  return count;
}

}  // namespace

std::optional<Bom> sniff_bom(std::string_view bytes) {
  if (bytes.starts_with("\xEF\xBB\xBF")) return Bom{"utf-8", 3};
  if (bytes.starts_with(std::string_view("\xFF\xFE\0\0", 4)) && bytes.size() % 4 == 0) {
    return Bom{"utf-32le", 4};
  }
  if (bytes.starts_with(std::string_view("\0\0\xFE\xFF", 4))) return Bom{"utf-32be", 4};
  if (bytes.starts_with("\xFF\xFE")) return Bom{"utf-16le", 2};
  if (bytes.starts_with("\xFE\xFF")) return Bom{"utf-16be", 2};
  return std::nullopt;
}

bool looks_binary(std::string_view sample) {
  static constexpr std::array<std::string_view, 9> kSignatures{"%PDF-",
                                                               "\x89PNG\r\n\x1A\n",
                                                               "GIF87a",
                                                               "GIF89a",
                                                               "\xFF\xD8\xFF",
                                                               "PK\x03\x04",
                                                               "\x1F\x8B\x08",
                                                               "BZh",
                                                               "7z\xBC\xAF\x27\x1C"};
  for (std::string_view signature : kSignatures) {
    if (sample.starts_with(signature)) return true;
  }
  return count_controls(sample) * 100 > sample.size();
}

std::optional<std::string_view> sniff_wide_unicode(std::string_view sample) {
  std::size_t zero_even = 0;
  std::size_t zero_odd = 0;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    if (sample[i] == '\0') ++(i % 2 == 0 ? zero_even : zero_odd);
  }
  // UTF-32 first: its ASCII ("A\0\0\0") also looks like UTF-16LE ("A", U+0000).
  if (zero_even + zero_odd >= sample.size() / 2) {
    std::string_view whole = sample.substr(0, sample.size() / 4 * 4);
    if (well_formed_utf32(whole, true)) return "utf-32le";
    if (well_formed_utf32(whole, false)) return "utf-32be";
  }
  // Text in UTF-16 has a zero high byte for every ASCII character (markup, spaces, digits), and
  // almost never a zero low byte.
  std::size_t units = sample.size() / 2;
  std::string_view whole = sample.substr(0, units * 2);
  if (zero_odd * 4 > units && zero_even * 8 < zero_odd && well_formed_utf16(whole, true)) {
    return "utf-16le";
  }
  if (zero_even * 4 > units && zero_odd * 8 < zero_even && well_formed_utf16(whole, false)) {
    return "utf-16be";
  }
  return std::nullopt;
}

}  // namespace neardup::decode_internal
