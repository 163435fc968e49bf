// The levels and formats of the logs (common/log.h), as values the config can hold.
#pragma once

#include <cstdint>

namespace neardup {

enum class LogLevel : std::uint8_t { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };
enum class LogFormat : std::uint8_t { kText, kJson };

}  // namespace neardup
