// Header fields "Name: value", one a line (CRLF or LF), as WARC records and HTTP responses write
// them, read within kMaxHeaderBytes and kMaxHeaderLines (warc_entry.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace neardup::warc {

// Header names and values: ASCII case-insensitive, surrounding whitespace ignored.
std::string_view trim(std::string_view s);

// Header fields "Name: value", one a line (CRLF or LF), as in WARC and HTTP headers.
struct Headers {
  std::vector<std::pair<std::string_view, std::string_view>> fields;

  // The first field named `name` (any case), trimmed; empty when absent.
  std::string_view get(std::string_view name) const;
};

// Reads header lines of `text` from `pos` up to the empty line that ends them, within
// kMaxHeaderBytes and kMaxHeaderLines. Returns the offset just past that line; nullopt when it
// is not there: `too_large` then says whether the bounds were passed (else `text` ends first).
std::optional<std::size_t> read_headers(std::string_view text, std::size_t pos, Headers& headers,
                                        bool& too_large);

}  // namespace neardup::warc
