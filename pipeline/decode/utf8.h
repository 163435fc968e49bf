// UTF-8 validation and repair without ICU: the fast path for the common page.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace neardup::decode_internal {

struct Utf8Scan {
  std::size_t multibyte = 0;  // well-formed sequences of 2-4 bytes
  std::size_t invalid = 0;    // ill-formed subparts (each would become one U+FFFD)
  bool valid() const { return invalid == 0; }
  bool ascii() const { return multibyte == 0 && invalid == 0; }
};

// Counts well-formed multi-byte sequences and ill-formed subparts (Unicode's "maximal subpart"
// rule, as the WHATWG UTF-8 decoder uses). Runs of ASCII are skipped 8 bytes at a time. Stops
// early, with partial counts, once kClearlyNotUtf8 ill-formed subparts outnumber the
// well-formed sequences 1 to 20: the bytes are then in some other charset. Valid UTF-8 is
// counted without decoding it (simdjson's validator, then the lead bytes).
inline constexpr std::size_t kClearlyNotUtf8 = 256;
Utf8Scan scan_utf8(std::string_view bytes);

// scan_utf8 a sequence at a time, whatever the bytes: what scan_utf8 must equal.
Utf8Scan scan_utf8_bytewise(std::string_view bytes);

// Returns bytes with every ill-formed subpart replaced by U+FFFD.
std::string repair_utf8(std::string_view bytes);

// Offset of the first byte >= 0x80 or ESC (which starts ISO-2022 shifts), or bytes.size().
std::size_t first_non_ascii(std::string_view bytes);

}  // namespace neardup::decode_internal
