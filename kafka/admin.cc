#include "kafka/admin.h"

#include <librdkafka/rdkafka.h>

#include <charconv>
#include <memory>
#include <set>

namespace neardup::kafka {
namespace {

struct QueueDeleter {
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
};
struct OptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* options) const {
    rd_kafka_AdminOptions_destroy(options);
  }
};
struct ConfigResourceDeleter {
  void operator()(rd_kafka_ConfigResource_t* resource) const {
    rd_kafka_ConfigResource_destroy(resource);
  }
};
struct NewTopicDeleter {
  void operator()(rd_kafka_NewTopic_t* topic) const { rd_kafka_NewTopic_destroy(topic); }
};

}  // namespace

std::expected<TopicSpec, std::string> parse_topic_spec(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return std::unexpected("topic " + std::string(text) + ": " + std::string(why));
  };
  TopicSpec spec;
  const std::size_t colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (spec.name.empty()) return fail("empty topic name");
  if (colon == std::string_view::npos) return spec;
  std::string_view rest = text.substr(colon + 1);
  const std::size_t second = rest.find(':');
  std::string_view count = rest.substr(0, second);
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), spec.partitions);
  if (ec != std::errc() || end != count.data() + count.size() || spec.partitions < 1) {
    return fail("PARTITIONS must be a positive integer");
  }
  if (second == std::string_view::npos) return spec;
  std::string_view configs = rest.substr(second + 1);
  while (!configs.empty()) {
    const std::size_t comma = configs.find(',');
    std::string_view entry = configs.substr(0, comma);
    const std::size_t equals = entry.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      return fail("topic configs must be KEY=VALUE, got '" + std::string(entry) + "'");
    }
    spec.configs.emplace_back(std::string(entry.substr(0, equals)),
                              std::string(entry.substr(equals + 1)));
    configs = comma == std::string_view::npos ? std::string_view() : configs.substr(comma + 1);
  }
  return spec;
}

std::expected<void, std::string> create_topics(RdKafka::Handle& handle,
                                               const std::vector<TopicSpec>& topics,
                                               bool if_not_exists, int timeout_ms) {
  if (topics.empty()) return {};
  rd_kafka_t* rk = handle.c_ptr();
  char error[512];
  std::vector<std::unique_ptr<rd_kafka_NewTopic_t, NewTopicDeleter>> owned;
  std::vector<rd_kafka_NewTopic_t*> requests;
  for (const TopicSpec& spec : topics) {
    owned.emplace_back(rd_kafka_NewTopic_new(spec.name.c_str(), spec.partitions,
                                             spec.replication_factor, error, sizeof(error)));
    if (!owned.back()) return std::unexpected("topic " + spec.name + ": " + error);
    for (const auto& [key, value] : spec.configs) {
      if (rd_kafka_resp_err_t err =
              rd_kafka_NewTopic_set_config(owned.back().get(), key.c_str(), value.c_str())) {
        return std::unexpected("topic " + spec.name + ": config " + key + ": " +
                               rd_kafka_err2str(err));
      }
    }
    requests.push_back(owned.back().get());
  }
  std::unique_ptr<rd_kafka_AdminOptions_t, OptionsDeleter> options(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS));
  if (rd_kafka_AdminOptions_set_operation_timeout(options.get(), timeout_ms, error,
                                                  sizeof(error)) ||
      rd_kafka_AdminOptions_set_request_timeout(options.get(), timeout_ms, error, sizeof(error))) {
    return std::unexpected(std::string("create topics: ") + error);
  }
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk));
  rd_kafka_CreateTopics(rk, requests.data(), requests.size(), options.get(), queue.get());
  // The result arrives on the queue; the request's own timeout bounds the wait.
  std::unique_ptr<rd_kafka_event_t, EventDeleter> event(
      rd_kafka_queue_poll(queue.get(), timeout_ms + 5000));
  if (!event) return std::unexpected("create topics: no answer within the timeout");
  if (rd_kafka_resp_err_t err = rd_kafka_event_error(event.get())) {
    return std::unexpected(std::string("create topics: ") + rd_kafka_err2name(err) + ": " +
                           rd_kafka_event_error_string(event.get()));
  }
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event.get());
  if (!result) return std::unexpected("create topics: unexpected answer from librdkafka");
  std::size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(result, &count);
  std::string failures;
  for (std::size_t i = 0; i < count; ++i) {
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS && if_not_exists) continue;
    const char* message = rd_kafka_topic_result_error_string(results[i]);
    if (!failures.empty()) failures += "; ";
    failures += std::string("topic ") + rd_kafka_topic_result_name(results[i]) + ": " +
                rd_kafka_err2name(err) + (message ? std::string(": ") + message : "");
  }
  if (!failures.empty()) return std::unexpected(failures);
  return {};
}

