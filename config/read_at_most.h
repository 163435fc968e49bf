// Reading a configuration file or a property's file. Internal to config/.
#pragma once

#include <cstddef>
#include <expected>
#include <string>

namespace neardup::config_keys {

// Reads `path` as a stream (a file, pipe, FIFO or device alike) up to max_bytes + 1 bytes: a
// longer one is known to be too long without reading the rest, and an endless one (/dev/zero)
// ends there. The error is the system's reason.
std::expected<std::string, std::string> read_at_most(const std::string& path,
                                                     std::size_t max_bytes);

}  // namespace neardup::config_keys
