#include "pipeline/denoise/html_prescan.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "common/ascii.h"
#include "pipeline/denoise/html_outline.h"

namespace neardup::denoise_internal {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool is_alpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

bool equals_lower(std::string_view text, std::string_view lower) {
  return ascii_iequals(text, lower);
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

// libxml2's blank (IS_BLANK_CH): unlike is_space, not '\f'.
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool all_blank(std::string_view s) { return std::all_of(s.begin(), s.end(), is_blank); }

// Where libxml2's htmlParseHTMLName reads a name from: an ASCII letter, '_', ':' or '.'.
bool is_name_start(char c) { return is_alpha(c) || c == '_' || c == ':' || c == '.'; }

// True when libxml2's HTML parser reads all of `name` as one attribute name (htmlParseHTMLName:
// a name start, then letters, digits, ':', '-', '_', '.'; under 100 bytes).
bool is_html_name(std::string_view name) {
  if (name.empty() || name.size() >= 100 || !is_name_start(name[0])) return false;
  for (char c : name) {
    if (!is_alpha(c) && !(c >= '0' && c <= '9') && c != ':' && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

bool is_read_attribute(std::string_view name) {
  return std::ranges::any_of(kOutlineAttributes,
                             [&](std::string_view read) { return equals_lower(name, read); });
}

// A start tag beginning at html[lt] ('<' followed by a letter).
struct StartTag {
  std::string_view name;
  std::size_t end = 0;      // one past its '>' (or the end of the input)
  std::size_t cut = 0;      // where attribute kMaxAttributes + 1 starts; 0: none dropped
  bool closed = false;      // ended by '>'
  bool clean = false;       // read by libxml2 exactly as scanned (below)
};

// Scans the tag. `unread` receives, in order, the [from, to) ranges of the attributes that the
// outline never reads, when libxml2 reads the tag exactly as this scan does, so that leaving
// them out changes nothing else: the tag is closed by '>' (or "/>"); its name and every
// attribute name are names libxml2 reads whole; each attribute follows a blank; a value is
// quoted and closed, or unquoted and not empty; and the tag holds no '\f' or NUL, no '/'
// other than a final "/>", and no more than kMaxAttributes attributes. Otherwise (libxml2's
// recovery from malformed markup may read the tag otherwise) `unread` is left empty.
StartTag scan_start_tag(std::string_view html, std::size_t lt,
                        std::vector<std::pair<std::size_t, std::size_t>>& unread) {
  const std::size_t n = html.size();
  unread.clear();
  StartTag tag;
  std::size_t p = lt + 1;
  while (p < n && !is_space(html[p]) && html[p] != '/' && html[p] != '>') ++p;
  tag.name = html.substr(lt + 1, p - lt - 1);
  const bool keep_all = equals_lower(tag.name, "meta");  // og:title and the charset
  bool clean = is_html_name(tag.name);
  std::size_t attributes = 0;
  while (p < n) {
    const std::size_t gap = p;
    while (p < n && (is_space(html[p]) || html[p] == '/')) ++p;
    if (p >= n) break;
    const std::string_view blanks = html.substr(gap, p - gap);
    if (html[p] == '>') {
      tag.closed = true;
      clean = clean && (all_blank(blanks) ||
                        (blanks.back() == '/' && all_blank(blanks.substr(0, blanks.size() - 1))));
      ++p;
      break;
    }
    if (++attributes == kMaxAttributes + 1) tag.cut = p;
    clean = clean && !blanks.empty() && all_blank(blanks);
    const std::size_t start = p;
    while (p < n && !is_space(html[p]) && html[p] != '>' && html[p] != '/' && html[p] != '=') {
      ++p;
    }
    const std::string_view name = html.substr(start, p - start);
    clean = clean && is_html_name(name);
    while (p < n && is_space(html[p])) ++p;
    if (p < n && html[p] == '=') {
      ++p;
      while (p < n && is_space(html[p])) ++p;
      if (p < n && (html[p] == '"' || html[p] == '\'')) {
        const std::size_t close = html.find(html[p], p + 1);
        clean = clean && close != std::string_view::npos;
        p = close == std::string_view::npos ? n : close + 1;
      } else {
        const std::size_t value = p;
        while (p < n && !is_space(html[p]) && html[p] != '>') ++p;
        clean = clean && p > value;
      }
    } else {
      p = start + name.size();  // no value: the blanks after the name are the next gap
    }
    if (!keep_all && !is_read_attribute(name)) unread.emplace_back(start, p);
  }
  tag.end = p;
  const std::string_view whole = html.substr(lt, p - lt);
  tag.clean = clean && tag.closed && tag.cut == 0 && whole.find('\f') == whole.npos &&
              whole.find('\0') == whole.npos;
  if (!tag.clean) unread.clear();
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
  std::vector<std::pair<std::size_t, std::size_t>> unread;
  // Unread attributes are left out only while every construct so far was read the way libxml2
  // reads it: after anything else the two could disagree on where a tag is.
  bool in_step = true;
  std::size_t i = 0;
  while (i < n) {
    const void* found = std::memchr(html.data() + i, '<', n - i);
    if (found == nullptr) break;
    const std::size_t lt = static_cast<const char*>(found) - html.data();
    if (html.substr(lt, 4) == "<!--") {
      const std::size_t close = html.find("-->", lt + 4);
      // libxml2's readings of "<!-->", "<!--->" and "--!>" have changed between versions.
      const std::string_view body =
          html.substr(lt + 4, close == html.npos ? html.npos : close - lt - 4);
      if (body.empty() || body == "-" || body.find("--!>") != body.npos) in_step = false;
      i = close == std::string_view::npos ? n : close + 3;
      continue;
    }
    const char next = lt + 1 < n ? html[lt + 1] : '\0';
    if (next == '/') {
      // An end tag: libxml2 reads a name, then skips to the first '>'; without a name, "</" is
      // text.
      const char first = lt + 2 < n ? html[lt + 2] : '\0';
      if (is_name_start(first)) {
        const std::size_t gt = html.find('>', lt + 2);
        i = gt == std::string_view::npos ? n : gt + 1;
      } else {
        i = lt + 2;
      }
      continue;
    }
    if (next == '!' || next == '?') {
      // A doctype without quoted literals ends at its first '>'; anything else (quoted
      // identifiers, processing instructions, bogus comments) may not.
      const std::size_t gt = html.find('>', lt + 2);
      const std::string_view decl = html.substr(lt, gt == html.npos ? html.npos : gt - lt);
      if (next == '!' && decl.size() >= 9 && equals_lower(decl.substr(2, 7), "doctype") &&
          decl.find_first_of("\"'") == decl.npos && gt != html.npos) {
        i = gt + 1;
      } else {
        in_step = false;
        i = lt + 1;
      }
      continue;
    }
    if (!is_alpha(next)) {
      i = lt + 1;
      continue;
    }
    StartTag tag = scan_start_tag(html, lt, unread);
    in_step = in_step && tag.clean;
    if (in_step) {
      for (const auto& [from, to] : unread) drop(from, to);
    }
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