std::expected<std::map<std::string, std::string>, std::string> topic_configs(
    RdKafka::Handle& handle, const std::vector<std::string>& topics, const std::string& name,
    int timeout_ms) {
  rd_kafka_t* rk = handle.c_ptr();
  const std::string what = "config " + name + ": ";
  // librdkafka 2.0 sends DescribeConfigs to the controller; without one it would wait out the
  // whole timeout. The controller is known from any earlier metadata (list_topics).
  if (rd_kafka_controllerid(rk, 0) < 0 &&
      (!list_topics(handle, timeout_ms) || rd_kafka_controllerid(rk, 0) < 0)) {
    return std::unexpected(what + "the cluster names no controller");
  }
  std::vector<std::unique_ptr<rd_kafka_ConfigResource_t, ConfigResourceDeleter>> owned;
  std::vector<rd_kafka_ConfigResource_t*> resources;
  for (const std::string& topic : topics) {
    owned.emplace_back(rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str()));
    resources.push_back(owned.back().get());
  }
  std::unique_ptr<rd_kafka_AdminOptions_t, OptionsDeleter> options(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS));
  char error[512];
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), timeout_ms, error, sizeof(error))) {
    return std::unexpected(what + error);
  }
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk));
  rd_kafka_DescribeConfigs(rk, resources.data(), resources.size(), options.get(), queue.get());
  std::unique_ptr<rd_kafka_event_t, EventDeleter> event(
      rd_kafka_queue_poll(queue.get(), timeout_ms + 5000));
  if (!event) return std::unexpected(what + "no answer within the timeout");
  if (rd_kafka_resp_err_t err = rd_kafka_event_error(event.get())) {
    return std::unexpected(what + rd_kafka_err2name(err) + ": " +
                           rd_kafka_event_error_string(event.get()));
  }
  const rd_kafka_DescribeConfigs_result_t* result =
      rd_kafka_event_DescribeConfigs_result(event.get());
  std::size_t count = 0;
  const rd_kafka_ConfigResource_t** described =
      result ? rd_kafka_DescribeConfigs_result_resources(result, &count) : nullptr;
  std::map<std::string, std::string> values;
  for (std::size_t r = 0; r < count; ++r) {
    const std::string topic = rd_kafka_ConfigResource_name(described[r]);
    if (rd_kafka_resp_err_t err = rd_kafka_ConfigResource_error(described[r])) {
      const char* message = rd_kafka_ConfigResource_error_string(described[r]);
      return std::unexpected(what + "topic " + topic + ": " + rd_kafka_err2name(err) +
                             (message ? std::string(": ") + message : ""));
    }
    std::size_t entries = 0;
    const rd_kafka_ConfigEntry_t** configs =
        rd_kafka_ConfigResource_configs(described[r], &entries);
    for (std::size_t i = 0; i < entries; ++i) {
      const char* value = rd_kafka_ConfigEntry_value(configs[i]);
      if (name == rd_kafka_ConfigEntry_name(configs[i]) && value) values[topic] = value;
    }
  }
  for (const std::string& topic : topics) {
    if (!values.contains(topic)) return std::unexpected(what + "none given for topic " + topic);
  }
  return values;
}

std::expected<std::map<std::string, int>, std::string> list_topics(RdKafka::Handle& handle,
                                                                   int timeout_ms) {
  RdKafka::Metadata* raw = nullptr;
  RdKafka::ErrorCode err = handle.metadata(/*all_topics=*/true, nullptr, &raw, timeout_ms);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (err != RdKafka::ERR_NO_ERROR) {
    return std::unexpected(
        "metadata: " + std::string(rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err))) +
        ": " + RdKafka::err2str(err));
  }
  std::map<std::string, int> topics;
  for (const RdKafka::TopicMetadata* topic : *metadata->topics()) {
    if (topic->err() != RdKafka::ERR_NO_ERROR) continue;
    topics[topic->topic()] = static_cast<int>(topic->partitions()->size());
  }
  return topics;
}

std::expected<std::vector<std::int32_t>, std::string> topic_partitions(RdKafka::Handle& handle,
                                                                       const std::string& topic,
                                                                       int timeout_ms) {
  RdKafka::Metadata* raw = nullptr;
  RdKafka::ErrorCode err = handle.metadata(/*all_topics=*/true, nullptr, &raw, timeout_ms);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (err != RdKafka::ERR_NO_ERROR) {
    return std::unexpected("metadata for " + topic + ": " + RdKafka::err2str(err));
  }
  for (const RdKafka::TopicMetadata* t : *metadata->topics()) {
    if (t->topic() != topic) continue;
    if (t->err() != RdKafka::ERR_NO_ERROR) {
      return std::unexpected("topic " + topic + ": " + RdKafka::err2str(t->err()));
    }
    std::vector<std::int32_t> partitions;
    for (const RdKafka::PartitionMetadata* p : *t->partitions()) partitions.push_back(p->id());
    if (partitions.empty()) break;
    return partitions;
  }
  return std::unexpected("topic " + topic + " does not exist");
}

std::expected<void, TopicCheckError> require_topics(RdKafka::Handle& handle,
                                                    const std::vector<std::string>& topics,
                                                    const std::string& bootstrap, int timeout_ms) {
  auto existing = list_topics(handle, timeout_ms);
  if (!existing) {
    return std::unexpected(TopicCheckError{
        true, "cannot check the topics on " + bootstrap + ": " + existing.error()});
  }
  std::string missing;
  for (const std::string& topic : std::set<std::string>(topics.begin(), topics.end())) {
    if (!existing->contains(topic)) missing += (missing.empty() ? "" : ", ") + topic;
  }
  if (!missing.empty()) {
    // What it has, so that a misspelling shows beside its intended name.
    std::string has;
    std::size_t listed = 0;
    for (const auto& [topic, partitions] : *existing) {
      if (topic.starts_with("__")) continue;  // the broker's own
      if (++listed > 10) {
        has += ", ...";
        break;
      }
      has += (has.empty() ? "" : ", ") + topic;
    }
    return std::unexpected(
        TopicCheckError{false, "topics missing on the cluster at " + bootstrap + ": " + missing +
                                   " (it has " + (has.empty() ? "no topics" : has) +
                                   "; create them first, e.g. neardup topics --create)"});
  }
  return {};
}

}  // namespace neardup::kafka
