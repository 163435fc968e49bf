// neardup topics: lists a cluster's topics, or creates topics through the admin API
// (CreateTopics), e.g. for neardupd's input, output and dead-letter topics.
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "kafka/admin.h"
#include "kafka/client.h"

namespace neardup::cli {

void register_topics(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string bootstrap;
    std::vector<std::string> create;
    int replication_factor = 1;
    bool if_not_exists = false;
    double timeout_s = 30;
    double connect_seconds = kConnectSeconds;
    std::vector<std::string> properties;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub =
      root.add_subcommand("topics", "List a Kafka cluster's topics, or create topics (--create)");
  sub->add_option("--bootstrap", options->bootstrap, "bootstrap.servers")->required();
  sub->add_option("--create", options->create,
                  "topic to create, NAME[:PARTITIONS[:KEY=VALUE,...]] with topic configs, e.g. "
                  "pages:4:max.message.bytes=33554432 (repeatable)");
  sub->add_option("--replication-factor", options->replication_factor,
                  "replicas of each created partition")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--if-not-exists", options->if_not_exists,
                "a topic that exists already is not an error");
  sub->add_option("--timeout", options->timeout_s,
                  "seconds to wait for the cluster to create the topics or list them")
      ->option_text("SECONDS");
  add_connect_timeout_option(sub, options->connect_seconds);
  sub->add_option("--property", options->properties,
                  "extra librdkafka property NAME=VALUE (repeatable), e.g. security.protocol");
  registry.add(sub, [options]() {
    std::vector<kafka::TopicSpec> topics;
    for (const auto& text : options->create) {
      auto spec = kafka::parse_topic_spec(text);
      if (!spec) {
        std::cerr << "neardup topics: " << spec.error() << "\n";
        return kExitUsage;
      }
      spec->replication_factor = options->replication_factor;
      topics.push_back(std::move(*spec));
    }
    KafkaToolEvents events;
    auto conf =
        kafka_tool_conf({{"bootstrap.servers", options->bootstrap}}, options->properties, events);
    if (!conf) {
      std::cerr << "neardup topics: " << conf.error() << "\n";
      return kExitUsage;
    }
    auto client = kafka::make_producer(**conf);
    if (!client) {
      std::cerr << "neardup topics: " << client.error() << "\n";
      return kExitFailure;
    }
    if (auto stop = check_kafka_cluster("topics", **client, events, options->bootstrap, {},
                                        options->connect_seconds)) {
      return *stop;
    }
    const int timeout_ms = static_cast<int>(options->timeout_s * 1000);
    if (!topics.empty()) {
      if (auto created = kafka::create_topics(**client, topics, options->if_not_exists, timeout_ms);
          !created) {
        std::cerr << "neardup topics: " << created.error() << "\n";
        return kExitFailure;
      }
      for (const auto& topic : topics) {
        std::cerr << "neardup topics: created " << topic.name << " (" << topic.partitions
                  << " partitions)\n";
      }
      return kExitOk;
    }
    auto listed = kafka::list_topics(**client, timeout_ms);
    if (!listed) {
      std::cerr << "neardup topics: " << listed.error() << "\n";
      return kExitFailure;
    }
    for (const auto& [name, partitions] : *listed) std::cout << name << "\t" << partitions << "\n";
    return kExitOk;
  });
}

}  // namespace neardup::cli
