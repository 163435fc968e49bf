#include "common/base64.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "common/cpu.h"

namespace neardup {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> make_table() {
  std::array<std::int8_t, 256> table{};
  table.fill(-1);
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  }
  return table;
}
constexpr auto kTable = make_table();

// For each place in a quantum, a character's six bits already shifted to that place in the
// 24-bit group, or kBad (above the 24 bits) for a character outside the alphabet: a quantum is
// four loads and three ORs, and one compare tells whether all four were alphabet characters.
constexpr std::uint32_t kBad = 1u << 24;
constexpr std::array<std::array<std::uint32_t, 256>, 4> make_shifted() {
  std::array<std::array<std::uint32_t, 256>, 4> tables{};
  for (int place = 0; place < 4; ++place) {
    for (int c = 0; c < 256; ++c) {
      tables[place][c] =
          kTable[c] < 0 ? kBad : static_cast<std::uint32_t>(kTable[c]) << (18 - 6 * place);
    }
  }
  return tables;
}
constexpr auto kShifted = make_shifted();

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Decodes whole quanta of alphabet characters from in[i..] to out[o..] until one is not
// (or fewer than four characters are left). Writes one byte past the last three it decodes.
void decode_quanta(std::string_view in, std::size_t& i, char* out, std::size_t& o) {
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  for (; i + 4 <= in.size(); i += 4, o += 3) {
    const std::uint32_t v =
        kShifted[0][s[i]] | kShifted[1][s[i + 1]] | kShifted[2][s[i + 2]] | kShifted[3][s[i + 3]];
    if (v >= kBad) return;
    std::uint32_t bytes = v << 8;  // the three bytes first, in memory order
    if constexpr (std::endian::native == std::endian::little) bytes = __builtin_bswap32(bytes);
    std::memcpy(out + o, &bytes, 4);
  }
}

#if defined(__x86_64__)
NEARDUP_AVX512_LOOPS_BEGIN

// kTable's first 128 entries with 0x80 for a character outside the alphabet, as the two halves
// a byte permute reads, and the byte order that packs sixteen 24-bit groups into 48 bytes.
struct Base64Vectors {
  std::array<std::int8_t, 128> table;
  std::array<std::uint8_t, 64> pack;
};
constexpr Base64Vectors kVectors = [] {
  Base64Vectors v{};
  for (std::size_t c = 0; c < 128; ++c) v.table[c] = kTable[c] < 0 ? std::int8_t{-128} : kTable[c];
  for (std::size_t j = 0; j < 48; ++j)
    v.pack[j] = static_cast<std::uint8_t>(4 * (j / 3) + 2 - j % 3);
  return v;
}();

// 64 alphabet characters a step into 48 bytes (AVX-512 VBMI: a byte permute looks the
// characters up, two multiply-adds join each quantum's four six-bit values, a permute puts the
// three bytes of each in order), while a step holds only alphabet characters; what stops it
// goes to decode_quanta.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void decode_steps(std::string_view in,
                                                                         std::size_t& i, char* out,
                                                                         std::size_t& o) {
  const __m512i low = _mm512_loadu_si512(kVectors.table.data());
  const __m512i high = _mm512_loadu_si512(kVectors.table.data() + 64);
  const __m512i pack = _mm512_loadu_si512(kVectors.pack.data());
  for (; i + 64 <= in.size(); i += 64, o += 48) {
    const __m512i chars = _mm512_loadu_si512(in.data() + i);
    const __m512i values = _mm512_permutex2var_epi8(low, chars, high);
    if (_mm512_movepi8_mask(_mm512_or_si512(values, chars)) != 0) return;  // not all alphabet
    const __m512i pairs = _mm512_maddubs_epi16(values, _mm512_set1_epi32(0x01400140));
    const __m512i groups = _mm512_madd_epi16(pairs, _mm512_set1_epi32(0x00011000));
    _mm512_mask_storeu_epi8(out + o, (std::uint64_t{1} << 48) - 1,
                            _mm512_permutexvar_epi8(pack, groups));
  }
}

NEARDUP_AVX512_LOOPS_END
#endif

}  // namespace

std::expected<std::string, std::string> base64_decode(std::string_view input) {
  std::string error;
  std::string out;
  // Room for every quantum's three bytes plus the fourth that decode_quanta writes past them.
  out.resize_and_overwrite(input.size() / 4 * 3 + 4, [&](char* p, std::size_t) -> std::size_t {
    std::size_t o = 0;
    std::uint32_t buffer = 0;
    int bits = 0;
    std::size_t padding = 0;
    const std::size_t n = input.size();
    for (std::size_t i = 0; i < n;) {
      // Fast path: whole quanta at a quantum boundary.
      if (bits == 0 && padding == 0) {
        const std::size_t before = i;
#if defined(__x86_64__)
        if (cpu_has_avx512_bytes()) decode_steps(input, i, p, o);
#endif
        decode_quanta(input, i, p, o);
        if (i >= n) break;
        if (i != before) continue;
      }
      // Anything else (spaces, padding, a bad character, a quantum split by spaces): one at a
      // time.
      const char c = input[i];
      if (is_space(c)) {
        ++i;
        continue;
      }
      if (c == '=') {
        ++padding;
        ++i;
        continue;
      }
      const int value = kTable[static_cast<unsigned char>(c)];
      if (value < 0 || padding > 0) {
        error = "invalid base64 character at position " + std::to_string(i);
        return 0;
      }
      buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        p[o++] = static_cast<char>((buffer >> bits) & 0xFF);
      }
      ++i;
    }
    if (bits >= 6 || padding > 2) error = "truncated base64 input";
    return o;
  });
  if (!error.empty()) return std::unexpected(error);
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    std::uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                      (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                      static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace neardup
