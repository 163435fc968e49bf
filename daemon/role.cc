#include "daemon/role.h"

#include <chrono>
#include <utility>

#include "kafka/admin.h"
#include "message/processing.h"

namespace neardup::daemon {

void run_pipeline(Work& work, const std::shared_ptr<const Config>& config,
                  const std::string& scheme, ops::DaemonMetrics* metrics) {
  StageTimes times;
  work.processed = process_record(work.input.value, config, scheme, metrics ? &times : nullptr);
  if (!metrics) return;
  const std::pair<ops::Stage, const std::optional<std::chrono::nanoseconds>&> stages[] = {
      {ops::Stage::kDecode, times.decode},
      {ops::Stage::kDenoise, times.denoise},
      {ops::Stage::kFeatures, times.features},
      {ops::Stage::kFingerprint, times.fingerprint},
  };
  for (const auto& [stage, time] : stages) {
    if (time) metrics->stage(stage).observe(std::chrono::duration<double>(*time).count());
  }
}

std::expected<void, std::string> check_partitions_follow(
    RdKafka::Handle& handle, std::pair<std::string_view, const std::string&> from,
    std::pair<std::string_view, const std::string&> to) {
  auto upstream = kafka::topic_partitions(handle, from.second, kMetadataMillis);
  if (!upstream) return std::unexpected(upstream.error());
  auto downstream = kafka::topic_partitions(handle, to.second, kMetadataMillis);
  if (!downstream) return std::unexpected(downstream.error());
  if (downstream->size() >= upstream->size()) return {};
  return std::unexpected(
      std::string(to.first) + " " + to.second + " has " + std::to_string(downstream->size()) +
      " partitions, fewer than " + std::string(from.first) + " " + from.second + "'s " +
      std::to_string(upstream->size()) + ": the records of each partition of " + from.second +
      " go to the partition of the same number. Add partitions to " + to.second +
      " (kafka-topics.sh --alter --partitions " + std::to_string(upstream->size()) + ")");
}

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kFingerprint:
      return "fingerprint";
    case Role::kIndex:
      return "index";
    case Role::kShard:
      return "shard";
    case Role::kMerge:
      return "merge";
    case Role::kSingle:
      break;
  }
  return "single";
}

std::optional<Role> parse_role(std::string_view name) {
  for (Role role : {Role::kSingle, Role::kFingerprint, Role::kIndex, Role::kShard, Role::kMerge}) {
    if (role_name(role) == name) return role;
  }
  return std::nullopt;
}

std::string consumer_group(const Config& config, Role role) {
  switch (role) {
    case Role::kIndex:
      return config.kafka.group_id + "-index";
    case Role::kShard:
      return config.kafka.group_id + "-" + config.kafka.candidates_topic + "-shard-" +
             std::to_string(config.store.shard) + (config.store.replica ? "-replica" : "");
    case Role::kMerge:
      return config.kafka.group_id + "-" + config.kafka.candidates_topic + "-merge";
    case Role::kSingle:
    case Role::kFingerprint:
      break;
  }
  return config.kafka.group_id;
}

const std::string& consumed_topic(const Config& config, Role role) {
  switch (role) {
    case Role::kIndex:
    case Role::kShard:
      return config.kafka.fingerprint_topic;
    case Role::kMerge:
      return config.kafka.candidates_topic;
    case Role::kSingle:
    case Role::kFingerprint:
      break;
  }
  return config.kafka.input_topic;
}

}  // namespace neardup::daemon
