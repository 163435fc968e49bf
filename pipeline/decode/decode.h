// decode: raw page bytes -> UTF-8 text (docs/README.md).
//
// Order: BOM (UTF-8, UTF-16LE/BE, and UTF-32LE/BE, which the WHATWG standard lacks); the HTTP
// Content-Type charset; <meta charset> / http-equiv / XML declaration within
// decode.prescan_bytes (the HTML Standard's prescan; a <meta> naming UTF-16 means UTF-8); then
// detection. Detection decides when nothing is declared (UTF-8 if the bytes are UTF-8, UTF-16/32
// by the position of zero bytes, else uchardet over a bounded window) and when the bytes
// contradict the declaration: a legacy label over valid UTF-8 with non-ASCII text decodes as
// UTF-8, and a label whose decoding looks like mojibake gives way to uchardet's charset when
// that decodes far more plausibly and is not of the label's own family (gb2312 over GBK bytes
// or iso-8859-1 over windows-1252 bytes stays with the label). A declared label counts only when
// it is a WHATWG Encoding Standard label a browser decodes with (gb2312 -> gbk, iso-8859-1 ->
// windows-1252, ...); utf-7, utf-32, x-user-defined, the "replacement" labels (iso-2022-kr,
// hz-gb-2312) and labels outside the standard count as no declaration. uchardet's names resolve
// through the same table, then ICU's aliases (IBM855). Conversion with ICU; valid UTF-8 is copied
// without it. Invalid sequences become U+FFFD, never an error.
//
// decode.detect = false trusts declarations fully and uses decode.default_charset for
// undeclared pages. Pure: no I/O; ICU converters and the uchardet detector are cached per
// thread, so decode is safe on any number of threads.
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "config/config.h"
#include "pipeline/skip.h"

namespace neardup {

struct Decoded {
  std::string text;  // valid UTF-8, BOM removed
  // Canonical lower-case name: WHATWG ("utf-8", "gbk", "windows-1251", "shift_jis"), or
  // "utf-32le"/"utf-32be", or ICU's MIME/IANA name for charsets outside WHATWG ("ibm855").
  std::string charset;
  std::string charset_source;  // bom | http | meta | xml | detected | default
};

// Decodes body bytes. content_type is the HTTP Content-Type value, or empty.
// Skips: empty_body (no bytes), not_text (binary content: NULs/control bytes outside UTF-16/32,
// or a non-text Content-Type such as image/png).
std::expected<Decoded, Skip> decode(std::string_view body, std::string_view content_type,
                                    const DecodeConfig& config);

// Resolves a charset label per the WHATWG alias table, then ICU's; returns the canonical
// lower-case name, or "" for a label that is unknown or that ICU cannot decode (iso-8859-16).
std::string canonical_charset(std::string_view label);

}  // namespace neardup
