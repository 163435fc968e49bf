// The table of every configuration key (config.h), for_each_key(), with what reading, printing
// and hashing them share: the rules of string values, the names of enum values, and the text of
// sizes and durations. config.cc reads a file by it; config_text.cc prints, hashes and diffs by
// it. Internal to config/.
#pragma once

#include <array>
#include <charconv>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "common/ascii.h"
#include "common/encodings.h"
#include "common/listen_address.h"
#include "config/config.h"

namespace neardup::config_keys {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
constexpr std::uint64_t kTiB = kGiB * 1024;
constexpr std::uint64_t kNoMax = std::numeric_limits<std::uint64_t>::max();

// Message building: cat("must be ", range, ", got ", 7). (GCC 12 has no std::format.)
inline void append(std::string& out, std::string_view text) { out += text; }
inline void append(std::string& out, std::integral auto number) { out += std::to_string(number); }

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (append(out, parts), ...);
  return out;
}

// `number` as `digits` lower-case hex digits, zero-padded.
inline std::string hex(std::uint64_t number, int digits) {
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
  // Integers whose 0 means unset: scheme_id hashes 0 as this value (the key's value before it
  // could be unset), so that older schemes keep their ids.
  std::string_view scheme_unset = {};
};

// --- String rules -------------------------------------------------------------------------

inline bool is_non_empty(std::string& value) { return !value.empty(); }

