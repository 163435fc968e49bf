// Logging: one line per event on stderr (docs/operations.md, "Logs").
//
//   text  "2026-01-02T03:04:05.678 warn daemon message key=value..."
//   json  {"time":"2026-01-02T03:04:05.678Z","level":"warn","component":"daemon","message":"...",
//          "key":value...}
//
// Messages end in key=value pairs (`started role=single input=pages`, `fatal error="..."`); in
// JSON they become fields of the object (split_log_fields).
//
// Under journald (JOURNAL_STREAM names the file stderr is: systemd.exec(5)) the timestamp is
// left out, since journald adds its own, and each line starts with its syslog priority as
// sd-daemon(3) defines it ("<4>warn daemon ..."), so `journalctl -p warning` selects by level:
// trace/debug <7>, info <6>, warn <4>, error <3>, critical <2>.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/log_level.h"

namespace neardup {

// Sets up the stderr sink and the level. Call once at start-up; set_log_level and set_log_format
// may be called again later (reload).
void init_logging(LogLevel level);
void set_log_level(LogLevel level);
void set_log_format(LogFormat format);

// The logger of one component ("daemon", "store", ...), created on first use.
std::shared_ptr<spdlog::logger> logger(const std::string& component);

// True when stderr is the stream JOURNAL_STREAM ("device:inode") names.
bool stderr_is_journal();

// One log line as it is written, with its '\n' (for tests and for the formatter).
std::string format_log_line(LogFormat format, bool journal, spdlog::level::level_enum level,
                            std::string_view component, std::string_view message,
                            std::chrono::system_clock::time_point time);

// A message split into its text and its trailing key=value pairs, for JSON lines: "started
// role=single partitions=4 error=\"a b\"" is "started" and role=single, partitions=4,
// error="a b" (a quoted value has its quotes removed and \" and \\ unescaped). Only the pairs
// at the end count, not those inside the text; a message whose pairs repeat a key or use time,
// level, component or message is left whole. In a JSON line an unquoted integer, decimal, true
// or false keeps its type; every other value is a string.
struct LogField {
  std::string key, value;
  bool quoted = false;
};
struct LogFields {
  std::string_view text;
  std::vector<LogField> fields;
};
LogFields split_log_fields(std::string_view message);

// The syslog priority of a level: 7 debug .. 2 critical (sd-daemon(3) prefixes).
int syslog_priority(spdlog::level::level_enum level);

}  // namespace neardup
