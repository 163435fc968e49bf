// decode: raw page bytes -> UTF-8 text (DESIGN.md §2).
//
// Order: BOM; HTTP Content-Type charset; <meta charset> / http-equiv / XML declaration within
// decode.prescan_bytes; then uchardet when nothing is declared or the bytes contradict the
// declaration (the classic case: a legacy <meta> over valid UTF-8 bytes decodes as UTF-8).
// Labels are resolved through the WHATWG Encoding Standard alias table (gb2312 -> GBK,
// iso-8859-1 -> windows-1252, ...). Conversion with ICU; invalid sequences become U+FFFD.
// Pure: no I/O, no globals beyond ICU's own caches; safe on any number of threads.
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "config/config.h"
#include "pipeline/skip.h"

namespace neardup {

struct Decoded {
  std::string text;            // valid UTF-8, BOM removed
  std::string charset;         // canonical WHATWG name, lower case ("utf-8", "gbk", "windows-1251")
  std::string charset_source;  // bom | http | meta | xml | detected | default
};

// Decodes body bytes. content_type is the HTTP Content-Type value, or empty.
// Skips: empty_body (no bytes), not_text (binary content: NULs/control bytes outside UTF-16/32,
// or a non-text Content-Type such as image/png).
std::expected<Decoded, Skip> decode(std::string_view body, std::string_view content_type,
                                    const DecodeConfig& config);

// Resolves a charset label per the WHATWG alias table; returns the canonical lower-case
// name, or "" for an unknown label.
std::string canonical_charset(std::string_view label);

}  // namespace neardup
