#include "daemon/consumer_stats.h"

#include <nlohmann/json.hpp>

namespace neardup::daemon {
namespace {

// An integer field of a statistics object, or `fallback` when absent or not an integer.
std::int64_t int_field(const nlohmann::json& object, const char* name, std::int64_t fallback) {
  auto it = object.find(name);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}

}  // namespace

std::vector<std::pair<PartitionId, std::int64_t>> consumer_lags(std::string_view stats_json) {
  std::vector<std::pair<PartitionId, std::int64_t>> lags;
  auto stats = nlohmann::json::parse(stats_json, nullptr, /*allow_exceptions=*/false);
  if (!stats.is_object()) return lags;
  auto type = stats.find("type");
  if (type == stats.end() || *type != "consumer") return lags;
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
