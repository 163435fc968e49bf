// html_prescan: a linear pass over HTML before libxml2 parses it, so that the parser does less
// work and nothing quadratic.
//
//   std::string scratch;                                  // reused across pages
//   std::string_view lighter = prescan_html(html, scratch);
//   parse(lighter);                                       // same outline as parse(html)
//
// Measured: the outline with and without the prescan is the same on every evaluation page and
// on random tag soup (html_prescan_test.cc); see pipeline/denoise/MEASUREMENTS.md.
//
// - The bodies of <script> and <style> elements are dropped (the tags are kept): libxml2 would
//   hand them over byte by byte only for the outline to ignore them. A body ends at the first
//   case-insensitive "</script" ("</style"), as in libxml2's HTML parser; an unclosed one runs
//   to the end of the input, as there.
// - A start tag keeps its first kMaxAttributes attributes: libxml2 compares each attribute's
//   name with every earlier one, so an element with N attributes costs O(N^2) (a million
//   attributes: minutes).
// - Attributes the outline never reads (all but kOutlineAttributes, html_outline.h: id, class,
//   role and a few more; every attribute of <meta> is kept) are left out of start tags, which are
//   most of what libxml2 still parses once script bodies are gone (href, src, srcset, data-*,
//   inline handlers: a third of the bytes of typical pages). Only where libxml2 is sure to read
//   the tag exactly as this scan does: well-formed names after blanks, closed quotes, no '\f',
//   NUL or stray '/', and only while every tag, end tag, comment and doctype before it was
//   well-formed (after anything else the two could disagree on where a tag is, and this stops).
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
