// Base64 (RFC 4648, standard alphabet) for body_base64 fields.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace neardup {

// Decodes standard base64; whitespace is ignored, padding optional. The error names the first
// bad character's position.
std::expected<std::string, std::string> base64_decode(std::string_view input);

std::string base64_encode(std::string_view bytes);

}  // namespace neardup
