#include "common/base64.h"

#include <array>
#include <cstdint>

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

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::expected<std::string, std::string> base64_decode(std::string_view input) {
  std::string out(input.size() / 4 * 3 + 3, '\0');
  std::size_t o = 0;
  std::uint32_t buffer = 0;
  int bits = 0;
  std::size_t padding = 0;
  const std::size_t n = input.size();
  for (std::size_t i = 0; i < n;) {
    // Fast path: four alphabet characters at a quantum boundary give three bytes.
    if (bits == 0 && padding == 0 && i + 4 <= n) {
      const int a = kTable[static_cast<unsigned char>(input[i])];
      const int b = kTable[static_cast<unsigned char>(input[i + 1])];
      const int c = kTable[static_cast<unsigned char>(input[i + 2])];
      const int d = kTable[static_cast<unsigned char>(input[i + 3])];
      if ((a | b | c | d) >= 0) {
        const std::uint32_t v = static_cast<std::uint32_t>(a << 18 | b << 12 | c << 6 | d);
        out[o++] = static_cast<char>(v >> 16);
        out[o++] = static_cast<char>(v >> 8);
        out[o++] = static_cast<char>(v);
        i += 4;
        continue;
      }
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
      return std::unexpected("invalid base64 character at position " + std::to_string(i));
    }
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = static_cast<char>((buffer >> bits) & 0xFF);
    }
    ++i;
  }
  if (bits >= 6 || padding > 2) return std::unexpected("truncated base64 input");
  out.resize(o);
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
