// Topic administration over librdkafka's admin API (CreateTopics) and metadata, on any client
// handle (producer or consumer). Used by `neardup topics`, by neardupd's start-up check and by
// the development and test brokers' set-up.
//
// Errors are values naming the topic and librdkafka's or the broker's reason.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace neardup::kafka {

// A topic to create. On the command line: NAME[:PARTITIONS[:KEY=VALUE,KEY=VALUE...]], e.g.
// "pages:4" or "pages:1:max.message.bytes=33554432".
struct TopicSpec {
  std::string name;
  int partitions = 1;
  int replication_factor = 1;
  std::vector<std::pair<std::string, std::string>> configs;  // topic-level configs
};

// Parses the command-line form; the error names the text and what is wrong with it.
std::expected<TopicSpec, std::string> parse_topic_spec(std::string_view text);

// Creates the topics (CreateTopics, waiting up to timeout_ms) and returns once the broker has
// answered for all of them. A topic that exists already is an error unless `if_not_exists`.
// The error names every topic that failed and why. librdkafka 2.0's mock cluster (`neardup
// broker`) has no controller and cannot create topics this way (its own create_topic can).
std::expected<void, std::string> create_topics(RdKafka::Handle& handle,
                                               const std::vector<TopicSpec>& topics,
                                               bool if_not_exists, int timeout_ms);

// Every topic of the cluster with its partition count, from one all-topics metadata request
// (which, unlike a request naming a topic, never makes a broker auto-create it).
std::expected<std::map<std::string, int>, std::string> list_topics(RdKafka::Handle& handle,
                                                                   int timeout_ms);

// The partition ids of a topic. Errors: the topic does not exist, or metadata failed.
std::expected<std::vector<std::int32_t>, std::string> topic_partitions(RdKafka::Handle& handle,
                                                                       const std::string& topic,
                                                                       int timeout_ms);

// One effective configuration value (DescribeConfigs) of each topic, e.g.
// "max.message.bytes": the topic's own setting or the broker's default. One request for all
// topics. Errors: a topic does not exist, the config is unknown, or the cluster's metadata names
// no controller to ask (librdkafka 2.0's mock cluster; answered at once).
std::expected<std::map<std::string, std::string>, std::string> topic_configs(
    RdKafka::Handle& handle, const std::vector<std::string>& topics, const std::string& name,
    int timeout_ms);

// Why require_topics failed: `unreachable` when the cluster's metadata could not be read (no
// broker answered in time: the check can be tried again later), else topics are missing.
struct TopicCheckError {
  bool unreachable = false;
  std::string message;
};

// Checks that every named topic exists. The error lists the missing ones and those the cluster
// has ("topics missing on the cluster at 127.0.0.1:9092: pages-taged (it has pages,
// pages-tagged; create them first, ...)") or says why metadata failed.
std::expected<void, TopicCheckError> require_topics(RdKafka::Handle& handle,
                                                    const std::vector<std::string>& topics,
                                                    const std::string& bootstrap, int timeout_ms);

}  // namespace neardup::kafka
