// neardup consume: Kafka records -> JSONL. Reads every partition of a topic (no group
// membership, nothing committed) and stops after --count records or --timeout seconds without
// a new one: exit 1 when that was before --count records. A broker must answer within
// --connect-timeout (else exit 3) and the topic must exist (else exit 2).
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/help.h"
#include "kafka/admin.h"
#include "kafka/client.h"
#include "message/record.h"

namespace neardup::cli {
namespace {

// The value as JSON when it parses as JSON within kMaxJsonDepth, else as a JSON string.
nlohmann::json value_json(const char* data, std::size_t size) {
  if (!json_depth_within(std::string_view(data, size), kMaxJsonDepth)) {
    return std::string(data, size);
  }
  auto parsed = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded()) return parsed;
  return std::string(data, size);
}

}  // namespace

void register_consume(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string bootstrap;
    std::string topic;
    std::uint64_t count = 0;
    double timeout_s = 10;
    std::string out = "-";
    bool from_end = false;
    bool with_meta = false;
    std::vector<std::string> properties;
    double connect_seconds = kConnectSeconds;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand("consume", "Consume Kafka records as JSONL");
  add_kafka_target_options(sub, options->bootstrap, options->topic,
                           "topic to read (every partition; it must exist)",
                           options->connect_seconds);
  sub->add_option("--count", options->count, "stop after this many records (0: no limit)")
      ->option_text("N");
  sub->add_option("--timeout", options->timeout_s,
                  "stop after this many seconds without a new record")
      ->option_text("SECONDS");
  sub->add_option("--out", options->out, "JSONL output file, - for stdout")->option_text("FILE");
  sub->add_flag("--from-beginning,!--from-end", options->from_end,
                "start at the oldest record (default) or after the newest");
  sub->add_flag("--with-meta", options->with_meta,
                R"(wrap each record as {"key","headers","partition","offset","value"})");
  sub->add_option("--property", options->properties,
                  "extra librdkafka consumer property")
      ->option_text("NAME=VALUE");
  sub->footer(
      "Exit 0 after --count records (or, without --count, once --timeout passes without one);\n"
      "1 when --timeout passed before --count records arrived (the records read are written,\n"
      "the last line says how many of how many); 2 when the topic does not exist; 3 when no\n"
      "broker answered within --connect-timeout.");
  set_examples(sub, {"neardup consume --bootstrap 127.0.0.1:9092 --topic pages-tagged --count 10",
                     "neardup consume --bootstrap $(cat bootstrap.txt) --topic pages-dead "
                     "--with-meta --timeout 2"});
  registry.add(sub, [options]() {
    KafkaToolEvents events;
    auto conf = kafka_tool_conf(
        {
            {"bootstrap.servers", options->bootstrap},
            // Partitions are assigned, not subscribed: the group is never joined nor
            // committed to.
            {"group.id", "neardup-consume"},
            {"enable.auto.commit", "false"},
            {"enable.auto.offset.store", "false"},
        },
        options->properties, events);
    if (!conf) {
      std::cerr << "neardup consume: " << conf.error() << "\n";
      return kExitUsage;
    }
    auto consumer = kafka::make_consumer(**conf);
    if (!consumer) {
      std::cerr << "neardup consume: " << consumer.error() << "\n";
      return kExitFailure;
    }
    if (auto stop = check_kafka_cluster("consume", **consumer, events, options->bootstrap,
                                        {options->topic}, options->connect_seconds)) {
      return *stop;
    }
    auto partitions = kafka::topic_partitions(**consumer, options->topic, 10000);
    if (!partitions) {
      std::cerr << "neardup consume: " << partitions.error() << "\n";
      return kExitFailure;
    }
    kafka::TopicPartitions assignment;
    for (std::int32_t partition : *partitions) {
      assignment.add(
          options->topic, partition,
          options->from_end ? RdKafka::Topic::OFFSET_END : RdKafka::Topic::OFFSET_BEGINNING);
    }
    if (RdKafka::ErrorCode err = (*consumer)->assign(assignment.get()); err) {
      std::cerr << "neardup consume: assign: " << RdKafka::err2str(err) << "\n";
      return kExitFailure;
    }
    std::ofstream file;
    if (options->out != "-") {
      file.open(options->out, std::ios::binary | std::ios::trunc);
      if (!file) {
        std::cerr << "neardup consume: cannot open --out " << options->out << "\n";
        return kExitUsage;
      }
    }
    std::ostream& out = options->out == "-" ? std::cout : file;

    using Clock = std::chrono::steady_clock;
    const auto idle_limit = std::chrono::duration<double>(options->timeout_s);
    auto last_record = Clock::now();
    std::uint64_t received = 0;
    while (options->count == 0 || received < options->count) {
      std::unique_ptr<RdKafka::Message> message((*consumer)->consume(100));
      if (message->err() == RdKafka::ERR__TIMED_OUT ||
          message->err() == RdKafka::ERR__PARTITION_EOF) {
        if (Clock::now() - last_record > idle_limit) break;
        continue;
      }
      if (message->err() != RdKafka::ERR_NO_ERROR) {
        std::cerr << "neardup consume: " << message->errstr() << "\n";
        if (message->err() == RdKafka::ERR__FATAL) return kExitFailure;
        continue;
      }
      last_record = Clock::now();
      ++received;
      nlohmann::json value =
          value_json(static_cast<const char*>(message->payload()), message->len());
      if (options->with_meta) {
        nlohmann::json headers = nlohmann::json::object();
        for (auto& [name, bytes] : kafka::message_headers(*message)) headers[name] = bytes;
        nlohmann::json wrapped{
            {"key", message->key() ? nlohmann::json(*message->key()) : nlohmann::json(nullptr)},
            {"headers", std::move(headers)},
            {"partition", message->partition()},
            {"offset", message->offset()},
            {"value", std::move(value)}};
        value = std::move(wrapped);
      }
      out << value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
    out.flush();
    (*consumer)->close();
    const bool short_count = options->count != 0 && received < options->count;
    std::cerr << "neardup consume: records=" << received;
    if (short_count) {
      char idle[32];
      std::snprintf(idle, sizeof idle, "%g", options->timeout_s);
      std::cerr << " of --count " << options->count << ": none came for " << idle
                << " s (--timeout); exit 1";
    }
    std::cerr << "\n";
    return short_count ? kExitNo : kExitOk;
  });
}

}  // namespace neardup::cli
