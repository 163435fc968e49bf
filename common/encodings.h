// The encodings a page can be in (https://encoding.spec.whatwg.org/#names-and-labels): each
// WHATWG encoding's name and labels, the ICU converter that decodes it the way browsers do, its
// family, and whether a page may declare it. One table for the decoder
// (pipeline/decode/charset.h) and the config (decode.default_charset).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace neardup {

struct Encoding {
  std::string_view name;       // canonical, lower-case: "utf-8", "gbk", "windows-1251"
  std::string_view converter;  // ICU's converter ("" for utf-8, which has its own fast path)
  std::string_view family;     // empty: the family is the name itself (charset.h, Charset)
  bool ascii_compatible;
  std::string_view labels;  // space-separated WHATWG labels
  // A page may declare it: false for the WHATWG "replacement" encodings, x-user-defined and
  // UTF-32, which no browser decodes a declared page with (nor is any a usable default).
  bool declarable = true;
};

// Every encoding of the table, in the standard's order (then UTF-32, which it lacks).
std::span<const Encoding> encodings();

// The encoding a label names (ASCII case-insensitive, surrounding ASCII whitespace ignored), or
// null for a label the table does not have.
const Encoding* find_encoding(std::string_view label);

}  // namespace neardup
