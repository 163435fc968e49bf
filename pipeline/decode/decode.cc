// PLACEHOLDER: replaced by the real decoder.
#include "pipeline/decode/decode.h"

namespace neardup {
std::string canonical_charset(std::string_view label) { return std::string(label); }
std::expected<Decoded, Skip> decode(std::string_view body, std::string_view, const DecodeConfig&) {
  if (body.empty()) return std::unexpected(Skip{"empty_body", ""});
  return Decoded{std::string(body), "utf-8", "default"};
}
}  // namespace neardup
