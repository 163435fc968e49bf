#include "pipeline/decode/charset.h"

#include <unicode/ucnv.h>

#include "common/ascii.h"
#include "common/encodings.h"
#include "pipeline/decode/convert.h"

namespace neardup::decode_internal {
namespace {

std::optional<Charset> from_encoding(const Encoding& encoding) {
  Charset charset{.name = std::string(encoding.name),
                  .converter = std::string(encoding.converter),
                  .family = std::string(encoding.family.empty() ? encoding.name : encoding.family),
                  .ascii_compatible = encoding.ascii_compatible};
  if (!charset.converter.empty() && !converter_available(charset.converter)) return std::nullopt;
  return charset;
}

// A label only ICU knows: named by its MIME or IANA name, else by ICU's converter name.
std::optional<Charset> from_icu(const std::string& label) {
  UErrorCode status = U_ZERO_ERROR;
  const char* converter = ucnv_getAlias(label.c_str(), 0, &status);
  if (U_FAILURE(status) || converter == nullptr || !converter_available(converter)) {
    return std::nullopt;
  }
  const char* name = nullptr;
  for (const char* standard : {"MIME", "IANA"}) {
    status = U_ZERO_ERROR;
    name = ucnv_getStandardName(converter, standard, &status);
    if (U_SUCCESS(status) && name != nullptr) break;
    name = nullptr;
  }
  std::string canonical =
      ascii_lowercase(trim_ascii_whitespace(name != nullptr ? name : converter));
  // An ICU alias of a WHATWG encoding (e.g. "cp936", "x-windows-949") takes the WHATWG entry.
  if (const Encoding* encoding = find_encoding(canonical)) return from_encoding(*encoding);
  return Charset{.name = canonical, .converter = converter, .family = canonical};
}

}  // namespace

std::optional<Charset> resolve_charset(std::string_view label) {
  std::string key = ascii_lowercase(trim_ascii_whitespace(label));
  if (key.empty()) return std::nullopt;
  if (const Encoding* encoding = find_encoding(key)) return from_encoding(*encoding);
  return from_icu(key);
}

std::optional<Charset> resolve_declared_charset(std::string_view label) {
  const Encoding* encoding = find_encoding(label);
  if (encoding == nullptr || !encoding->declarable) return std::nullopt;
  return from_encoding(*encoding);
}

std::optional<Charset> resolve_detected_charset(std::string_view uchardet_name) {
  std::string key = ascii_lowercase(trim_ascii_whitespace(uchardet_name));
  if (key.empty() || key == "ascii") return std::nullopt;
  // uchardet's names that are neither WHATWG labels nor ICU aliases.
  if (key == "uhc") return resolve_charset("euc-kr");
  if (key == "mac-cyrillic") return resolve_charset("x-mac-cyrillic");
  return resolve_charset(key);
}

}  // namespace neardup::decode_internal
