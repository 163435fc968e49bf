// html_prescan: a linear pass over HTML before libxml2 parses it, so that the parser does less
// work and nothing quadratic.
//
//   std::string scratch;                                  // reused across pages
//   std::string_view lighter = prescan_html(html, scratch);
//   parse(lighter);                                       // same outline as parse(html)
//
// - The bodies of <script> and <style> elements are dropped (the tags are kept): libxml2 would
//   hand them over byte by byte only for the outline to ignore them. A body ends at the first
//   case-insensitive "</script" ("</style"), as in libxml2's HTML parser; an unclosed one runs
//   to the end of the input, as there.
// - A start tag keeps its first kMaxAttributes attributes: libxml2 compares each attribute's
//   name with every earlier one, so an element with N attributes costs O(N^2) (a million
//   attributes: minutes).
// Everything else — text, comments, other tags, malformed markup — is copied byte for byte.
// Pure; O(input) time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace neardup::denoise_internal {

inline constexpr std::size_t kMaxAttributes = 128;

// The prescanned HTML: a view of `html` itself when nothing was dropped, else of `out` (whose
// previous contents are replaced).
std::string_view prescan_html(std::string_view html, std::string& out);

}  // namespace neardup::denoise_internal
