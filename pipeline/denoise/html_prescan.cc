#include "pipeline/denoise/html_prescan.h"

#include <cstring>

namespace neardup::denoise_internal {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool is_alpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

bool equals_lower(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((text[i] | 0x20) != lower[i]) return false;
  }
  return true;
}

// Position of the first case-insensitive "</name" at or after `from`, or text.size().
std::size_t find_end_tag(std::string_view text, std::size_t from, std::string_view name) {
  while (from < text.size()) {
    const void* lt = std::memchr(text.data() + from, '<', text.size() - from);
    if (lt == nullptr) break;
    const std::size_t at = static_cast<const char*>(lt) - text.data();
    if (at + 2 + name.size() <= text.size() && text[at + 1] == '/' &&
        equals_lower(text.substr(at + 2, name.size()), name)) {
      return at;
    }
    from = at + 1;
  }
  return text.size();
}

// A start tag beginning at html[lt] ('<' followed by a letter).
struct StartTag {
  std::string_view name;
  std::size_t end = 0;      // one past its '>' (or the end of the input)
  std::size_t cut = 0;      // where attribute kMaxAttributes + 1 starts; 0: none dropped
  bool closed = false;      // ended by '>'
};

StartTag scan_start_tag(std::string_view html, std::size_t lt) {
  const std::size_t n = html.size();
  StartTag tag;
  std::size_t p = lt + 1;
  while (p < n && !is_space(html[p]) && html[p] != '/' && html[p] != '>') ++p;
  tag.name = html.substr(lt + 1, p - lt - 1);
  std::size_t attributes = 0;
  while (p < n) {
    while (p < n && (is_space(html[p]) || html[p] == '/')) ++p;
    if (p >= n) break;
    if (html[p] == '>') {
      tag.closed = true;
      ++p;
      break;
    }
    if (++attributes == kMaxAttributes + 1) tag.cut = p;
    while (p < n && !is_space(html[p]) && html[p] != '>' && html[p] != '/' && html[p] != '=') {
      ++p;
    }
    while (p < n && is_space(html[p])) ++p;
    if (p < n && html[p] == '=') {
      ++p;
      while (p < n && is_space(html[p])) ++p;
      if (p < n && (html[p] == '"' || html[p] == '\'')) {
        const std::size_t close = html.find(html[p], p + 1);
        p = close == std::string_view::npos ? n : close + 1;
      } else {
        while (p < n && !is_space(html[p]) && html[p] != '>') ++p;
      }
    }
  }
  tag.end = p;
  return tag;
}

}  // namespace

std::string_view prescan_html(std::string_view html, std::string& out) {
  const std::size_t n = html.size();
  std::size_t copied = 0;  // html[0, copied) is in out (once anything was dropped)
  bool dropped = false;
  auto drop = [&](std::size_t from, std::size_t to) {  // html[from, to) is left out
    if (!dropped) {
      out.clear();
      out.reserve(n);
      dropped = true;
    }
    out.append(html.substr(copied, from - copied));
    copied = to;
  };
  std::size_t i = 0;
  while (i < n) {
    const void* found = std::memchr(html.data() + i, '<', n - i);
    if (found == nullptr) break;
    const std::size_t lt = static_cast<const char*>(found) - html.data();
    if (html.substr(lt, 4) == "<!--") {
      const std::size_t close = html.find("-->", lt + 4);
      i = close == std::string_view::npos ? n : close + 3;
      continue;
    }
    if (lt + 1 >= n || !is_alpha(html[lt + 1])) {
      i = lt + 1;
      continue;
    }
    StartTag tag = scan_start_tag(html, lt);
    if (tag.cut != 0) {
      drop(tag.cut, tag.closed ? tag.end - 1 : tag.end);  // keeps the '>'
    }
    i = tag.end;
    const bool script = equals_lower(tag.name, "script");
    if (tag.closed && (script || equals_lower(tag.name, "style"))) {
      const std::size_t close = find_end_tag(html, tag.end, script ? "script" : "style");
      if (close > tag.end) drop(tag.end, close);
      i = close;
    }
  }
  if (!dropped) return html;
  out.append(html.substr(copied));
  return out;
}

}  // namespace neardup::denoise_internal
