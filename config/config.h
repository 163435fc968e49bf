// neardup configuration: one YAML file -> an immutable, validated Config (DESIGN.md §7).
//
// Every key has a default here, documented in examples/neardup.yaml. Loading is strict:
// an unknown key or a bad value is an error whose message names the key's path
// ("features.ngram: must be 1..8, got 0"). A Config is a plain value; the daemon shares it
// as std::shared_ptr<const Config> and swaps the pointer on reload.
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <string>
#include <vector>

namespace neardup {

struct KafkaConfig {
  std::string bootstrap_servers = "127.0.0.1:9092";
  std::string group_id = "neardup";
  std::string input_topic = "pages";
  std::string output_topic = "pages-tagged";
  std::string dead_letter_topic = "pages-dead";
  bool exactly_once = false;
  // Extra librdkafka properties, passed through verbatim (e.g. "security.protocol").
  std::map<std::string, std::string> properties;
};

struct InputFields {
  std::string url = "url";
  std::string id = "id";
  std::string body = "body";
  std::string body_base64 = "body_base64";
  std::string content_type = "content_type";
  std::string fetched_at = "fetched_at";
};

struct InputConfig {
  InputFields fields;
  std::uint64_t max_body_bytes = 10 * 1024 * 1024;  // larger bodies are skipped: too_large
};

struct OutputConfig {
  bool include_body = true;  // false drops the body field(s) from the output record
};

struct DecodeConfig {
  // Charset used when nothing is declared and detection is inconclusive.
  std::string default_charset = "windows-1252";
  // Run uchardet when no charset is declared or the bytes contradict the declaration.
  bool detect = true;
  // How far into the body to look for <meta charset> / XML declarations (WHATWG prescan).
  std::uint32_t prescan_bytes = 4096;
};

struct DenoiseConfig {
  // "main_text": boilerplate removal; "all_text": every visible text block.
  std::string mode = "main_text";
  std::uint32_t max_nodes = 200000;  // past this, fall back to all visible text
  std::uint32_t max_millis = 500;    // past this, fall back to all visible text
};

struct FeaturesConfig {
  std::uint32_t ngram = 3;             // token n-gram length, 1..8
  std::string weighting = "log_tf";    // tf | log_tf | binary
  bool stop_words = false;             // drop stop words (per detected script/language)
  std::uint32_t min_features = 16;     // fewer distinct features: skipped (low_content)
  std::uint64_t max_text_bytes = 1 << 20;  // main text beyond this is ignored
};

struct FingerprintConfig {
  std::uint64_t seed = 0;  // xxHash3-64 seed for feature hashes
};

struct DedupConfig {
  std::uint32_t max_distance = 3;  // live k; <= store.design_k
};

struct StoreConfig {
  std::string path = "/var/lib/neardup";
  std::uint32_t design_k = 3;
  std::uint64_t expected_documents = 100'000'000;
  std::uint32_t tables = 0;  // 0: derived from expected_documents
  std::uint64_t map_size = 1ull << 30;        // initial LMDB map size, bytes
  std::uint64_t max_map_size = 1ull << 40;    // growth stops here with a clear error
  bool sync = true;  // fsync on commit (false: a crash may lose the last commits, never corrupt)
};

struct PipelineConfig {
  std::uint32_t threads = 0;          // 0: one per core
  std::uint32_t max_in_flight = 2048; // pages decoded but not yet delivered
  std::uint32_t batch_size = 512;     // pages per index transaction
  std::uint32_t batch_delay_ms = 20;  // longest wait to fill a batch
};

struct MetricsConfig {
  std::string listen = "127.0.0.1:9464";  // empty: no metrics server
};

struct LogConfig {
  std::string level = "info";  // trace | debug | info | warn | error | off
};

struct Config {
  KafkaConfig kafka;
  InputConfig input;
  OutputConfig output;
  DecodeConfig decode;
  DenoiseConfig denoise;
  FeaturesConfig features;
  FingerprintConfig fingerprint;
  DedupConfig dedup;
  StoreConfig store;
  PipelineConfig pipeline;
  MetricsConfig metrics;
  LogConfig log;
};

// Parses and validates YAML text. Missing keys keep their defaults. Returns the error message
// (naming the key path, and the line where yaml-cpp knows it) on any unknown key, wrong type or
// out-of-range value.
std::expected<Config, std::string> parse_config(const std::string& yaml_text);

// Reads and parses a file; the error names the file as well.
std::expected<Config, std::string> load_config_file(const std::string& path);

// The fingerprint scheme id ("s-" + 8 hex digits): a hash of every setting that changes
// fingerprints (decode, denoise, features, fingerprint sections). Equal ids mean comparable
// fingerprints.
std::string scheme_id(const Config& config);

// Names of the top-level keys whose values differ between a and b that cannot change without
// a restart (kafka.*, store.*, metrics.listen, pipeline.threads), as key paths.
std::vector<std::string> restart_only_changes(const Config& a, const Config& b);

}  // namespace neardup
