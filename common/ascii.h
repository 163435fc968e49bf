// ASCII case and whitespace, as the web's standards define them (WHATWG "ASCII lowercase",
// "ASCII case-insensitive", "ASCII whitespace"): locale-free, bytes >= 0x80 left as they are.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace neardup {

constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string ascii_lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

inline bool ascii_iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

// Tab, line feed, form feed, carriage return and space.
inline constexpr std::string_view kAsciiWhitespace = "\t\n\f\r ";

inline std::string_view trim_ascii_whitespace(std::string_view text) {
  const std::size_t begin = text.find_first_not_of(kAsciiWhitespace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kAsciiWhitespace) - begin + 1);
}

}  // namespace neardup
