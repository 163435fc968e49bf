// Finding declared charsets: the HTTP Content-Type header and the document's own <meta> or XML
// declaration (the HTML Standard's "prescan a byte stream to determine its encoding").
#pragma once

#include <string>
#include <string_view>

namespace neardup::decode_internal {

struct MediaType {
  std::string type;     // "text/html", lower case; "" when the header is empty
  std::string charset;  // the charset parameter as written (quotes removed), or ""
};

// Parses a Content-Type value such as `text/html; charset="ISO-8859-1"`.
MediaType parse_content_type(std::string_view content_type);

// True for media types that are never text: image/*, audio/*, video/*, font/*, archives,
// application/octet-stream, application/pdf, ...
bool is_binary_media_type(std::string_view type);

struct Declaration {
  std::string label;   // the charset label as written, "" when none was found
  std::string source;  // "meta" or "xml"
};

// Scans the head of a document (callers pass the first decode.prescan_bytes bytes) for
// <meta charset=...> or <meta http-equiv="Content-Type" content="...charset=...">, with
// attributes in any order, case or quoting, skipping comments and other tags. A leading XML
// declaration's encoding="..." is the fallback when no <meta> declares a charset. Labels are
// returned unresolved, except that the first <meta> whose label a page may declare
// (resolve_declared_charset) wins.
Declaration prescan_declaration(std::string_view head);

// Extracts the charset from a meta content value ("text/html; charset=koi8-r"), or "".
std::string charset_from_meta_content(std::string_view content);

}  // namespace neardup::decode_internal
