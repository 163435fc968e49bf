#include "config/integers.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace neardup::config_keys {

std::string range_text(const Key& key, std::uint64_t max) {
  auto number = [&](std::uint64_t n) { return key.size ? format_size(n) : std::to_string(n); };
  if (max == kNoMax && key.min > 0) return ">= " + number(key.min);
  return number(key.min) + ".." + number(max);
}

ParsedInteger parse_integer(std::string_view text, bool size, bool duration) {
  using Outcome = ParsedInteger::Outcome;
  ParsedInteger result;
  if (text.starts_with('-')) {
    std::string_view digits = text.substr(1);
    bool all_digits = !digits.empty() &&
                      std::ranges::all_of(digits, [](unsigned char c) { return std::isdigit(c); });
    if (all_digits) result.outcome = Outcome::kOutOfRange;
    return result;
  }
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    base = 16;
    text.remove_prefix(2);
  }
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, result.value, base);
  if (rest == text.data()) return result;  // no digits
  if (ec == std::errc::result_out_of_range) {
    result.outcome = Outcome::kOutOfRange;
    return result;
  }
  std::string_view suffix(rest, end);
  if (!suffix.empty()) {
    if (!(size || duration) || base != 10) return result;
    if (suffix.starts_with(' ')) suffix.remove_prefix(1);
    const auto& units = duration ? kDurationUnits : kSizeUnits;
    auto unit =
        std::ranges::find(units, suffix, &std::pair<std::string_view, std::uint64_t>::first);
    if (unit == units.end()) return result;
    if (result.value > kNoMax / unit->second) {
      result.outcome = Outcome::kOutOfRange;
      return result;
    }
    result.value *= unit->second;
  }
  result.outcome = Outcome::kOk;
  return result;
}

}  // namespace neardup::config_keys
