#include "daemon/consumer_stats.h"

#include <nlohmann/json.hpp>

namespace neardup::daemon {
namespace {

// An integer field of a statistics object, or `fallback` when absent or not an integer.
std::int64_t int_field(const nlohmann::json& object, const char* name, std::int64_t fallback) {
  auto it = object.find(name);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}

// A consumer's statistics report as JSON; discarded for anything else.
nlohmann::json consumer_report(std::string_view stats_json) {
  auto stats = nlohmann::json::parse(stats_json, nullptr, /*allow_exceptions=*/false);
  if (!stats.is_object()) return nlohmann::json::value_t::discarded;
  auto type = stats.find("type");
  if (type == stats.end() || *type != "consumer") return nlohmann::json::value_t::discarded;
  return stats;
}

}  // namespace

std::optional<int> brokers_up(std::string_view stats_json) {
  auto stats = consumer_report(stats_json);
  if (stats.is_discarded()) return std::nullopt;
  auto brokers = stats.find("brokers");
  if (brokers == stats.end() || !brokers->is_object()) return std::nullopt;
  int up = 0;
  for (const auto& broker : *brokers) {
    auto state = broker.find("state");
    if (int_field(broker, "nodeid", -1) >= 0 && state != broker.end() && *state == "UP") ++up;
  }
  return up;
}

std::vector<std::pair<PartitionId, std::int64_t>> consumer_lags(std::string_view stats_json) {
  std::vector<std::pair<PartitionId, std::int64_t>> lags;
  auto stats = consumer_report(stats_json);
  if (stats.is_discarded()) return lags;
  auto topics = stats.find("topics");
  if (topics == stats.end() || !topics->is_object()) return lags;
  for (const auto& [topic, topic_stats] : topics->items()) {
    auto partitions = topic_stats.find("partitions");
    if (partitions == topic_stats.end() || !partitions->is_object()) continue;
    for (const auto& partition_stats : *partitions) {
      const std::int64_t partition = int_field(partition_stats, "partition", -1);
      const std::int64_t lag = int_field(partition_stats, "consumer_lag", -1);
      if (partition < 0 || partition > INT32_MAX || lag < 0) continue;
      lags.emplace_back(PartitionId{topic, static_cast<std::int32_t>(partition)}, lag);
    }
  }
  return lags;
}

}  // namespace neardup::daemon
