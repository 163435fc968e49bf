// denoise: UTF-8 HTML -> the page's main text and title (DESIGN.md §2).
//
// Parses with libxml2's HTML parser (never regex), drops script/style/template/nav/header/
// footer/aside/form and hidden elements, scores text blocks by text and link density and keeps
// the main content. Past denoise.max_nodes or denoise.max_millis it falls back to all visible
// text and says so. Non-HTML input (text/plain) passes through as paragraphs.
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
};

// Extracts the main text. content_type is the HTTP Content-Type value or empty; a text/plain
// type bypasses HTML parsing.
MainText denoise(std::string_view utf8_html, std::string_view content_type,
                 const DenoiseConfig& config);

// The paragraphs joined with '\n' (the `text` of `neardup extract`).
std::string joined_text(const MainText& main_text);

}  // namespace neardup
