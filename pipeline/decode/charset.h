// Charset labels -> the charsets decode converts from.
//
// Labels resolve through the WHATWG Encoding Standard's alias table first ("gb2312" -> gbk,
// "latin1" -> windows-1252, "x-sjis" -> shift_jis), then through ICU's own alias table for the
// few labels the web standard lacks (IBM855, MAC-CENTRALEUROPE, EUC-TW). Each charset names the
// ICU converter that decodes it the way browsers do, measured against real pages: shift_jis uses
// windows-31j (NEC/IBM extensions), euc-kr uses windows-949 (UHC), big5 uses Big5-HKSCS, gbk uses
// gb18030 (the WHATWG gbk decoder is the gb18030 decoder).
//
// A page's own declaration (HTTP Content-Type, <meta>, XML declaration) is believed only for the
// labels a browser decodes with: resolve_declared_charset. The standard's "replacement" labels
// (iso-2022-kr, iso-2022-cn, hz-gb-2312), x-user-defined, UTF-32 and labels outside the standard
// (utf-7, ibm855, ...) count as no declaration, and the bytes decide. Detection may still name
// such a charset from the bytes themselves (ISO-2022-KR escapes, an IBM855 page), and then it is
// decoded with ICU's converter; a detected x-user-defined does not occur.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace neardup::decode_internal {

struct Charset {
  std::string name;       // canonical lower-case name: "utf-8", "gbk", "windows-1251", "ibm855"
  std::string converter;  // ICU converter name ("" for utf-8, which has its own fast path)
  // Charsets of one family are variants or supersets of one another (gbk/gb18030,
  // windows-1252/iso-8859-15, iso-8859-2/windows-1250): detection never overrules a label for a
  // member of its own family.
  std::string family;
  // ASCII bytes decode to themselves (false for UTF-16/32, ISO-2022, HZ and non-WHATWG charsets).
  bool ascii_compatible = false;

  bool is_utf8() const { return name == "utf-8"; }
  // UTF-16LE/BE or UTF-32LE/BE.
  bool is_wide() const { return name.starts_with("utf-16") || name.starts_with("utf-32"); }
};

// Resolves a label (any case, surrounding ASCII whitespace ignored). Returns nullopt for a label
// neither table knows, or whose ICU converter cannot be opened (e.g. iso-8859-16).
std::optional<Charset> resolve_charset(std::string_view label);

// Resolves a label a page declares: a WHATWG label of an encoding a browser decodes a declared
// page with (see the top of this file); nullopt for any other label.
std::optional<Charset> resolve_declared_charset(std::string_view label);

// Resolves the names uchardet 0.0.7 reports ("UHC", "MAC-CYRILLIC", "WINDOWS-1251", ...).
// "ASCII", "" and unknown names give nullopt.
std::optional<Charset> resolve_detected_charset(std::string_view uchardet_name);

}  // namespace neardup::decode_internal
