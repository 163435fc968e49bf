// The integers of a configuration value: decimal or 0x hex, sizes with a B..TiB suffix and
// durations (seconds) with an s..w suffix (config/keys.h has the units). Internal to config/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/keys.h"

namespace neardup::config_keys {

struct ParsedInteger {
  enum class Outcome { kOk, kNotInteger, kOutOfRange } outcome = Outcome::kNotInteger;
  std::uint64_t value = 0;
};

// Decimal or 0x hex; for sizes (and durations), decimal with an optional unit suffix,
// optionally after one space. A minus sign or a value past 2^64-1 is out of range.
ParsedInteger parse_integer(std::string_view text, bool size, bool duration = false);

// The range a key allows, as its error message names it: "1..64", ">= 1 MiB".
std::string range_text(const Key& key, std::uint64_t max);

}  // namespace neardup::config_keys
