// neardup broker: a Kafka-protocol development cluster on loopback (librdkafka's mock
// cluster), with fault injection from a control file and/or stdin (--stdin only, so that
// `neardup broker &` never stops for terminal input), until SIGTERM/SIGINT. A watcher
// (kafka/mock_watcher.h) warns before a partition outgrows the mock's storage and refuses
// topics it was not told to create.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "common/help.h"
#include "common/log.h"
#include "kafka/admin.h"
#include "kafka/mock_cluster.h"
#include "kafka/mock_watcher.h"

namespace neardup::cli {
namespace {

constexpr const char* kControlHelp =
    R"(Fault-injection commands, one per line appended to --control FILE (or typed on stdin with
--stdin):
  down BROKER_ID|all          disconnect a broker (or every broker) and refuse connections
  up BROKER_ID|all            accept connections again
  rtt BROKER_ID|all MS        add MS milliseconds of round-trip time to a broker
  error API ERROR [COUNT]     fail the next COUNT (default 1) requests of API (Produce, Fetch,
                              OffsetCommit, JoinGroup, ... or its number) with ERROR (a
                              librdkafka error name such as NOT_LEADER_FOR_PARTITION or
                              REQUEST_TIMED_OUT, or its number)
  clear API                   drop the pending injected errors of API
  topic NAME:PARTITIONS       create another topic
Each command is answered on stderr ("ok ..." or "error ...").

Topics: only those given with --topic or the topic command exist. A topic a client asks for
by another name (auto-creation) is refused: logged as an error and reported to clients as
UNKNOWN_TOPIC_OR_PART.

Limits of librdkafka 2.0's mock cluster: it keeps only about 5 MB per partition (older records
are dropped: spread data over partitions; a warning is logged at 4 MiB and at 5 MiB of records
in a partition); a batch larger than that survives only as the first batch of an empty
partition, and is lost together with the next batch appended there; it accepts transactions
but does not apply their offsets to the group nor hide aborted records.)";

std::optional<std::int32_t> parse_broker_id(const std::string& text) {
  if (text == "all") return -1;
  std::int32_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return id;
}

// Runs one control command; returns the answer line.
std::string run_control_command(kafka::MockCluster& cluster, kafka::MockWatcher& watcher,
                                const std::string& line) {
  std::istringstream in(line);
  std::string verb, a, b, c;
  in >> verb >> a >> b >> c;
  auto result = [&](std::expected<void, std::string> outcome) {
    return outcome ? "ok " + line : "error " + line + ": " + outcome.error();
  };
  if (verb == "down" || verb == "up") {
    auto id = parse_broker_id(a);
    if (!id) return "error " + line + ": BROKER_ID must be a number or 'all'";
    return result(verb == "down" ? cluster.set_broker_down(*id) : cluster.set_broker_up(*id));
  }
  if (verb == "rtt") {
    auto id = parse_broker_id(a);
    int ms = 0;
    auto [end, ec] = std::from_chars(b.data(), b.data() + b.size(), ms);
    if (!id || ec != std::errc() || end != b.data() + b.size() || ms < 0) {
      return "error " + line + ": usage: rtt BROKER_ID|all MS";
    }
    if (*id != -1) return result(cluster.set_broker_rtt(*id, ms));
    for (int broker = 1; broker <= cluster.broker_count(); ++broker) {
      if (auto outcome = cluster.set_broker_rtt(broker, ms); !outcome) return result(outcome);
    }
    return result({});
  }
  if (verb == "error") {
    auto api = kafka::api_key_from_text(a);
    auto code = kafka::error_code_from_text(b);
    std::size_t count = 1;
    if (!c.empty()) {
      auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), count);
      if (ec != std::errc() || end != c.data() + c.size()) {
        return "error " + line + ": COUNT must be a number";
      }
    }
    if (!api) return "error " + line + ": unknown API '" + a + "'";
    if (!code) return "error " + line + ": unknown error code '" + b + "'";
    cluster.push_request_errors(*api, *code, count);
    return result({});
  }
  if (verb == "clear") {
    auto api = kafka::api_key_from_text(a);
    if (!api) return "error " + line + ": unknown API '" + a + "'";
    cluster.clear_request_errors(*api);
    return result({});
  }
  if (verb == "topic") {
    auto spec = kafka::parse_topic_spec(a);
    if (!spec) return "error " + line + ": " + spec.error();
    watcher.add_topic(spec->name);
    return result(cluster.create_topic(spec->name, spec->partitions, 1));
  }
  return "error " + line + ": unknown command (see neardup broker --help)";
}

// Splits newly read bytes into complete lines; keeps the unfinished tail for next time.
template <typename OnLine>
void take_lines(std::string& buffer, OnLine&& on_line) {
  std::size_t start = 0;
  for (std::size_t newline; (newline = buffer.find('\n', start)) != std::string::npos;
       start = newline + 1) {
    std::string line = buffer.substr(start, newline - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos && line[0] != '#') on_line(line);
  }
  buffer.erase(0, start);
}

