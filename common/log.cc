#include "common/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <optional>
#include <vector>

namespace neardup {
namespace {

std::mutex g_mutex;
spdlog::sink_ptr g_sink;
spdlog::level::level_enum g_level = spdlog::level::info;
std::atomic<LogFormat> g_format{LogFormat::kText};

std::string timestamp(std::chrono::system_clock::time_point time, bool utc_suffix) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch());
  const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
  std::tm parts{};
  if (utc_suffix) {
    gmtime_r(&seconds, &parts);
  } else {
    localtime_r(&seconds, &parts);
  }
  char text[40];
  std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
  std::snprintf(text + n, sizeof text - n, ".%03d%s", static_cast<int>(ms.count() % 1000),
                utc_suffix ? "Z" : "");
  return text;
}

// Formats every record with format_log_line; the journal check is made once.
class LineFormatter final : public spdlog::formatter {
 public:
  explicit LineFormatter(bool journal) : journal_(journal) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    std::string line = format_log_line(
        g_format.load(std::memory_order_relaxed), journal_, msg.level,
        std::string_view(msg.logger_name.data(), msg.logger_name.size()),
        std::string_view(msg.payload.data(), msg.payload.size()), msg.time);
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LineFormatter>(journal_);
  }

 private:
  bool journal_;
};

spdlog::sink_ptr sink() {
  if (!g_sink) {
    g_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    g_sink->set_formatter(std::make_unique<LineFormatter>(stderr_is_journal()));
  }
  return g_sink;
}

bool key_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool key_char(char c) { return key_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-'; }

// A value as JSON: an unquoted integer, decimal, true or false keeps its type; the rest are
// strings.
nlohmann::ordered_json field_value(std::string_view text, bool quoted) {
  if (!quoted) {
    if (text == "true") return true;
    if (text == "false") return false;
    std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
    const std::size_t dot = digits.find('.');
    const std::string_view whole = digits.substr(0, dot);
    const std::string_view fraction = dot == std::string_view::npos ? "" : digits.substr(dot + 1);
    const auto all_digits = [](std::string_view d) {
      return !d.empty() && d.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (all_digits(whole) && whole.size() <= 18 &&
        (dot == std::string_view::npos || all_digits(fraction))) {
      if (dot == std::string_view::npos) return std::stoll(std::string(text));
      return std::stod(std::string(text));
    }
  }
  return std::string(text);
}

}  // namespace

LogFields split_log_fields(std::string_view message) {
  // The message's words, each a pair or not, where it starts.
  struct Word {
    std::size_t start;
    std::optional<LogField> pair;
  };
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < message.size()) {
    if (message[i] == ' ') {
      ++i;
      continue;
    }
    Word word{.start = i, .pair = std::nullopt};
    std::size_t end = std::min(message.find(' ', i), message.size());
    std::size_t j = i;
    while (j < message.size() && (j == i ? key_start(message[j]) : key_char(message[j]))) ++j;
    if (j > i && j < message.size() && message[j] == '=') {
      LogField field{.key = std::string(message.substr(i, j - i)), .value = {}, .quoted = false};
      if (++j < message.size() && message[j] == '"') {
        // A quoted value, with \" and \\ inside, ends at a quote before a space or the end.
        std::size_t k = j + 1;
        for (; k < message.size() && message[k] != '"'; ++k) {
          if (message[k] == '\\' && k + 1 < message.size()) ++k;
          field.value += message[k];
        }
        if (k < message.size() && (k + 1 == message.size() || message[k + 1] == ' ')) {
          field.quoted = true;
          word.pair = std::move(field);
          end = k + 1;
        }
      } else {
        field.value = std::string(message.substr(j, end - j));
        word.pair = std::move(field);
      }
    }
    words.push_back(std::move(word));
    i = end;
  }
  std::size_t first = words.size();
  while (first > 0 && words[first - 1].pair) --first;
  LogFields split{.text = message, .fields = {}};
  std::vector<std::string_view> keys = {"time", "level", "component", "message"};
  for (std::size_t w = first; w < words.size(); ++w) {
    if (std::find(keys.begin(), keys.end(), words[w].pair->key) != keys.end()) return split;
    keys.push_back(words[w].pair->key);
  }
  if (first == words.size()) return split;
  std::string_view text = message.substr(0, words[first].start);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  split.text = text;
  for (std::size_t w = first; w < words.size(); ++w) {
    split.fields.push_back(std::move(*words[w].pair));
  }
  return split;
}

int syslog_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return 7;
    case spdlog::level::info:
      return 6;
    case spdlog::level::warn:
      return 4;
    case spdlog::level::err:
      return 3;
    default:
      return 2;
  }
}

std::string format_log_line(LogFormat format, bool journal, spdlog::level::level_enum level,
                            std::string_view component, std::string_view message,
                            std::chrono::system_clock::time_point time) {
  const auto level_name = spdlog::level::to_string_view(level);
  std::string line;
  if (journal) {
    // "<N>" as three appends: GCC 12 warns (-Wrestrict) about "<" + std::string.
    line += '<';
    line += static_cast<char>('0' + syslog_priority(level));
    line += '>';
  }
  if (format == LogFormat::kJson) {
    nlohmann::ordered_json object;
    if (!journal) object["time"] = timestamp(time, true);
    object["level"] = std::string_view(level_name.data(), level_name.size());
    object["component"] = component;
    LogFields split = split_log_fields(message);
    object["message"] = split.text;
    for (const LogField& field : split.fields) {
      object[field.key] = field_value(field.value, field.quoted);
    }
    line += object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    if (!journal) line += timestamp(time, false) + " ";
    line.append(level_name.data(), level_name.size());
    line += ' ';
    line += component;
    line += ' ';
    line += message;
  }
  line += '\n';
  return line;
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (!stream || !*stream) return false;
  unsigned long long device = 0, inode = 0;
  if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  return st.st_dev == device && st.st_ino == inode;
}

void set_log_level(LogLevel level) {
  static constexpr spdlog::level::level_enum kLevels[] = {
      spdlog::level::trace, spdlog::level::debug,    spdlog::level::info, spdlog::level::warn,
      spdlog::level::err,   spdlog::level::critical, spdlog::level::off};
  const spdlog::level::level_enum spd = kLevels[static_cast<std::size_t>(level)];
  std::lock_guard lock(g_mutex);
  g_level = spd;
  spdlog::apply_all([&](std::shared_ptr<spdlog::logger> l) { l->set_level(spd); });
}

void set_log_format(LogFormat format) { g_format = format; }

void init_logging(LogLevel level) {
  {
    std::lock_guard lock(g_mutex);
    sink();
  }
  set_log_level(level);
}

std::shared_ptr<spdlog::logger> logger(const std::string& component) {
  std::lock_guard lock(g_mutex);
  if (auto existing = spdlog::get(component)) return existing;
  auto created = std::make_shared<spdlog::logger>(component, sink());
  created->set_level(g_level);
  spdlog::register_logger(created);
  return created;
}

}  // namespace neardup