// Kafka's own rule for topic names (legal characters, at most 249 of them).
inline bool is_topic_name(std::string& value) {
  if (value.empty() || value.size() > 249 || value == "." || value == "..") return false;
  return std::ranges::all_of(
      value, [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

// "" (no metrics server), host:port, or [ipv6]:port (common/listen_address.h).
inline bool is_listen_address(std::string& value) {
  return value.empty() || parse_listen_address(value, "metrics.listen").has_value();
}

// A label of an encoding a page may declare (common/encodings.h), matched as the standard says
// (ASCII case-insensitive, surrounding whitespace ignored), becomes its encoding's name, so
// equivalent labels hash to one scheme. "replacement" and "x-user-defined" are left out: neither
// is a usable default for undeclared pages.
inline bool is_charset_label(std::string& value) {
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
  static constexpr std::array<std::pair<Weighting, std::string_view>, 4> values{
      {{Weighting::kTf, "tf"},
       {Weighting::kLogTf, "log_tf"},
       {Weighting::kBinary, "binary"},
       {Weighting::kTfidf, "tfidf"}}};
};
template <>
struct Names<CjkTokens> {
  static constexpr std::array<std::pair<CjkTokens, std::string_view>, 2> values{
      {{CjkTokens::kBigrams, "bigrams"}, {CjkTokens::kWords, "words"}}};
};
template <>
struct Names<MainTextOutput> {
  static constexpr std::array<std::pair<MainTextOutput, std::string_view>, 3> values{
      {{MainTextOutput::kNone, "none"}, {MainTextOutput::kAll, "all"},
       {MainTextOutput::kUnseen, "unseen"}}};
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
  f(Key{.path = "kafka.candidates_topic", .check = is_topic_name, .expect = kTopic},
    c.kafka.candidates_topic);
  f(Key{.path = "kafka.documents_topic", .check = is_topic_name, .expect = kTopic},
    c.kafka.documents_topic);
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
  f(Key{.path = "output.main_text"}, c.output.main_text);

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
  f(Key{.path = "denoise.site_boilerplate", .scheme_omits = "false"}, c.denoise.site_boilerplate);
  f(Key{.path = "denoise.site_min_pages", .min = 2, .max = 1'000'000, .scheme_omits = "8"},
    c.denoise.site_min_pages);
  f(Key{.path = "denoise.site_max_hosts", .min = 1, .max = 100'000'000, .scheme_omits = "65536"},
    c.denoise.site_max_hosts);

  f(Key{.path = "features.ngram", .min = 1, .max = 8}, c.features.ngram);
  f(Key{.path = "features.weighting"}, c.features.weighting);
  f(Key{.path = "features.cjk", .scheme_omits = "\"words\""}, c.features.cjk);
  f(Key{.path = "features.stop_words"}, c.features.stop_words);
  f(Key{.path = "features.min_features", .min = 1, .max = 100'000}, c.features.min_features);
  f(Key{.path = "features.idf_warmup_pages", .max = 1'000'000'000, .scheme_omits = "1000"},
    c.features.idf_warmup_pages);
  f(Key{.path = "features.max_text_bytes", .min = kKiB, .max = kGiB, .size = true},
    c.features.max_text_bytes);

  f(Key{.path = "fingerprint.seed", .hex = true}, c.fingerprint.seed);

  f(Key{.path = "minhash.enabled"}, c.minhash.enabled);
  f(Key{.path = "minhash.shingle", .min = 1, .max = 16}, c.minhash.shingle);
  f(Key{.path = "minhash.hashes", .min = 16, .max = 1024}, c.minhash.hashes);
  // 0 (unset) leaves the design to the store; the scheme id hashes it as the former default.
  f(Key{.path = "minhash.bands", .max = 1024, .scheme_unset = "42"}, c.minhash.bands);
  f(Key{.path = "minhash.rows", .max = 16, .scheme_unset = "3"}, c.minhash.rows);

  f(Key{.path = "containment.enabled"}, c.containment.enabled);
  f(Key{.path = "containment.window", .min = 1, .max = 1024, .scheme_omits = "16"},
    c.containment.window);
  f(Key{.path = "containment.paragraph_tokens", .min = 1, .max = 1024, .scheme_omits = "8"},
    c.containment.paragraph_tokens);

  f(Key{.path = "dedup.max_distance", .max = 16}, c.dedup.max_distance);
  f(Key{.path = "dedup.min_similarity", .min_real = 0.01, .max_real = 1}, c.dedup.min_similarity);
  f(Key{.path = "dedup.min_containment", .min_real = 0.01, .max_real = 1},
    c.dedup.min_containment);

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
  f(Key{.path = "store.readahead"}, c.store.readahead);
  f(Key{.path = "store.delta_entries", .min = 1u << 12, .max = 1u << 26}, c.store.delta_entries);
  f(Key{.path = "store.table_filter_bits", .max = 16}, c.store.table_filter_bits);
  f(Key{.path = "store.retention", .duration = true}, c.store.retention_seconds);
  f(Key{.path = "store.shards", .min = 1, .max = 64}, c.store.shards);
  f(Key{.path = "store.shard", .max = 63}, c.store.shard);

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

// --- Sizes and durations as text --------------------------------------------------------------

// The shortest decimal text that reads back as the same double ("0.5", "1").
inline std::string canonical_real(double value) {
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string("nan");
}

// 1GiB for an exact multiple of a binary unit, else decimal digits.
inline std::string format_size(std::uint64_t bytes) {
  constexpr std::array<std::pair<std::uint64_t, std::string_view>, 4> kUnits = {
      {{kTiB, "TiB"}, {kGiB, "GiB"}, {kMiB, "MiB"}, {kKiB, "KiB"}}};
  for (const auto& [unit, suffix] : kUnits) {
    if (bytes >= unit && bytes % unit == 0) return cat(bytes / unit, suffix);
  }
  return std::to_string(bytes);
}

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 5> kSizeUnits = {
    {{"B", 1}, {"KiB", kKiB}, {"MiB", kMiB}, {"GiB", kGiB}, {"TiB", kTiB}}};
constexpr std::array<std::pair<std::string_view, std::uint64_t>, 5> kDurationUnits = {
    {{"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 7 * 86400}}};

// 30d for an exact multiple of a unit (the largest), else seconds.
inline std::string format_duration(std::uint64_t seconds) {
  for (auto unit = kDurationUnits.rbegin(); unit != kDurationUnits.rend(); ++unit) {
    if (seconds >= unit->second && seconds % unit->second == 0) {
      return cat(seconds / unit->second, unit->first);
    }
  }
  return std::to_string(seconds);
}

}  // namespace neardup::config_keys
