// Helpers shared by the `neardup` subcommands: config loading, file reading, JSON lines.
#pragma once

#include <CLI/CLI.hpp>
#include <expected>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "config/config.h"
#include "kafka/client.h"
#include "store/index.h"

namespace neardup::cli {

// Loads --config F, or the defaults when path is empty. Prints the error on failure.
std::expected<Config, std::string> load_config_or_defaults(const std::string& path);

// Adds --config FILE to a command that fingerprints pages.
void add_config_option(CLI::App* command, std::string& path);

// librdkafka's events for a Kafka tool (consume, produce, topics): its log lines are kept off
// stderr, where the tool says in one line of its own what went wrong, and the last error is
// kept for that line ("Connect to ipv4#127.0.0.1:9 failed: Connection refused"). Any thread.
class KafkaToolEvents : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) override;
  std::string last_error() const;

 private:
  mutable Mutex mutex_;
  std::string last_error_ GUARDED_BY(mutex_);
};

// A Kafka tool's client configuration: `own`, the tool's own properties with bootstrap.servers,
// then the --property NAME=VALUE ones (a later one overrides an earlier one), with `events` as
// its event callback (which must outlive the client). The error, a usage error, names the bad
// --property or the property librdkafka refused.
std::expected<std::unique_ptr<RdKafka::Conf>, std::string> kafka_tool_conf(
    kafka::Properties own, const std::vector<std::string>& properties, KafkaToolEvents& events);

// How long a Kafka tool waits for a broker to answer before it gives up (--connect-timeout).
inline constexpr double kConnectSeconds = 5;

// Adds --connect-timeout SECONDS (default kConnectSeconds) to a Kafka tool.
void add_connect_timeout_option(CLI::App* command, double& seconds);

// Adds --bootstrap HOST:PORT,... and --topic TOPIC (both required), and --connect-timeout, to a
// Kafka tool.
void add_kafka_target_options(CLI::App* command, std::string& bootstrap, std::string& topic,
                              const std::string& topic_help, double& connect_seconds);

// Before a Kafka tool starts work: that a broker at `bootstrap` answers within `seconds` and
// that every one of `topics` exists there (one metadata request for all topics, which never
// makes a broker create one). Else says why on stderr, prefixed "neardup COMMAND: ", and returns
// the exit code to stop with: 3 when no broker answered ("no broker answered at
// 127.0.0.1:9092 within 5 s (Connect to ipv4#127.0.0.1:9092 failed: Connection refused)"),
// 2 when a topic is missing (the command line names something that is not there, as a missing
// input file).
std::optional<int> check_kafka_cluster(std::string_view command, RdKafka::Handle& handle,
                                       const KafkaToolEvents& events, const std::string& bootstrap,
                                       const std::vector<std::string>& topics, double seconds);

// Reads a file ("-" reads stdin), or its first max_bytes + 1 bytes when it is larger: enough for
// the pipeline to see it is over input.max_body_bytes (too_large) without holding all of it.
// A directory is an error naming it ("x: is a directory").
std::expected<std::string, std::string> read_file(
    const std::string& path, std::size_t max_bytes = std::numeric_limits<std::size_t>::max() - 1);

// Expands each path: a directory gives its *.html / *.htm files (sorted, not recursive), a
// file gives itself. Errors name the missing path.
std::expected<std::vector<std::string>, std::string> expand_html_inputs(
    const std::vector<std::string>& paths);

// The options of the commands that read page files: FILE|DIR..., --config, --content-type.
struct InputFilesOptions {
  std::vector<std::string> files;
  std::string config_path;
  std::string content_type;
};

void add_input_files_options(CLI::App* command, InputFilesOptions& options,
                             const std::string& files_help);

// Loads the config, expands the inputs and calls visit(config, file, body) for each file in
// order. Returns the exit code: 2 for a config or usage error (nothing visited), 3 when a file
// could not be read (reported on stderr, the others still visited), else 0.
int visit_input_files(
    std::string_view command, const InputFilesOptions& options,
    const std::function<void(const Config&, const std::string& file, const std::string& body)>&
        visit);

// Opens the store at `path` read-only (never creating it; safe beside its writer), or prints
// "neardup COMMAND: <why>" on stderr and returns null.
std::unique_ptr<Index> open_read_only(std::string_view command, const std::string& path);

// Writes one JSON object as a line to stdout. Invalid UTF-8 is replaced, never thrown on.
void print_json_line(const nlohmann::json& object);

// What a command that answers questions (compare, lookup, show, stats) prints: text for a person
// or JSON lines for tools. --json and --text choose; without either, text when stdout is a
// terminal and JSON otherwise, as gh and kubectl do, so that `neardup compare a b | jq` reads
// JSON while the same command typed at a terminal answers in words.
enum class OutputFormat { kText, kJson };

struct OutputOptions {
  bool json = false;
  bool text = false;
  OutputFormat format() const;
};

// Adds --json and --text (excluding each other) to a command.
void add_output_options(CLI::App* command, OutputOptions& options);

// Writes text to stdout as it is.
void print_text(std::string_view text);

}  // namespace neardup::cli
