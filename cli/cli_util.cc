#include "cli/cli_util.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "common/exit_codes.h"
#include "kafka/admin.h"

namespace neardup::cli {

std::expected<Config, std::string> load_config_or_defaults(const std::string& path) {
  if (path.empty()) return Config{};
  return load_config_file(path);
}

void add_config_option(CLI::App* command, std::string& path) {
  command->add_option("--config", path, "YAML config (see examples/neardup.yaml)")
      ->option_text("FILE")
      ->default_str("built-in defaults");
}

void KafkaToolEvents::event_cb(RdKafka::Event& event) {
  // "1/1 brokers are down" says less than the connection error before it.
  if (event.type() != RdKafka::Event::EVENT_ERROR ||
      event.err() == RdKafka::ERR__ALL_BROKERS_DOWN) {
    return;
  }
  std::string text = event.str();
  // "127.0.0.1:9/bootstrap: Connect to ... (after 0ms in state CONNECT)": the broker is named
  // by the tool's own line, the state is librdkafka's.
  if (const auto colon = text.find("/bootstrap: "); colon != std::string::npos) {
    text.erase(0, colon + 12);
  }
  if (const auto after = text.find(" (after "); after != std::string::npos) text.erase(after);
  MutexLock lock(mutex_);
  last_error_ = std::move(text);
}

std::string KafkaToolEvents::last_error() const {
  MutexLock lock(mutex_);
  return last_error_;
}

std::expected<std::unique_ptr<RdKafka::Conf>, std::string> kafka_tool_conf(
    kafka::Properties own, const std::vector<std::string>& properties, KafkaToolEvents& events) {
  auto extra = kafka::parse_properties(properties);
  if (!extra) return std::unexpected(extra.error());
  own.insert(own.end(), extra->begin(), extra->end());
  auto conf = kafka::make_conf(own);
  if (!conf) return conf;
  if (auto set = kafka::set_callback(**conf, "event_cb", &events); !set) {
    return std::unexpected(set.error());
  }
  return conf;
}

void add_connect_timeout_option(CLI::App* command, double& seconds) {
  command
      ->add_option("--connect-timeout", seconds,
                   "give up (exit 3) when no broker has answered within this many seconds")
      ->option_text("SECONDS")
      ->check(CLI::PositiveNumber);
}

void add_kafka_target_options(CLI::App* command, std::string& bootstrap, std::string& topic,
                              const std::string& topic_help, double& connect_seconds) {
  command->add_option("--bootstrap", bootstrap, "Kafka bootstrap.servers")
      ->required()
      ->option_text("HOST:PORT,...");
  command->add_option("--topic", topic, topic_help)->required()->option_text("TOPIC");
  add_connect_timeout_option(command, connect_seconds);
}

std::optional<int> check_kafka_cluster(std::string_view command, RdKafka::Handle& handle,
                                       const KafkaToolEvents& events, const std::string& bootstrap,
                                       const std::vector<std::string>& topics, double seconds) {
  auto present = kafka::require_topics(handle, topics, bootstrap, static_cast<int>(seconds * 1000));
  if (present) return std::nullopt;
  if (!present.error().unreachable) {
    std::cerr << "neardup " << command << ": " << present.error().message << "\n";
    return kExitUsage;
  }
  handle.poll(0);  // serves the errors librdkafka queued meanwhile (event_cb)
  const std::string last_error = events.last_error();
  char within[32];
  std::snprintf(within, sizeof within, "%g", seconds);
  std::cerr << "neardup " << command << ": no broker answered at " << bootstrap << " within "
            << within << " s (" << (last_error.empty() ? present.error().message : last_error)
            << ")\n";
  return kExitFailure;
}

std::expected<std::string, std::string> read_file(const std::string& path,
                                                  std::size_t max_bytes) {
  std::error_code ec;
  if (path != "-" && std::filesystem::is_directory(path, ec)) {
    return std::unexpected(path + ": is a directory");
  }
  std::FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return std::unexpected(path + ": cannot open for reading: " + std::strerror(errno));
  }
  std::string data;
  char buffer[1 << 16];
  while (data.size() <= max_bytes) {
    const std::size_t want = std::min(sizeof buffer, max_bytes + 1 - data.size());
    const std::size_t got = std::fread(buffer, 1, want, file);
    data.append(buffer, got);
    if (got < want) break;
  }
  const bool failed = std::ferror(file) != 0;
  if (file != stdin) std::fclose(file);
  if (failed) return std::unexpected(path + ": read error");
  return data;
}

std::expected<std::vector<std::string>, std::string> expand_html_inputs(
    const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (path != "-" && fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        auto ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".html" || ext == ".htm")) {
          found.push_back(entry.path().string());
        }
      }
      if (ec) return std::unexpected(path + ": " + ec.message());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (path == "-" || fs::exists(path, ec)) {
      files.push_back(path);
    } else {
      return std::unexpected(path + ": no such file or directory");
    }
  }
  return files;
}

void add_input_files_options(CLI::App* command, InputFilesOptions& options,
                             const std::string& files_help) {
  command->add_option("files", options.files, files_help)->required()->option_text("FILE");
  add_config_option(command, options.config_path);
  command->add_option("--content-type", options.content_type,
                      "HTTP Content-Type to assume for every input")
      ->option_text("TYPE");
}

int visit_input_files(
    std::string_view command, const InputFilesOptions& options,
    const std::function<void(const Config&, const std::string& file, const std::string& body)>&
        visit) {
  auto config = load_config_or_defaults(options.config_path);
  if (!config) {
    std::cerr << "neardup " << command << ": " << config.error() << "\n";
    return 2;
  }
  auto files = expand_html_inputs(options.files);
  if (!files) {
    std::cerr << "neardup " << command << ": " << files.error() << "\n";
    return 2;
  }
  int exit_code = 0;
  for (const auto& file : *files) {
    auto body = read_file(file, config->input.max_body_bytes);
    if (!body) {
      std::cerr << "neardup " << command << ": " << body.error() << "\n";
      exit_code = 3;
      continue;
    }
    visit(*config, file, *body);
  }
  return exit_code;
}

std::unique_ptr<Index> open_read_only(std::string_view command, const std::string& path) {
  StoreConfig config;
  config.path = path;
  auto index = Index::open(config, {.read_only = true});
  if (!index) {
    std::cerr << "neardup " << command << ": " << index.error().message << "\n";
    return nullptr;
  }
  return std::move(*index);
}

void print_json_line(const nlohmann::json& object) {
  std::string line = object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
}

OutputFormat OutputOptions::format() const {
  if (json) return OutputFormat::kJson;
  if (text) return OutputFormat::kText;
  return isatty(STDOUT_FILENO) ? OutputFormat::kText : OutputFormat::kJson;
}

void add_output_options(CLI::App* command, OutputOptions& options) {
  CLI::Option* json = command->add_flag(
      "--json", options.json, "print JSON lines (the default when stdout is not a terminal)");
  command->add_flag("--text", options.text, "print text for a person (the default on a terminal)")
      ->excludes(json);
}

void print_text(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace neardup::cli
