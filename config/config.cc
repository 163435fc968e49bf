// Strict YAML loading of Config. One table, for_each_key(), names every key with its path and
// its rule; parsing, the unknown-key check, to_yaml, scheme_id and restart_only_changes all walk
// that table, so a key added there is parsed, validated, printed, hashed and diffed alike.
#include "config/config.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <concepts>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/ascii.h"
#include "common/encodings.h"
#include "common/listen_address.h"
#include "common/secret.h"
#include "common/table_counts.h"
#include "config/yaml_gate.h"

namespace neardup {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
constexpr std::uint64_t kTiB = kGiB * 1024;
constexpr std::uint64_t kNoMax = std::numeric_limits<std::uint64_t>::max();

// Message building: cat("must be ", range, ", got ", 7). (GCC 12 has no std::format.)
void append(std::string& out, std::string_view text) { out += text; }
void append(std::string& out, std::integral auto number) { out += std::to_string(number); }

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (append(out, parts), ...);
  return out;
}

// `number` as `digits` lower-case hex digits, zero-padded.
std::string hex(std::uint64_t number, int digits) {
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0 && number != 0; --i, number >>= 4) {
    out[static_cast<std::size_t>(i)] = "0123456789abcdef"[number & 0xf];
  }
  return out;
}

// What a key accepts beyond its C++ type (string, bool, unsigned integer, string map).
struct Key {
  std::string_view path;
  std::uint64_t min = 0;       // integers: smallest allowed value
  std::uint64_t max = kNoMax;  // integers: largest allowed value (also capped by the type)
  bool size = false;           // integers: a byte size; KiB/MiB/GiB/TiB suffixes accepted
  bool duration = false;       // integers: seconds; s/m/h/d/w suffixes accepted
  bool hex = false;            // integers: to_yaml prints 0x hex
  double min_real = 0, max_real = 1;              // reals: the allowed closed range
  bool (*check)(std::string& value) = nullptr;    // strings: accepts (and may normalise) a value
  std::string_view expect = {};                   // strings: what `check` accepts, for errors
  // Scheme keys added after others: scheme_id leaves the key out at this canonical value (the
  // one that fingerprints as before the key existed), so that older schemes keep their ids.
  std::string_view scheme_omits = {};
};

// --- String rules -------------------------------------------------------------------------

bool is_non_empty(std::string& value) { return !value.empty(); }

