#include "pipeline/denoise/denoise.h"

#include <chrono>

#include "common/ascii.h"
#include "pipeline/denoise/html_outline.h"
#include "pipeline/denoise/main_content.h"
#include "pipeline/denoise/notices.h"

namespace neardup {
namespace {

using denoise_internal::append_collapsed;
using denoise_internal::trim_trailing_space;

// The media type of a Content-Type value, e.g. "text/plain" of "Text/Plain; charset=utf-8".
bool is_plain_text(std::string_view content_type) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  return ascii_iequals(type, "text/plain");
}

// Plain text: every non-blank line is a paragraph.
std::vector<std::string> plain_text_paragraphs(std::string_view text) {
  std::vector<std::string> paragraphs;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string line;
    append_collapsed(text.substr(0, nl), line);
    trim_trailing_space(line);
    if (!line.empty()) paragraphs.push_back(std::move(line));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return paragraphs;
}

void fall_back(MainText& result, const denoise_internal::Outline& outline, std::string reason) {
  result.paragraphs = denoise_internal::all_visible_paragraphs(outline);
  result.fell_back = true;
  result.fallback_reason = std::move(reason);
}

}  // namespace

MainText denoise(std::string_view utf8_html, std::string_view content_type,
                 const DenoiseConfig& config) {
  MainText result;
  if (is_plain_text(content_type)) {
    result.paragraphs = plain_text_paragraphs(utf8_html);
    return result;
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(config.max_millis);
  const denoise_internal::Outline outline =
      denoise_internal::parse_outline(utf8_html, config.max_nodes, deadline);
  result.title = !outline.title.empty()      ? outline.title
                 : !outline.og_title.empty() ? outline.og_title
                                             : outline.first_h1;
  if (outline.runs.empty()) return result;  // nothing visible: nothing to fall back to either
  if (outline.over_max_nodes) {
    fall_back(result, outline, "max_nodes");
  } else if (outline.timed_out) {
    fall_back(result, outline, "max_millis");
  } else if (config.mode == DenoiseMode::kAllText) {
    fall_back(result, outline, "mode");
  } else {
    denoise_internal::MainContentError error{};
    auto paragraphs = denoise_internal::find_main_content(outline, deadline, error);
    if (paragraphs) {
      denoise_internal::drop_notices(*paragraphs);
      result.paragraphs = std::move(*paragraphs);
    } else {
      fall_back(
          result, outline,
          error == denoise_internal::MainContentError::kDeadline ? "max_millis" : "no_main_block");
    }
  }
  return result;
}

std::string joined_text(const MainText& main_text) {
  std::size_t size = 0;
  for (const auto& p : main_text.paragraphs) size += p.size() + 1;
  std::string out;
  out.reserve(size);
  for (const auto& p : main_text.paragraphs) {
    if (!out.empty()) out += '\n';
    out += p;
  }
  return out;
}

}  // namespace neardup
