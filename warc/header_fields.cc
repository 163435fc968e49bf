#include "warc/header_fields.h"

#include "common/ascii.h"
#include "warc/warc_entry.h"

namespace neardup::warc {

std::string_view trim(std::string_view s) { return trim_ascii_whitespace(s); }

std::string_view Headers::get(std::string_view name) const {
  for (const auto& [key, value] : fields) {
    if (ascii_iequals(key, name)) return value;
  }
  return {};
}

std::optional<std::size_t> read_headers(std::string_view text, std::size_t pos, Headers& headers,
                                        bool& too_large) {
  too_large = text.size() - pos > kMaxHeaderBytes;
  text = text.substr(0, pos + kMaxHeaderBytes);
  for (std::size_t lines = 0;; ++lines) {
    const std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) return std::nullopt;
    std::string_view line = text.substr(pos, eol - pos);
    if (line.ends_with('\r')) line.remove_suffix(1);
    pos = eol + 1;
    if (line.empty()) {
      too_large = false;
      return pos;
    }
    if (lines == kMaxHeaderLines) {
      too_large = true;
      return std::nullopt;
    }
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      headers.fields.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
  }
}

}  // namespace neardup::warc
