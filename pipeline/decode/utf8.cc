#include "pipeline/decode/utf8.h"

#include <simdjson.h>

#include <cstdint>
#include <cstring>

namespace neardup::decode_internal {
namespace {

constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

// Length of the next sequence at p (p < end, *p >= 0x80), and whether it is well-formed. An
// ill-formed subpart ends before the first byte that cannot continue it (Unicode 15, §3.9 D93b).
std::size_t next_sequence(const unsigned char* p, const unsigned char* end, bool* well_formed) {
  unsigned char lead = p[0];
  std::size_t need;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    *well_formed = false;
    return 1;
  }
  std::size_t length = 1;
  for (std::size_t i = 0; i < need; ++i, ++length) {
    if (p + length >= end || p[length] < low || p[length] > high) {
      *well_formed = false;
      return length;
    }
    low = 0x80;
    high = 0xBF;
  }
  *well_formed = true;
  return length;
}

// Advances p past ASCII bytes, 8 at a time.
const unsigned char* skip_ascii(const unsigned char* p, const unsigned char* end) {
  while (end - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    if (word & kHighBits) break;
    p += 8;
  }
  while (p < end && *p < 0x80) ++p;
  return p;
}

}  // namespace

Utf8Scan scan_utf8(std::string_view bytes) {
  // Most pages are valid UTF-8, which simdjson's validator confirms at memory speed; then each
  // sequence is well-formed and begins with its one byte >= 0xC0.
  if (simdjson::validate_utf8(bytes.data(), bytes.size())) {
    Utf8Scan scan;
    for (const char c : bytes) scan.multibyte += static_cast<unsigned char>(c) >= 0xC0;
    return scan;
  }
  return scan_utf8_bytewise(bytes);
}

Utf8Scan scan_utf8_bytewise(std::string_view bytes) {
  Utf8Scan scan;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto* end = p + bytes.size();
  while ((p = skip_ascii(p, end)) < end) {
    bool well_formed;
    p += next_sequence(p, end, &well_formed);
    ++(well_formed ? scan.multibyte : scan.invalid);
    if (scan.invalid >= kClearlyNotUtf8 && scan.invalid * 20 > scan.multibyte) break;
  }
  return scan;
}

std::string repair_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + 16);
  const auto* begin = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto* p = begin;
  const auto* end = p + bytes.size();
  const auto* copied = p;  // bytes before this are in out
  while ((p = skip_ascii(p, end)) < end) {
    bool well_formed;
    std::size_t length = next_sequence(p, end, &well_formed);
    if (!well_formed) {
      out.append(bytes.data() + (copied - begin), static_cast<std::size_t>(p - copied));
      out.append("\xEF\xBF\xBD");
      copied = p + length;
    }
    p += length;
  }
  out.append(bytes.data() + (copied - begin), static_cast<std::size_t>(end - copied));
  return out;
}

std::size_t first_non_ascii(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    auto byte = static_cast<unsigned char>(bytes[i]);
    if (byte >= 0x80 || byte == 0x1B) return i;
  }
  return bytes.size();
}

}  // namespace neardup::decode_internal
