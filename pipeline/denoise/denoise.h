// denoise: UTF-8 HTML -> the page's main text and title (docs/README.md).
//
// Parses with libxml2's HTML parser in SAX mode (never regex; any <meta charset> is ignored:
// the input is UTF-8), drops script/style/noscript/template/svg/iframe and hidden elements
// (hidden, aria-hidden="true", display:none, visibility:hidden), drops nav/header/footer/aside/
// form/button/select and class/id-named chrome (menus, comments, share bars, related links,
// cookie banners, captions and photo credits...) unless such an element holds most of the
// page's prose, then scores paragraphs and their containers Readability-style (main_content.h)
// and keeps the main content, less teasers for other pages and the site's rights notices and
// credit lines (notices.h). Paragraphs follow block boundaries (p, div, li, td, br, ...),
// whitespace collapsed.
// Past denoise.max_nodes elements or denoise.max_millis it falls back to all visible text
// and says so. Non-HTML input (text/plain) passes through, one paragraph per non-blank line.
// Pure: safe on any number of threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace neardup {

struct MainText {
  std::string title;
  std::vector<std::string> paragraphs;  // in document order, whitespace-normalised, non-empty
  bool fell_back = false;               // true: all visible text was used (see fallback_reason)
  std::string fallback_reason;          // max_nodes | max_millis | mode | no_main_block
                                        // (max_millis: the text parsed before the deadline)
};

// Extracts the main text. content_type is the HTTP Content-Type value or empty; a text/plain
// type bypasses HTML parsing. The title is <title>, else og:title, else the first <h1>; it is
// never part of the paragraphs. Input with no visible text gives no paragraphs and no
// fallback.
MainText denoise(std::string_view utf8_html, std::string_view content_type,
                 const DenoiseConfig& config);

// The paragraphs joined with '\n' (the `text` of `neardup extract`).
std::string joined_text(const MainText& main_text);

}  // namespace neardup
