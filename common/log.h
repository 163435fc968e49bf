// Logging: one line per event on stderr, "level component message key=value..." (DESIGN.md §8).
// Timestamps are left out under journald (JOURNAL_STREAM set), which adds its own.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <string_view>

namespace neardup {

// Sets up the stderr sink and the level ("trace".."off"). Returns false for an unknown level.
// Call once at start-up; set_log_level may be called again later (reload).
bool init_logging(std::string_view level);
bool set_log_level(std::string_view level);

// The logger of one component ("daemon", "store", ...), created on first use.
std::shared_ptr<spdlog::logger> logger(const std::string& component);

}  // namespace neardup