// Kafka's own rule for topic names (legal characters, at most 249 of them).
bool is_topic_name(std::string& value) {
  if (value.empty() || value.size() > 249 || value == "." || value == "..") return false;
  return std::ranges::all_of(
      value, [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

// "" (no metrics server), host:port, or [ipv6]:port (common/listen_address.h).
bool is_listen_address(std::string& value) {
  return value.empty() || parse_listen_address(value, "metrics.listen").has_value();
}

// A label of an encoding a page may declare (common/encodings.h), matched as the standard says
// (ASCII case-insensitive, surrounding whitespace ignored), becomes its encoding's name, so
// equivalent labels hash to one scheme. "replacement" and "x-user-defined" are left out: neither
// is a usable default for undeclared pages.
bool is_charset_label(std::string& value) {
  const Encoding* encoding = find_encoding(value);
  if (encoding == nullptr || !encoding->declarable) return false;
  value = encoding->name;
  return true;
}

// The names a config file gives the values of each choice, in the order the docs list them.
template <class E>
struct Names;
template <>
struct Names<DenoiseMode> {
  static constexpr std::array<std::pair<DenoiseMode, std::string_view>, 2> values{
      {{DenoiseMode::kMainText, "main_text"}, {DenoiseMode::kAllText, "all_text"}}};
};
template <>
struct Names<Weighting> {
  static constexpr std::array<std::pair<Weighting, std::string_view>, 3> values{
      {{Weighting::kTf, "tf"}, {Weighting::kLogTf, "log_tf"}, {Weighting::kBinary, "binary"}}};
};
template <>
struct Names<CjkTokens> {
  static constexpr std::array<std::pair<CjkTokens, std::string_view>, 2> values{
      {{CjkTokens::kBigrams, "bigrams"}, {CjkTokens::kWords, "words"}}};
};
template <>
struct Names<LogLevel> {
  static constexpr std::array<std::pair<LogLevel, std::string_view>, 7> values{
      {{LogLevel::kTrace, "trace"},
       {LogLevel::kDebug, "debug"},
       {LogLevel::kInfo, "info"},
       {LogLevel::kWarn, "warn"},
       {LogLevel::kError, "error"},
       {LogLevel::kCritical, "critical"},
       {LogLevel::kOff, "off"}}};
};
template <>
struct Names<LogFormat> {
  static constexpr std::array<std::pair<LogFormat, std::string_view>, 2> values{
      {{LogFormat::kText, "text"}, {LogFormat::kJson, "json"}}};
};

template <class E>
std::string_view enum_name(E value) {
  for (const auto& [v, name] : Names<E>::values) {
    if (v == value) return name;
  }
  return "?";
}

constexpr std::string_view kFieldName = "a non-empty field name";
constexpr std::string_view kTopic = "a Kafka topic name (1..249 of a-z A-Z 0-9 . _ -)";

// Every key, in the order of examples/neardup.yaml. C is Config or const Config; f is called
// as f(const Key&, field&) for each.
template <class C, class F>
requires std::same_as<std::remove_const_t<C>, Config>
void for_each_key(C& c, F&& f) {
  f(Key{.path = "kafka.bootstrap_servers",
        .check = is_non_empty,
        .expect = "a non-empty list of host:port"},
    c.kafka.bootstrap_servers);
  f(Key{.path = "kafka.group_id", .check = is_non_empty, .expect = "a non-empty group id"},
    c.kafka.group_id);
  f(Key{.path = "kafka.input_topic", .check = is_topic_name, .expect = kTopic},
    c.kafka.input_topic);
  f(Key{.path = "kafka.output_topic", .check = is_topic_name, .expect = kTopic},
    c.kafka.output_topic);
  f(Key{.path = "kafka.dead_letter_topic", .check = is_topic_name, .expect = kTopic},
    c.kafka.dead_letter_topic);
  f(Key{.path = "kafka.fingerprint_topic", .check = is_topic_name, .expect = kTopic},
    c.kafka.fingerprint_topic);
  f(Key{.path = "kafka.fingerprint_key"}, c.kafka.fingerprint_key);
  f(Key{.path = "kafka.exactly_once"}, c.kafka.exactly_once);
  f(Key{.path = "kafka.properties"}, c.kafka.properties);
  f(Key{.path = "kafka.consumer_properties"}, c.kafka.consumer_properties);
  f(Key{.path = "kafka.producer_properties"}, c.kafka.producer_properties);

  f(Key{.path = "input.fields.url", .check = is_non_empty, .expect = kFieldName},
    c.input.fields.url);
  f(Key{.path = "input.fields.id", .check = is_non_empty, .expect = kFieldName}, c.input.fields.id);
  f(Key{.path = "input.fields.body", .check = is_non_empty, .expect = kFieldName},
    c.input.fields.body);
  f(Key{.path = "input.fields.body_base64", .check = is_non_empty, .expect = kFieldName},
    c.input.fields.body_base64);
  f(Key{.path = "input.fields.content_type", .check = is_non_empty, .expect = kFieldName},
    c.input.fields.content_type);
  f(Key{.path = "input.fields.fetched_at", .check = is_non_empty, .expect = kFieldName},
    c.input.fields.fetched_at);
  f(Key{.path = "input.max_body_bytes", .min = 1, .max = kGiB, .size = true},
    c.input.max_body_bytes);
  f(Key{.path = "input.max_record_bytes", .min = kKiB, .max = 4 * kGiB, .size = true},
    c.input.max_record_bytes);

  f(Key{.path = "output.include_body"}, c.output.include_body);

  f(Key{.path = "decode.default_charset",
        .check = is_charset_label,
        .expect = "a WHATWG encoding label such as utf-8, windows-1252, gbk or shift_jis "
                  "(not replacement or x-user-defined)"},
    c.decode.default_charset);
  f(Key{.path = "decode.detect"}, c.decode.detect);
  f(Key{.path = "decode.prescan_bytes", .min = 512, .max = 64 * kKiB, .size = true},
    c.decode.prescan_bytes);

  f(Key{.path = "denoise.mode"}, c.denoise.mode);
  f(Key{.path = "denoise.max_nodes", .min = 100}, c.denoise.max_nodes);
  f(Key{.path = "denoise.max_millis", .min = 1}, c.denoise.max_millis);

  f(Key{.path = "features.ngram", .min = 1, .max = 8}, c.features.ngram);
  f(Key{.path = "features.weighting"}, c.features.weighting);
  f(Key{.path = "features.cjk", .scheme_omits = "\"words\""}, c.features.cjk);
  f(Key{.path = "features.stop_words"}, c.features.stop_words);
  f(Key{.path = "features.min_features", .min = 1, .max = 100'000}, c.features.min_features);
  f(Key{.path = "features.max_text_bytes", .min = kKiB, .max = kGiB, .size = true},
    c.features.max_text_bytes);

  f(Key{.path = "fingerprint.seed", .hex = true}, c.fingerprint.seed);

  f(Key{.path = "minhash.enabled"}, c.minhash.enabled);
  f(Key{.path = "minhash.shingle", .min = 1, .max = 16}, c.minhash.shingle);
  f(Key{.path = "minhash.hashes", .min = 16, .max = 1024}, c.minhash.hashes);
  f(Key{.path = "minhash.bands", .min = 1, .max = 1024}, c.minhash.bands);
  f(Key{.path = "minhash.rows", .min = 1, .max = 16}, c.minhash.rows);

  f(Key{.path = "dedup.max_distance", .max = 16}, c.dedup.max_distance);
  f(Key{.path = "dedup.min_similarity", .min_real = 0.01, .max_real = 1}, c.dedup.min_similarity);

  f(Key{.path = "store.path", .check = is_non_empty, .expect = "a non-empty directory path"},
    c.store.path);
  f(Key{.path = "store.design_k", .max = 16}, c.store.design_k);
  f(Key{.path = "store.expected_documents", .min = 1}, c.store.expected_documents);
  f(Key{.path = "store.tables"}, c.store.tables);
  // The map is one mapping of the process's address space (128 TiB on x86-64 Linux, shared
  // with everything else): more cannot be mapped.
  f(Key{.path = "store.map_size", .min = kMiB, .max = 64 * kTiB, .size = true},
    c.store.map_size);
  f(Key{.path = "store.max_map_size", .min = kMiB, .max = 64 * kTiB, .size = true},
    c.store.max_map_size);
  f(Key{.path = "store.sync"}, c.store.sync);
  f(Key{.path = "store.retention", .duration = true}, c.store.retention_seconds);

  f(Key{.path = "pipeline.threads", .max = 1024}, c.pipeline.threads);
  f(Key{.path = "pipeline.max_in_flight", .min = 1}, c.pipeline.max_in_flight);
  f(Key{.path = "pipeline.batch_size", .min = 1, .max = 100'000}, c.pipeline.batch_size);
  f(Key{.path = "pipeline.batch_delay_ms", .max = 60'000}, c.pipeline.batch_delay_ms);

  f(Key{.path = "metrics.listen",
        .check = is_listen_address,
        .expect = "host:port (port 0..65535, 0 for any free one; IPv6 as [::1]:port) or \"\" "
                  "for no metrics server"},
    c.metrics.listen);
  f(Key{.path = "metrics.queries"}, c.metrics.queries);

  f(Key{.path = "log.level"}, c.log.level);
  f(Key{.path = "log.format"}, c.log.format);
}

// --- Errors -------------------------------------------------------------------------------

// Collects "line N: path: message" lines; the line is left out where yaml-cpp has no mark.
class Errors {
 public:
  void add(const YAML::Mark& mark, std::string_view path, std::string_view message) {
    if (!text_.empty()) text_ += '\n';
    if (!mark.is_null()) text_ += cat("line ", mark.line + 1, ": ");
    text_ += cat(path.empty() ? "top level" : path, ": ", message);
  }
  bool empty() const { return text_.empty(); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// A key found in the document: its key node (for the line of unknown or duplicate keys) and
// its value node.
struct Found {
  YAML::Node key;
  YAML::Node value;

  // The value's line, or the key's where the value has none (`ngram:` with nothing after it).
  YAML::Mark mark() const { return value.Mark().is_null() ? key.Mark() : value.Mark(); }
};

std::string describe(const YAML::Node& node, bool quote) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar:
      break;
  }
  return quote ? cat("\"", node.Scalar(), "\"") : node.Scalar();
}

// --- Integers and sizes -------------------------------------------------------------------

// The shortest decimal text that reads back as the same double ("0.5", "1").
std::string canonical_real(double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string("nan");
}

// 1GiB for an exact multiple of a binary unit, else decimal digits.
std::string format_size(std::uint64_t bytes) {
  constexpr std::array<std::pair<std::uint64_t, std::string_view>, 4> kUnits = {
      {{kTiB, "TiB"}, {kGiB, "GiB"}, {kMiB, "MiB"}, {kKiB, "KiB"}}};
  for (const auto& [unit, suffix] : kUnits) {
    if (bytes >= unit && bytes % unit == 0) return cat(bytes / unit, suffix);
  }
  return std::to_string(bytes);
}

std::string range_text(const Key& key, std::uint64_t max) {
  auto number = [&](std::uint64_t n) { return key.size ? format_size(n) : std::to_string(n); };
  if (max == kNoMax && key.min > 0) return ">= " + number(key.min);
  return number(key.min) + ".." + number(max);
}

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 5> kSizeUnits = {
    {{"B", 1}, {"KiB", kKiB}, {"MiB", kMiB}, {"GiB", kGiB}, {"TiB", kTiB}}};
constexpr std::array<std::pair<std::string_view, std::uint64_t>, 5> kDurationUnits = {
    {{"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 7 * 86400}}};

// 30d for an exact multiple of a unit (the largest), else seconds.
std::string format_duration(std::uint64_t seconds) {
  for (auto unit = kDurationUnits.rbegin(); unit != kDurationUnits.rend(); ++unit) {
    if (seconds >= unit->second && seconds % unit->second == 0) {
      return cat(seconds / unit->second, unit->first);
    }
  }
  return std::to_string(seconds);
}

struct ParsedInteger {
  enum class Outcome { kOk, kNotInteger, kOutOfRange } outcome = Outcome::kNotInteger;
  std::uint64_t value = 0;
};

// Decimal or 0x hex; for sizes, decimal with an optional KiB/MiB/GiB/TiB (or B) suffix,
// optionally after one space. A minus sign or a value past 2^64-1 is out of range.
ParsedInteger parse_integer(std::string_view text, bool size, bool duration = false) {
  using Outcome = ParsedInteger::Outcome;
  ParsedInteger result;
  if (text.starts_with('-')) {
    std::string_view digits = text.substr(1);
    bool all_digits = !digits.empty() &&
                      std::ranges::all_of(digits, [](unsigned char c) { return std::isdigit(c); });
    if (all_digits) result.outcome = Outcome::kOutOfRange;
    return result;
  }
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    base = 16;
    text.remove_prefix(2);
  }
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, result.value, base);
  if (rest == text.data()) return result;  // no digits
  if (ec == std::errc::result_out_of_range) {
    result.outcome = Outcome::kOutOfRange;
    return result;
  }
  std::string_view suffix(rest, end);
  if (!suffix.empty()) {
    if (!(size || duration) || base != 10) return result;
    if (suffix.starts_with(' ')) suffix.remove_prefix(1);
    const auto& units = duration ? kDurationUnits : kSizeUnits;
    auto unit =
        std::ranges::find(units, suffix, &std::pair<std::string_view, std::uint64_t>::first);
    if (unit == units.end()) return result;
    if (result.value > kNoMax / unit->second) {
      result.outcome = Outcome::kOutOfRange;
      return result;
    }
    result.value *= unit->second;
  }
  result.outcome = Outcome::kOk;
  return result;
}

// --- Readers: one per field type; each reports its own errors -----------------------------

template <std::unsigned_integral T>
void read(const Found& found, const Key& key, T& field, Errors& errors) {
  const std::uint64_t max = std::min<std::uint64_t>(key.max, std::numeric_limits<T>::max());
  const std::string range = range_text(key, max);
  ParsedInteger parsed;
  if (found.value.IsScalar()) parsed = parse_integer(found.value.Scalar(), key.size, key.duration);
  if (parsed.outcome == ParsedInteger::Outcome::kNotInteger) {
    std::string_view kind = key.size       ? "a size (bytes, or with KiB, MiB, GiB, TiB)"
                            : key.duration ? "a duration (seconds, or with s, m, h, d, w)"
                                           : "an integer";
    errors.add(found.mark(), key.path,
               cat("must be ", kind, " in ", range, ", got ", describe(found.value, false)));
  } else if (parsed.outcome == ParsedInteger::Outcome::kOutOfRange || parsed.value < key.min ||
             parsed.value > max) {
    errors.add(found.mark(), key.path, cat("must be ", range, ", got ", found.value.Scalar()));
  } else {
    field = static_cast<T>(parsed.value);
  }
}

// A decimal number such as 0.5 (also 1, .5, 5e-1) within [min_real, max_real].
void read(const Found& found, const Key& key, double& field, Errors& errors) {
  const std::string range = cat(canonical_real(key.min_real), "..", canonical_real(key.max_real));
  double value = 0;
  bool number = false;
  if (found.value.IsScalar()) {
    const std::string& text = found.value.Scalar();
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    number = ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
  }
  if (!number) {
    errors.add(found.mark(), key.path,
               cat("must be a number in ", range, ", got ", describe(found.value, false)));
  } else if (value < key.min_real || value > key.max_real) {
    errors.add(found.mark(), key.path, cat("must be ", range, ", got ", found.value.Scalar()));
  } else {
    field = value;
  }
}

// YAML 1.1 booleans, as yaml-cpp reads them: true/false, yes/no, on/off, any case.
void read(const Found& found, const Key& key, bool& field, Errors& errors) {
  const std::string text = found.value.IsScalar() ? ascii_lowercase(found.value.Scalar()) : "";
  if (text == "true" || text == "yes" || text == "on") {
    field = true;
  } else if (text == "false" || text == "no" || text == "off") {
    field = false;
  } else {
    errors.add(found.mark(), key.path,
               cat("must be true or false, got ", describe(found.value, false)));
  }
}

std::string join(std::span<const std::string_view> words, std::string_view separator) {
  std::string out;
  for (std::string_view word : words) {
    if (!out.empty()) out += separator;
    out += word;
  }
  return out;
}

template <class E>
requires std::is_enum_v<E>
void read(const Found& found, const Key& key, E& field, Errors& errors) {
  std::vector<std::string_view> names;
  for (const auto& [value, name] : Names<E>::values) {
    if (found.value.IsScalar() && found.value.Scalar() == name) {
      field = value;
      return;
    }
    names.push_back(name);
  }
  errors.add(found.mark(), key.path,
             cat("must be one of ", join(names, ", "), ", got ", describe(found.value, true)));
}

void read(const Found& found, const Key& key, std::string& field, Errors& errors) {
  std::string value = found.value.IsScalar() ? found.value.Scalar() : std::string();
  if (!found.value.IsScalar() || (key.check != nullptr && !key.check(value))) {
    errors.add(found.mark(), key.path,
               cat("must be ", key.expect.empty() ? "a string" : key.expect, ", got ",
                   describe(found.value, true)));
    return;
  }
  field = std::move(value);
}

// librdkafka properties that neardup sets itself, and why.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kManagedProperties = {{
    {"bootstrap.servers", "set kafka.bootstrap_servers instead"},
    {"metadata.broker.list", "set kafka.bootstrap_servers instead"},
    {"group.id", "set kafka.group_id instead"},
    {"enable.auto.offset.store",
     "managed by neardup, which stores an offset only once its output is delivered"},
}};

// A property value: a scalar, or {file: PATH} / {env: NAME}.
std::optional<PropertyValue> property_value(const YAML::Node& node) {
  if (node.IsScalar()) return PropertyValue(node.Scalar());
  if (!node.IsMap() || node.size() != 1) return std::nullopt;
  const auto entry = node.begin();
  if (!entry->first.IsScalar() || !entry->second.IsScalar() || entry->second.Scalar().empty()) {
    return std::nullopt;
  }
  if (entry->first.Scalar() == "file") {
    return PropertyValue(PropertyValue::Source::kFile, entry->second.Scalar());
  }
  if (entry->first.Scalar() == "env") {
    return PropertyValue(PropertyValue::Source::kEnv, entry->second.Scalar());
  }
  return std::nullopt;
}

void read(const Found& found, const Key& key, PropertyValue& field, Errors& errors) {
  if (found.value.IsNull()) {
    field = PropertyValue();
  } else if (auto value = property_value(found.value)) {
    field = std::move(*value);
  } else {
    errors.add(found.mark(), key.path,
               cat("must be a string, or {file: PATH} or {env: NAME}, got ",
                   describe(found.value, false)));
  }
}

void read(const Found& found, const Key& key, PropertyMap& field, Errors& errors) {
  const YAML::Node& node = found.value;
  if (node.IsNull()) {
    field.clear();
    return;
  }
  if (!node.IsMap()) {
    errors.add(
        found.mark(), key.path,
        cat("must be a map of librdkafka property names to values, got ", describe(node, false)));
    return;
  }
  PropertyMap properties;
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    const std::string path = cat(key.path, ".", name);
    auto managed = std::ranges::find(kManagedProperties, name,
                                     &std::pair<std::string_view, std::string_view>::first);
    if (name.empty()) {
      errors.add(entry.first.Mark(), key.path, "property names must be non-empty strings");
    } else if (properties.contains(name)) {
      errors.add(entry.first.Mark(), path, "duplicate key");
    } else if (managed != kManagedProperties.end()) {
      errors.add(entry.first.Mark(), path, managed->second);
    } else if (auto value = property_value(entry.second)) {
      properties[name] = std::move(*value);
    } else {
      errors.add(entry.first.Mark(), path,
                 cat("must be a string, number or boolean, or {file: PATH} or {env: NAME}, got ",
                     describe(entry.second, false)));
    }
  }
  field = std::move(properties);
}

// --- The shape of the document: sections and leaves ---------------------------------------

struct Schema {
  std::vector<std::string> leaves;  // every key path, in table order
  std::set<std::string> sections;   // every proper prefix: "kafka", "input", "input.fields", ...

  bool is_leaf(std::string_view path) const {
    return std::ranges::find(leaves, path) != leaves.end();
  }

  // The names directly under a section ("" for the top level).
  std::vector<std::string> children(std::string_view section) const {
    std::vector<std::string> names;
    auto add = [&](std::string_view path) {
      std::string_view rest = path;
      if (!section.empty()) {
        if (!path.starts_with(section) || path.size() <= section.size() ||
            path[section.size()] != '.') {
          return;
        }
        rest = path.substr(section.size() + 1);
      }
      std::string name(rest.substr(0, rest.find('.')));
      if (std::ranges::find(names, name) == names.end()) names.push_back(std::move(name));
    };
    for (const std::string& leaf : leaves) add(leaf);
    return names;
  }
};

const Schema& schema() {
  static const Schema instance = [] {
    Schema s;
    const Config defaults;
    for_each_key(defaults, [&](const Key& key, const auto&) {
      s.leaves.emplace_back(key.path);
      for (std::size_t dot = key.path.find('.'); dot != std::string_view::npos;
           dot = key.path.find('.', dot + 1)) {
        s.sections.emplace(key.path.substr(0, dot));
      }
    });
    return s;
  }();
  return instance;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string join_path(std::string_view section, std::string_view name) {
  return section.empty() ? std::string(name) : cat(section, ".", name);
}

// " (did you mean features.ngram?)" for a near-miss among the section's own keys, or for the
// same name in another section; "" when nothing is close.
std::string did_you_mean(std::string_view section, std::string_view name) {
  const Schema& s = schema();
  if (s.is_leaf(join_path(section, name)) || s.sections.contains(join_path(section, name))) {
    // A dotted key such as `features.ngram: 3` at the top level.
    return " (write sections as nested maps, not dotted keys)";
  }
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, name.size() / 3) + 1;
  for (const std::string& child : s.children(section)) {
    std::size_t distance = edit_distance(name, child);
    if (distance < best_distance) {
      best_distance = distance;
      best = join_path(section, child);
    }
  }
  if (best.empty()) {
    const std::string tail = cat(".", name);
    for (const std::string& leaf : s.leaves) {
      if (leaf.ends_with(tail)) {
        best = leaf;
        break;
      }
    }
    for (const std::string& other : s.sections) {
      if (best.empty() && other.ends_with(tail)) best = other;
    }
  }
  return best.empty() ? std::string() : cat(" (did you mean ", best, "?)");
}

// Checks the shape of `node` (a section) and records every known key under it in `found`.
void collect(const YAML::Node& node, const std::string& section,
             std::map<std::string, Found>& found, Errors& errors) {
  if (node.IsNull()) return;  // an empty section keeps its defaults
  if (!node.IsMap()) {
    std::string sections = section.empty() ? "a map of sections" : "a map";
    errors.add(node.Mark(), section, cat("must be ", sections, ", got ", describe(node, false)));
    return;
  }
  const Schema& s = schema();
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      errors.add(entry.first.Mark(), section,
                 cat("keys must be names, got ", describe(entry.first, false)));
      continue;
    }
    const std::string& name = entry.first.Scalar();
    const std::string path = join_path(section, name);
    // A dotted name is never a key: `features.ngram: 3` must be written nested.
    const bool plain = name.find('.') == std::string::npos;
    if (!seen.insert(name).second) {
      errors.add(entry.first.Mark(), path, "duplicate key");
    } else if (plain && s.is_leaf(path)) {
      found[path] = Found{entry.first, entry.second};
    } else if (plain && s.sections.contains(path)) {
      collect(entry.second, path, found, errors);
    } else {
      errors.add(entry.first.Mark(), path, "unknown key" + did_you_mean(section, name));
    }
  }
}

// --- Rules across keys ---------------------------------------------------------------------

YAML::Mark mark_of(const std::map<std::string, Found>& found, std::string_view path) {
  auto it = found.find(std::string(path));
  return it == found.end() ? YAML::Mark::null_mark() : it->second.mark();
}

void check_distinct(std::span<const std::pair<std::string_view, const std::string*>> keys,
                    const std::map<std::string, Found>& found, Errors& errors) {
  for (std::size_t j = 1; j < keys.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (*keys[i].second == *keys[j].second) {
        errors.add(mark_of(found, keys[j].first), keys[j].first,
                   cat("must differ from ", keys[i].first, " (both \"", *keys[j].second, "\")"));
        break;
      }
    }
  }
}

void check_across_keys(const Config& c, const std::map<std::string, Found>& found, Errors& errors) {
  const std::array<std::pair<std::string_view, const std::string*>, 6> fields = {{
      {"input.fields.url", &c.input.fields.url},
      {"input.fields.id", &c.input.fields.id},
      {"input.fields.body", &c.input.fields.body},
      {"input.fields.body_base64", &c.input.fields.body_base64},
      {"input.fields.content_type", &c.input.fields.content_type},
      {"input.fields.fetched_at", &c.input.fields.fetched_at},
  }};
  check_distinct(fields, found, errors);
  const std::array<std::pair<std::string_view, const std::string*>, 4> topics = {{
      {"kafka.input_topic", &c.kafka.input_topic},
      {"kafka.output_topic", &c.kafka.output_topic},
      {"kafka.dead_letter_topic", &c.kafka.dead_letter_topic},
      {"kafka.fingerprint_topic", &c.kafka.fingerprint_topic},
  }};
  check_distinct(topics, found, errors);

  if (c.dedup.max_distance > c.store.design_k) {
    errors.add(
        mark_of(found, "dedup.max_distance"), "dedup.max_distance",
        cat("must be <= store.design_k (", c.store.design_k, "), got ", c.dedup.max_distance));
  }
  if (c.minhash.bands * c.minhash.rows > c.minhash.hashes) {
    errors.add(mark_of(found, "minhash.bands"), "minhash.bands",
               cat("bands x rows (", c.minhash.bands, " x ", c.minhash.rows,
                   ") must be <= minhash.hashes (", c.minhash.hashes, ")"));
  }
  if (c.store.max_map_size < c.store.map_size) {
    errors.add(mark_of(found, "store.max_map_size"), "store.max_map_size",
               cat("must be >= store.map_size (", format_size(c.store.map_size), "), got ",
                   format_size(c.store.max_map_size)));
  }
  if (c.store.tables != 0) {
    const std::vector<std::uint64_t> counts = allowed_table_counts(c.store.design_k);
    if (std::ranges::find(counts, c.store.tables) == counts.end()) {
      std::string list;
      for (std::uint64_t n : counts) list += cat(list.empty() ? "" : ", ", n);
      errors.add(mark_of(found, "store.tables"), "store.tables",
                 cat("must be 0 (derived from store.expected_documents) or C(k + r, r) for some r "
                     ">= 1 with k = store.design_k = ",
                     c.store.design_k, ", at most ", kMaxTables, " (", list.empty() ? "none" : list,
                     "), got ", c.store.tables));
    }
  }
}

// --- Canonical text of values (scheme_id, restart_only_changes, to_yaml) -------------------

// YAML double-quoted: \\, \" and control bytes escaped; other bytes as they are.
std::string quote(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += cat("\\x", hex(c, 2));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + '"';
}

std::string canonical(const std::string& value) { return quote(value); }
std::string canonical(bool value) { return value ? "true" : "false"; }
std::string canonical(std::unsigned_integral auto value) { return std::to_string(value); }
std::string canonical(double value) { return canonical_real(value); }
template <class E>
requires std::is_enum_v<E> std::string canonical(E value) { return quote(enum_name(value)); }
std::string canonical(const PropertyValue& value) {
  switch (value.source) {
    case PropertyValue::Source::kFile:
      return cat("{file: ", quote(value.text), "}");
    case PropertyValue::Source::kEnv:
      return cat("{env: ", quote(value.text), "}");
    case PropertyValue::Source::kText:
      break;
  }
  return quote(value.text);
}
std::string canonical(const PropertyMap& value) {
  std::string out = "{";
  for (const auto& [name, property] : value) {
    if (out.size() > 1) out += ", ";
    out += cat(quote(name), ": ", canonical(property));
  }
  return out + "}";
}

// canonical(), but the text of secret properties is left out: what to_yaml prints.
template <class T>
std::string printable(const T& value) {
  return canonical(value);
}
std::string printable(const PropertyValue& value) {  // kafka.fingerprint_key: a secret
  if (value.source == PropertyValue::Source::kText && !value.text.empty()) {
    return canonical(PropertyValue("<redacted>"));
  }
  return canonical(value);
}
std::string printable(const PropertyMap& value) {
  PropertyMap shown = value;
  for (auto& [name, property] : shown) {
    if (is_secret_property(name) && property.source == PropertyValue::Source::kText) {
      property.text = "<redacted>";
    }
  }
  return canonical(shown);
}

// Reads `path` as a stream (a file, pipe, FIFO or device alike) up to max_bytes + 1 bytes: a
// longer one is known to be too long without reading the rest, and an endless one (/dev/zero)
// ends there. The error is the system's reason.
std::expected<std::string, std::string> read_at_most(const std::string& path,
                                                     std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(std::string(std::strerror(errno)));
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, max_bytes + 1 - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return std::unexpected(std::string(std::strerror(error)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

bool changes_fingerprints(std::string_view path) {
  return path.starts_with("decode.") || path.starts_with("denoise.") ||
         path.starts_with("features.") || path.starts_with("fingerprint.") ||
         path.starts_with("minhash.");
}

}  // namespace

std::string_view name_of(DenoiseMode value) { return enum_name(value); }
std::string_view name_of(Weighting value) { return enum_name(value); }
std::string_view name_of(CjkTokens value) { return enum_name(value); }
std::string_view name_of(LogLevel value) { return enum_name(value); }
std::string_view name_of(LogFormat value) { return enum_name(value); }

std::expected<std::string, std::string> resolve_property(const PropertyValue& value) {
  switch (value.source) {
    case PropertyValue::Source::kText:
      return value.text;
    case PropertyValue::Source::kEnv: {
      const char* text = std::getenv(value.text.c_str());
      if (text == nullptr)
        return std::unexpected(cat("environment variable ", value.text, " is not set"));
      return std::string(text);
    }
    case PropertyValue::Source::kFile:
      break;
  }
  const std::size_t max_bytes = YamlLimits{}.max_bytes;
  auto text = read_at_most(value.text, max_bytes);
  if (!text) return std::unexpected(cat("file ", value.text, ": cannot read: ", text.error()));
  if (text->size() > max_bytes) {
    return std::unexpected(cat("file ", value.text, ": more than ", max_bytes,
                               " bytes; a property is at most ", max_bytes));
  }
  std::string contents = std::move(*text);
  if (contents.ends_with("\r\n")) {
    contents.resize(contents.size() - 2);
  } else if (contents.ends_with('\n')) {
    contents.pop_back();
  }
  return contents;
}

std::expected<Config, std::string> parse_config(const std::string& yaml_text) {
  // libyaml checks the text first (config/yaml_gate.h): yaml-cpp sees only well-formed,
  // bounded, alias-free single documents.
  auto shape = check_yaml(yaml_text);
  if (!shape) return std::unexpected(shape.error());
  if (shape->documents > 1) {
    return std::unexpected(cat("line ", shape->second_document_line,
                               ": top level: must be one YAML document, found ",
                               shape->documents));
  }
  try {
    YAML::Node document;
    try {
      document = YAML::Load(yaml_text);
    } catch (const YAML::ParserException& e) {
      return std::unexpected(cat("line ", e.mark.line + 1, ", column ", e.mark.column + 1,
                                 ": YAML syntax error: ", e.msg));
    }
    Errors errors;
    std::map<std::string, Found> found;
    if (shape->documents == 1) collect(document, "", found, errors);

    Config config;
    for_each_key(config, [&](const Key& key, auto& field) {
      auto it = found.find(std::string(key.path));
      if (it != found.end()) read(it->second, key, field, errors);
    });
    // Rules across keys only make sense between valid values.
    if (errors.empty()) check_across_keys(config, found, errors);
    if (!errors.empty()) return std::unexpected(errors.text());
    return config;
  } catch (const YAML::Exception& e) {
    // Not expected from the calls above; reported rather than lost if yaml-cpp disagrees.
    return std::unexpected(cat("YAML error: ", e.what()));
  }
}

std::expected<Config, std::string> load_config_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return std::unexpected(cat(path, ": cannot read: is a directory"));
  }
  const std::size_t max_bytes = YamlLimits{}.max_bytes;
  auto text = read_at_most(path, max_bytes);
  if (!text) return std::unexpected(cat(path, ": cannot read: ", text.error()));
  if (text->size() > max_bytes) {
    return std::unexpected(
        cat(path, ": more than ", max_bytes, " bytes; a config is at most ", max_bytes));
  }
  auto config = parse_config(*text);
  if (config) return config;
  std::string message;
  std::istringstream lines(config.error());
  for (std::string line; std::getline(lines, line);) {
    if (!message.empty()) message += '\n';
    message += cat(path, ": ", line);
  }
  return std::unexpected(message);
}

std::string scheme_id(const Config& config) {
  std::string text = "neardup-scheme-v3\n";
  for_each_key(config, [&](const Key& key, const auto& field) {
    if (!changes_fingerprints(key.path)) return;
    const std::string value = canonical(field);
    if (value != key.scheme_omits) text += cat(key.path, "=", value, "\n");
  });
  const XXH64_hash_t hash = XXH3_64bits(text.data(), text.size());
  return "s-" + hex(hash >> 32, 8);
}

std::vector<std::string> restart_only_changes(const Config& a, const Config& b) {
  const std::vector<Setting> before = config_settings(a);
  const std::vector<Setting> after = config_settings(b);
  std::vector<std::string> changed;
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (is_restart_only(before[i].path) && before[i].value != after[i].value) {
      changed.emplace_back(before[i].path);
    }
  }
  return changed;
}

std::string to_yaml(const Config& config) {
  std::string out = cat("# neardup configuration (scheme ", scheme_id(config), ")\n");
  std::vector<std::string_view> open;  // the sections of the previous key
  for_each_key(config, [&](const Key& key, const auto& field) {
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
      std::size_t dot = key.path.find('.', start);
      parts.push_back(key.path.substr(start, dot - start));
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    std::size_t depth = 0;
    while (depth < open.size() && depth + 1 < parts.size() && open[depth] == parts[depth]) {
      ++depth;
    }
    open.resize(depth);
    for (; depth + 1 < parts.size(); ++depth) {
      out += cat(std::string(2 * depth, ' '), parts[depth], ":\n");
      open.push_back(parts[depth]);
    }
    std::string value = printable(field);
    if constexpr (std::is_integral_v<std::remove_cvref_t<decltype(field)>> &&
                  !std::is_same_v<std::remove_cvref_t<decltype(field)>, bool>) {
      if (key.size) value = format_size(field);
      if (key.duration) value = format_duration(field);
      if (key.hex) value = "0x" + hex(field, 16);
    }
    out += cat(std::string(2 * depth, ' '), parts.back(), ": ", value, "\n");
  });
  return out;
}

std::vector<Setting> config_settings(const Config& config) {
  std::vector<Setting> out;
  for_each_key(config, [&](const Key& key, const auto& field) {
    out.push_back({std::string(key.path), canonical(field)});
  });
  return out;
}

std::vector<std::string> config_warnings(const Config& config) {
  // property, lower-cased weakening value, the risk.
  struct Weak {
    std::string_view name, value, risk;
  };
  static constexpr Weak kWeak[] = {
      {"acks", "0", "outputs are not acknowledged by the broker: lost when it fails"},
      {"acks", "1", "an output acknowledged by one broker is lost when it fails before it is "
                    "replicated, after neardupd committed its input"},
      {"request.required.acks", "0", "outputs are not acknowledged by the broker"},
      {"request.required.acks", "1", "an acknowledged output can be lost with its leader"},
      {"enable.idempotence", "false", "a retried send can publish an output twice in a row"},
      {"isolation.level", "read_uncommitted",
       "pages of aborted transactions in the input are read and tagged"},
      {"auto.offset.reset", "latest", "a new group or an expired offset skips every page "
                                      "already in the input topic"},
      {"auto.offset.reset", "largest", "a new group or an expired offset skips every page "
                                       "already in the input topic"},
      {"auto.offset.reset", "end", "a new group or an expired offset skips every page already "
                                   "in the input topic"},
  };
  std::vector<std::string> warnings;
  for (const auto& [map, path] :
       {std::pair{&config.kafka.properties, "kafka.properties"},
        std::pair{&config.kafka.consumer_properties, "kafka.consumer_properties"},
        std::pair{&config.kafka.producer_properties, "kafka.producer_properties"}}) {
    for (const auto& [name, value] : *map) {
      if (value.source != PropertyValue::Source::kText) continue;
      const std::string lower = ascii_lowercase(value.text);
      for (const Weak& weak : kWeak) {
        if (name == weak.name && lower == weak.value) {
          warnings.push_back(cat(path, ".", name, ": ", value.text, ": ", weak.risk));
        }
      }
    }
  }
  return warnings;
}

bool is_restart_only(std::string_view path) {
  return path.starts_with("kafka.") || path.starts_with("store.") || path.starts_with("metrics.") ||
         path == "pipeline.threads";
}

void keep_restart_only(Config& next, const Config& running) {
  // Both walks visit the same keys in the same order: the running value of each restart-only
  // key goes to the same key of `next`.
  std::vector<const void*> values;
  for_each_key(running, [&](const Key&, const auto& field) { values.push_back(&field); });
  std::size_t i = 0;
  for_each_key(next, [&](const Key& key, auto& field) {
    using Field = std::remove_reference_t<decltype(field)>;
    if (is_restart_only(key.path)) field = *static_cast<const Field*>(values[i]);
    ++i;
  });
}

}  // namespace neardup
