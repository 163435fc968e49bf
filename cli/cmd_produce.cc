// neardup produce: JSONL lines -> Kafka records (key from a field), waiting for every delivery
// report. Lines are sent byte for byte, JSON or not, so malformed input can be produced too;
// gzip input is decompressed first (by its magic bytes, cli/line_reader.h). With --warc, the
// pages of WARC response records are produced as input records (cli/record_input.h). Before
// anything is read, a broker must answer within --connect-timeout (else exit 3) and the topic
// must exist (else exit 2), so that a misspelt topic or an unreachable cluster fails at once.
#include <atomic>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/record_input.h"
#include "common/help.h"
#include "kafka/client.h"
#include "message/record.h"

namespace neardup::cli {
namespace {

class CountingDeliveryReport : public RdKafka::DeliveryReportCb {
 public:
  void dr_cb(RdKafka::Message& message) override {
    if (message.err() == RdKafka::ERR_NO_ERROR) {
      ++delivered;
      return;
    }
    if (failed++ < 10) {
      if (progress) progress->clear();
      std::cerr << "neardup produce: delivery failed: " << message.errstr() << "\n";
    }
  }
  std::atomic<std::uint64_t> delivered{0}, failed{0};
  Progress* progress = nullptr;  // its line is cleared before a failure is reported
};

// The key of one line: the string (or number) at key_field; none when the line is not a JSON
// object or lacks the field.
std::optional<std::string> key_of(const std::string& line, const std::string& key_field) {
  if (key_field.empty()) return std::nullopt;
  auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return std::nullopt;
  auto field = object.find(key_field);
  if (field == object.end()) return std::nullopt;
  if (field->is_string()) return field->get<std::string>();
  if (field->is_number()) return field->dump();
  return std::nullopt;
}

}  // namespace

// message.timeout.ms of `neardup produce` (--property message.timeout.ms=N overrides it).
constexpr int kDeliveryTimeoutMillis = 30000;

void register_produce(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string bootstrap;
    std::string topic;
    std::string in = "-";
    std::vector<std::string> warc;
    std::string key_field = "url";
    std::int32_t partition = RdKafka::Topic::PARTITION_UA;
    std::vector<std::string> properties;
    double connect_seconds = kConnectSeconds;
    ProgressMode progress = ProgressMode::kAuto;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub =
      root.add_subcommand("produce", "Produce JSONL lines or WARC pages as Kafka records");
  add_kafka_target_options(sub, options->bootstrap, options->topic,
                           "topic to produce to (it must exist)", options->connect_seconds);
  add_record_input_options(sub, options->in, options->warc);
  sub->add_option("--key-field", options->key_field,
                  "record key from this JSON field (empty: no key)")
      ->option_text("FIELD");
  sub->add_option("--partition", options->partition,
                  "produce every record to this partition (default: the partitioner, by key)")
      ->option_text("N")
      ->default_str("")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--property", options->properties, "extra librdkafka producer property")
      ->option_text("NAME=VALUE");
  add_progress_options(sub, options->progress);
  sub->footer(
      "Exit 0 when every record was delivered; 2 when the topic does not exist (nothing is\n"
      "sent); 3 when no broker answered within --connect-timeout, or any record failed (each\n"
      "failure is reported, the last line counts them: produced= delivered= failed=).");
  set_examples(sub, {"neardup produce --bootstrap 127.0.0.1:9092 --topic pages --in "
                     "samples/crawl.jsonl.gz",
                     "neardup produce --bootstrap $(cat bootstrap.txt) --topic pages --partition 0 "
                     "--key-field id < pages.jsonl",
                     "neardup produce --bootstrap 127.0.0.1:9092 --topic pages --warc "
                     "crawl-00000.warc.gz crawl-00001.warc.gz"});
  registry.add(sub, [options]() {
    kafka::Properties properties = {
        {"bootstrap.servers", options->bootstrap},
        {"enable.idempotence", "true"},
        {"linger.ms", "5"},
        // Large test pages (tens of MB) must reach the broker, which enforces its own limit
        // (records above 64 MiB: --property message.max.bytes=N, at most 1000000000).
        {"message.max.bytes", "67108864"},
        // A record not delivered within this fails (and the run exits 3) instead of waiting
        // librdkafka's default five minutes for a cluster that does not answer.
        {"message.timeout.ms", std::to_string(kDeliveryTimeoutMillis)},
    };
    KafkaToolEvents events;
    auto conf = kafka_tool_conf(std::move(properties), options->properties, events);
    CountingDeliveryReport reports;
    if (conf) {
      if (auto set = kafka::set_callback(**conf, "dr_cb", &reports); !set) {
        std::cerr << "neardup produce: " << set.error() << "\n";
        return kExitFailure;
      }
    } else {
      std::cerr << "neardup produce: " << conf.error() << "\n";
      return kExitUsage;
    }
    // WARC pages are written with the default field names (docs/records.md).
    const InputConfig input_config;  // produce takes no --config: the defaults
    auto input = RecordInput::open(options->in, options->warc, input_config, "neardup produce");
    if (!input) {
      std::cerr << "neardup produce: " << input.error() << "\n";
      return kExitUsage;
    }
    auto producer = kafka::make_producer(**conf);
    if (!producer) {
      std::cerr << "neardup produce: " << producer.error() << "\n";
      return kExitFailure;
    }
    if (auto stop = check_kafka_cluster("produce", **producer, events, options->bootstrap,
                                        {options->topic}, options->connect_seconds)) {
      return *stop;
    }
    Progress progress(options->progress, "neardup produce", (*input)->size(), "records");
    reports.progress = &progress;
    std::uint64_t produced = 0, rejected = 0;
    auto counts = [&] {
      return std::to_string(produced) + " produced  " + std::to_string(reports.delivered) +
             " delivered  " + std::to_string(reports.failed + rejected) + " failed";
    };
    std::string line, where;
    while ((*input)->next(line, where)) {
      progress.update((*input)->position(), produced + rejected, counts);
      if (const std::uint64_t over_long = (*input)->over_long(); over_long > 0) {
        // Refused as neardupd would dead-letter it, and as the broker refuses a record over
        // message.max.bytes: a failed record.
        const RecordError error = record_too_large(over_long, input_config);
        if (rejected++ < 10) {
          progress.clear();
          std::cerr << "neardup produce: record " << produced + rejected << " (" << where
                    << "): " << error.code << ": " << error.detail << "\n";
        }
        continue;
      }
      if (line.empty()) continue;
      std::optional<std::string> key = key_of(line, options->key_field);
      kafka::OutgoingRecord record{.topic = options->topic,
                                   .partition = options->partition,
                                   .key = key ? &*key : nullptr,
                                   .value = line};
      RdKafka::ErrorCode err = kafka::produce(**producer, record, nullptr);
      if (err != RdKafka::ERR_NO_ERROR) {
        if (rejected++ < 10) {
          progress.clear();
          std::cerr << "neardup produce: record " << produced + rejected << " (" << where
                    << "): " << RdKafka::err2str(err) << "\n";
        }
        continue;
      }
      ++produced;
      (*producer)->poll(0);
    }
    const auto waiting_since = std::chrono::steady_clock::now();
    bool said = false;
    while ((*producer)->outq_len() > 0) {
      (*producer)->flush(1000);
      progress.update((*input)->position(), produced + rejected, counts);
      if (!said && (*producer)->outq_len() > 0 &&
          std::chrono::steady_clock::now() - waiting_since > std::chrono::seconds(5)) {
        said = true;
        progress.clear();
        std::cerr << "neardup produce: " << (*producer)->outq_len()
                  << " records not yet delivered to " << options->bootstrap
                  << " (is a broker reachable there?); waiting at most "
                  << kDeliveryTimeoutMillis / 1000 << " s from each record's send\n";
      }
    }
    progress.clear();
    reports.progress = nullptr;
    if (!(*input)->error().empty()) {
      std::cerr << "neardup produce: " << (*input)->error() << "\n";
      return kExitFailure;
    }
    std::cerr << (*input)->summary();
    std::cerr << "neardup produce: produced=" << produced << " delivered=" << reports.delivered
              << " failed=" << reports.failed + rejected << "\n";
    return reports.failed + rejected == 0 ? kExitOk : kExitFailure;
  });
}

}  // namespace neardup::cli
