#include "common/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <mutex>

namespace neardup {
namespace {

std::mutex g_mutex;
spdlog::sink_ptr g_sink;
spdlog::level::level_enum g_level = spdlog::level::info;

spdlog::sink_ptr sink() {
  if (!g_sink) {
    g_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    // journald adds its own timestamps and priority; elsewhere keep a timestamp.
    g_sink->set_pattern(std::getenv("JOURNAL_STREAM") ? "%l %n %v" : "%Y-%m-%dT%H:%M:%S.%e %l %n %v");
  }
  return g_sink;
}

}  // namespace

bool set_log_level(std::string_view level) {
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") return false;
  std::lock_guard lock(g_mutex);
  g_level = parsed;
  spdlog::apply_all([&](std::shared_ptr<spdlog::logger> l) { l->set_level(parsed); });
  return true;
}

bool init_logging(std::string_view level) {
  {
    std::lock_guard lock(g_mutex);
    sink();
  }
  return set_log_level(level);
}

std::shared_ptr<spdlog::logger> logger(const std::string& component) {
  std::lock_guard lock(g_mutex);
  if (auto existing = spdlog::get(component)) return existing;
  auto created = std::make_shared<spdlog::logger>(component, sink());
  created->set_level(g_level);
  spdlog::register_logger(created);
  return created;
}

}  // namespace neardup
