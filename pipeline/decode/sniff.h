// Byte-level sniffing that needs no charset: byte order marks, binary content, and UTF-16/32
// without a BOM (recognised by where the zero bytes fall).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace neardup::decode_internal {

struct Bom {
  std::string_view charset;  // "utf-8", "utf-16le", "utf-16be", "utf-32le", "utf-32be"
  std::size_t length;        // bytes to strip
};

// The BOM at the start of bytes. FF FE 00 00 is read as UTF-32LE (checked before UTF-16LE)
// when the length is a multiple of 4; the WHATWG standard, which has no UTF-32, would read it as
// UTF-16LE followed by U+0000.
std::optional<Bom> sniff_bom(std::string_view bytes);

// True when the sample looks like binary data rather than text in any ASCII-compatible charset:
// a known binary file signature, or more than 1% of bytes that no text charset uses (controls
// 00-08, 0B, 10-1A, 1C-1F; SO 0E, SI 0F and ESC 1B are excluded since ISO-2022 uses them).
bool looks_binary(std::string_view sample);

// "utf-16le", "utf-16be", "utf-32le" or "utf-32be" when the sample has zero bytes in the places
// that UTF-16/32 text puts them and is well-formed in that encoding; nullopt otherwise.
std::optional<std::string_view> sniff_wide_unicode(std::string_view sample);

}  // namespace neardup::decode_internal