// Reads commands from stdin (when read_stdin, until EOF) and from the control file (polled, new
// bytes only) until `stop` is set.
void serve_control(kafka::MockCluster& cluster, kafka::MockWatcher& watcher,
                   const std::string& control_path, bool read_stdin,
                   const std::atomic<bool>& stop) {
  auto log = logger("broker");
  auto handle = [&](const std::string& line) {
    std::string answer = run_control_command(cluster, watcher, line);
    if (answer.starts_with("ok")) {
      log->info("{}", answer);
    } else {
      log->error("{}", answer);
    }
  };
  bool stdin_open = read_stdin;
  std::string stdin_buffer, file_buffer;
  std::uintmax_t file_offset = 0;
  while (!stop.load()) {
    if (stdin_open) {
      pollfd fd{STDIN_FILENO, POLLIN, 0};
      if (::poll(&fd, 1, 100) > 0) {
        char chunk[4096];
        ssize_t n = ::read(STDIN_FILENO, chunk, sizeof(chunk));
        if (n <= 0) {
          stdin_open = false;
        } else {
          stdin_buffer.append(chunk, static_cast<std::size_t>(n));
          take_lines(stdin_buffer, handle);
        }
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (control_path.empty()) continue;
    std::error_code ec;
    auto size = std::filesystem::file_size(control_path, ec);
    if (ec) continue;
    if (size < file_offset) file_offset = 0;  // truncated or replaced: start over
    if (size == file_offset) continue;
    std::ifstream file(control_path, std::ios::binary);
    file.seekg(static_cast<std::streamoff>(file_offset));
    std::string fresh(size - file_offset, '\0');
    file.read(fresh.data(), static_cast<std::streamsize>(fresh.size()));
    fresh.resize(static_cast<std::size_t>(file.gcount()));
    file_offset += fresh.size();
    file_buffer += fresh;
    take_lines(file_buffer, handle);
  }
}

std::expected<void, std::string> write_atomically(const std::string& path,
                                                  const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) return std::unexpected("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return std::unexpected("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return {};
}

}  // namespace

void register_broker(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::vector<std::string> topics;
    int brokers = 1;
    std::string bootstrap_file;
    std::string control_file;
    bool read_stdin = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "broker", "A Kafka-protocol development cluster on loopback (librdkafka's mock cluster)");
  sub->footer(kControlHelp);
  sub->add_option("--topic", options->topics, "topic to create")->option_text("NAME:PARTITIONS");
  sub->add_option("--brokers", options->brokers, "number of brokers (ids 1..N), 1..16")
      ->option_text("N")
      ->check(CLI::Range(1, 16));
  sub->add_option("--bootstrap-file", options->bootstrap_file,
                  "also write the bootstrap servers to this file (atomically, once ready)")
      ->option_text("FILE");
  sub->add_option("--control", options->control_file,
                  "poll this file for fault-injection commands (each new line is one)")
      ->option_text("FILE");
  sub->add_flag("--stdin", options->read_stdin,
                "also read fault-injection commands from stdin (not by default: a broker in the "
                "background of a shell must not wait for terminal input)");
  set_examples(sub, {"neardup broker --topic pages:4 --topic pages-tagged:4 --topic pages-dead:1 "
                     "--bootstrap-file bootstrap.txt &",
                     "neardup broker --topic pages:1 --control faults.txt &  echo 'down all' >> "
                     "faults.txt"});
  registry.add(sub, [options]() {
    std::vector<kafka::TopicSpec> topics;
    for (const auto& text : options->topics) {
      auto spec = kafka::parse_topic_spec(text);
      if (!spec) {
        std::cerr << "neardup broker: " << spec.error() << "\n";
        return kExitUsage;
      }
      topics.push_back(*spec);
    }
    // Block the stop signals before any thread starts so that only sigwait sees them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    auto cluster = kafka::MockCluster::start(options->brokers);
    if (!cluster) {
      std::cerr << "neardup broker: " << cluster.error() << "\n";
      return kExitFailure;
    }
    for (const auto& topic : topics) {
      if (auto created = (*cluster)->create_topic(topic.name, topic.partitions, 1); !created) {
        std::cerr << "neardup broker: topic " << topic.name << ": " << created.error() << "\n";
        return kExitFailure;
      }
    }
    auto log = logger("broker");
    std::vector<std::string> topic_names;
    for (const auto& topic : topics) topic_names.push_back(topic.name);
    auto watcher = kafka::MockWatcher::start(**cluster, topic_names, [&log](const kafka::WatchEvent& event) {
      using Kind = kafka::WatchEvent::Kind;
      switch (event.kind) {
        case Kind::kNearLimit:
        case Kind::kOverLimit:
          log->warn(
              "partition {}/{} holds {:.1f} MiB of records: {} (librdkafka's mock cluster keeps "
              "about 5 MiB per partition); spread the data over more partitions "
              "(--topic NAME:PARTITIONS)",
              event.topic, event.partition, static_cast<double>(event.bytes) / (1 << 20),
              event.kind == Kind::kNearLimit ? "the oldest records will soon be dropped"
                                             : "the oldest records are being dropped");
          break;
        case Kind::kRefusedTopic:
          log->error(
              "refused topic '{}': a client asked for a topic that was not created (--topic or "
              "the topic command); clients now get UNKNOWN_TOPIC_OR_PART for it",
              event.topic);
          break;
        case Kind::kError:
          log->warn("watcher: {}", event.detail);
          break;
      }
    });
    if (!watcher) {
      std::cerr << "neardup broker: " << watcher.error() << "\n";
      return kExitFailure;
    }
    const std::string bootstrap = (*cluster)->bootstrap_servers();
    std::cout << bootstrap << std::endl;
    if (!options->bootstrap_file.empty()) {
      if (auto written = write_atomically(options->bootstrap_file, bootstrap + "\n"); !written) {
        std::cerr << "neardup broker: " << written.error() << "\n";
        return kExitFailure;
      }
    }
    log->info("ready bootstrap={} brokers={} topics={}", bootstrap, options->brokers,
              topics.size());

    std::atomic<bool> stop{false};
    std::thread control([&] {
      serve_control(**cluster, **watcher, options->control_file, options->read_stdin, stop);
    });
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    log->info("stopping signal={}", signal_number);
    stop = true;
    control.join();
    return kExitOk;
  });
}

}  // namespace neardup::cli
