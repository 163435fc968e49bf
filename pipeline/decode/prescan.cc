#include "pipeline/decode/prescan.h"

#include <array>
#include <optional>

#include "common/ascii.h"
#include "pipeline/decode/charset.h"

namespace neardup::decode_internal {
namespace {

bool is_space(char c) { return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool starts_with_nocase(std::string_view text, std::size_t pos, std::string_view prefix) {
  if (text.size() - pos < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (ascii_lower(text[pos + i]) != prefix[i]) return false;
  }
  return true;
}

std::size_t find_nocase(std::string_view text, std::string_view needle, std::size_t from) {
  for (std::size_t pos = from; pos + needle.size() <= text.size(); ++pos) {
    if (starts_with_nocase(text, pos, needle)) return pos;
  }
  return std::string_view::npos;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

struct Attribute {
  std::string name;
  std::string value;
};

// The HTML Standard's "get an attribute": names and values lower-cased, pos left after the
// attribute (or on the '>' that ends the tag). nullopt at the end of the tag or of the input.
std::optional<Attribute> get_attribute(std::string_view text, std::size_t& pos) {
  const std::size_t n = text.size();
  while (pos < n && (is_space(text[pos]) || text[pos] == '/')) ++pos;
  if (pos >= n || text[pos] == '>') return std::nullopt;
  Attribute attribute;
  for (;; ++pos) {  // name
    if (pos >= n) return std::nullopt;
    char c = text[pos];
    if (c == '=' && !attribute.name.empty()) {
      ++pos;
      break;
    }
    if (is_space(c)) {
      while (pos < n && is_space(text[pos])) ++pos;
      if (pos >= n || text[pos] != '=') return attribute;
      ++pos;
      break;
    }
    if (c == '/' || c == '>') return attribute;
    attribute.name += ascii_lower(c);
  }
  while (pos < n && is_space(text[pos])) ++pos;  // value
  if (pos >= n) return std::nullopt;
  if (text[pos] == '"' || text[pos] == '\'') {
    char quote = text[pos++];
    std::size_t close = text.find(quote, pos);
    if (close == std::string_view::npos) return std::nullopt;
    for (; pos < close; ++pos) attribute.value += ascii_lower(text[pos]);
    ++pos;
    return attribute;
  }
  if (text[pos] == '>') return attribute;
  for (; pos < n && !is_space(text[pos]) && text[pos] != '>'; ++pos) {
    attribute.value += ascii_lower(text[pos]);
  }
  return attribute;
}

// Reads one <meta ...> tag's attributes (pos just after "<meta"); returns its charset label if
// it declares one the way the HTML Standard accepts.
std::optional<std::string> meta_charset(std::string_view text, std::size_t& pos) {
  // Only the first of each attribute name counts, as in the HTML Standard's attribute list.
  bool seen_http_equiv = false, seen_content = false, seen_charset = false;
  bool got_pragma = false;
  std::optional<bool> need_pragma;
  std::string charset;
  while (auto attribute = get_attribute(text, pos)) {
    if (attribute->name == "http-equiv" && !seen_http_equiv) {
      seen_http_equiv = true;
      got_pragma = attribute->value == "content-type";
    } else if (attribute->name == "content" && !seen_content) {
      seen_content = true;
      if (need_pragma.has_value()) continue;  // a charset attribute came first
      std::string label = charset_from_meta_content(attribute->value);
      if (!label.empty()) {
        charset = std::move(label);
        need_pragma = true;
      }
    } else if (attribute->name == "charset" && !seen_charset) {
      seen_charset = true;
      charset = std::move(attribute->value);
      need_pragma = false;
    }
  }
  if (!need_pragma.has_value() || (*need_pragma && !got_pragma) || charset.empty()) {
    return std::nullopt;
  }
  return charset;
}

// encoding="..." of an XML declaration at the very start of text, or "".
std::string xml_declaration_encoding(std::string_view text) {
  if (!text.starts_with("<?xml")) return {};
  std::size_t end = text.find('>');
  if (end == std::string_view::npos) return {};
  std::string_view declaration = text.substr(5, end - 5);
  std::size_t pos = declaration.find("encoding");
  if (pos == std::string_view::npos) return {};
  pos += 8;
  while (pos < declaration.size() && is_space(declaration[pos])) ++pos;
  if (pos >= declaration.size() || declaration[pos] != '=') return {};
  ++pos;
  while (pos < declaration.size() && is_space(declaration[pos])) ++pos;
  if (pos >= declaration.size() || (declaration[pos] != '"' && declaration[pos] != '\'')) {
    return {};
  }
  std::size_t close = declaration.find(declaration[pos], pos + 1);
  if (close == std::string_view::npos) return {};
  return std::string(trim(declaration.substr(pos + 1, close - pos - 1)));
}

}  // namespace

MediaType parse_content_type(std::string_view content_type) {
  MediaType media;
  std::size_t pos = content_type.find(';');
  for (char c : trim(content_type.substr(0, pos))) media.type += ascii_lower(c);
  while (pos < content_type.size()) {  // pos is on a ';'
    ++pos;
    std::size_t equals = content_type.find_first_of("=;", pos);
    if (equals == std::string_view::npos || content_type[equals] == ';') {
      pos = equals;
      continue;
    }
    std::string_view name = trim(content_type.substr(pos, equals - pos));
    pos = equals + 1;
    while (pos < content_type.size() && is_space(content_type[pos])) ++pos;
    std::string_view value;
    if (pos < content_type.size() && content_type[pos] == '"') {
      std::size_t close = content_type.find('"', pos + 1);
      value =
          content_type.substr(pos + 1, close == std::string_view::npos ? close : close - pos - 1);
      pos = close == std::string_view::npos ? close : content_type.find(';', close);
    } else {
      std::size_t end = content_type.find(';', pos);
      value = trim(content_type.substr(pos, end == std::string_view::npos ? end : end - pos));
      pos = end;
    }
    if (name.size() == 7 && starts_with_nocase(name, 0, "charset") && media.charset.empty()) {
      media.charset = std::string(value);
    }
  }
  return media;
}

bool is_binary_media_type(std::string_view type) {
  for (std::string_view prefix : {"image/", "audio/", "video/", "font/", "model/"}) {
    if (type.starts_with(prefix)) return true;
  }
  static constexpr std::array<std::string_view, 16> kBinary{"application/octet-stream",
                                                            "application/pdf",
                                                            "application/zip",
                                                            "application/gzip",
                                                            "application/x-gzip",
                                                            "application/x-tar",
                                                            "application/x-bzip2",
                                                            "application/x-xz",
                                                            "application/x-7z-compressed",
                                                            "application/vnd.rar",
                                                            "application/x-rar-compressed",
                                                            "application/wasm",
                                                            "application/x-shockwave-flash",
                                                            "application/java-archive",
                                                            "application/msword",
                                                            "application/x-msdownload"};
  for (std::string_view binary : kBinary) {
    if (type == binary) return true;
  }
  return false;
}

std::string charset_from_meta_content(std::string_view content) {
  std::size_t pos = 0;
  for (;;) {
    pos = find_nocase(content, "charset", pos);
    if (pos == std::string_view::npos) return {};
    pos += 7;
    while (pos < content.size() && is_space(content[pos])) ++pos;
    if (pos >= content.size() || content[pos] != '=') continue;
    ++pos;
    while (pos < content.size() && is_space(content[pos])) ++pos;
    if (pos >= content.size()) return {};
    if (content[pos] == '"' || content[pos] == '\'') {
      std::size_t close = content.find(content[pos], pos + 1);
      if (close == std::string_view::npos) return {};
      return std::string(content.substr(pos + 1, close - pos - 1));
    }
    std::size_t end = pos;
    while (end < content.size() && !is_space(content[end]) && content[end] != ';') ++end;
    return std::string(content.substr(pos, end - pos));
  }
}

Declaration prescan_declaration(std::string_view head) {
  Declaration xml;
  if (std::string label = xml_declaration_encoding(head); !label.empty()) {
    xml = {std::move(label), "xml"};
  }
  const std::size_t n = head.size();
  for (std::size_t pos = 0; pos < n; ++pos) {
    if (head.substr(pos).starts_with("<!--")) {
      std::size_t close = head.find("-->", pos + 2);
      if (close == std::string_view::npos) break;
      pos = close + 2;
    } else if (starts_with_nocase(head, pos, "<meta") && pos + 5 < n &&
               (is_space(head[pos + 5]) || head[pos + 5] == '/')) {
      pos += 5;
      std::optional<std::string> label = meta_charset(head, pos);
      if (label && resolve_declared_charset(*label)) return {std::move(*label), "meta"};
    } else if (head[pos] == '<' && pos + 1 < n &&
               (is_alpha(head[pos + 1]) ||
                (head[pos + 1] == '/' && pos + 2 < n && is_alpha(head[pos + 2])))) {
      while (pos < n && !is_space(head[pos]) && head[pos] != '>') ++pos;
      while (get_attribute(head, pos)) {
      }
    } else if (head.substr(pos).starts_with("<!") || head.substr(pos).starts_with("</") ||
               head.substr(pos).starts_with("<?")) {
      std::size_t close = head.find('>', pos);
      if (close == std::string_view::npos) break;
      pos = close;
    }
  }
  return xml;
}

}  // namespace neardup::decode_internal
