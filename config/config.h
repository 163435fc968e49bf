// neardup configuration: one YAML file -> an immutable, validated Config (docs/configuration.md).
//
// Every key has a default here, documented in examples/neardup.yaml. Loading is strict:
// an unknown key or a bad value is an error whose message names the key's path
// ("features.ngram: must be 1..8, got 0"). A Config is a plain value; the daemon shares it
// as std::shared_ptr<const Config> and swaps the pointer on reload.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/log_level.h"
#include "common/sketch.h"

namespace neardup {

// The values of the keys that name one of a few choices (docs/configuration.md).
enum class DenoiseMode : std::uint8_t { kMainText, kAllText };  // denoise.mode
enum class Weighting : std::uint8_t { kTf, kLogTf, kBinary, kTfidf };  // features.weighting
enum class CjkTokens : std::uint8_t { kBigrams, kWords };       // features.cjk
enum class MainTextOutput : std::uint8_t { kNone, kAll, kUnseen };  // output.main_text
// The name a config file gives a value: "main_text", "log_tf", "bigrams", "warn", "json".
std::string_view name_of(DenoiseMode value);
std::string_view name_of(Weighting value);
std::string_view name_of(CjkTokens value);
std::string_view name_of(MainTextOutput value);
std::string_view name_of(LogLevel value);
std::string_view name_of(LogFormat value);

// A librdkafka property's value: the text itself, or where to read it when the daemon starts, so
// that secrets need not be written into the YAML:
//   sasl.password: {file: /etc/neardup/kafka-password}  # the file, less one trailing newline
//   sasl.password: {env: NEARDUP_KAFKA_PASSWORD}          # an environment variable
struct PropertyValue {
  enum class Source : std::uint8_t { kText, kFile, kEnv };
  PropertyValue() = default;
  PropertyValue(std::string value) : text(std::move(value)) {}  // NOLINT: a plain value
  PropertyValue(const char* value) : text(value) {}             // NOLINT: a plain value
  PropertyValue(Source from, std::string where) : source(from), text(std::move(where)) {}

  Source source = Source::kText;
  std::string text;  // the value, the file's path or the variable's name

  bool operator==(const PropertyValue&) const = default;
};
using PropertyMap = std::map<std::string, PropertyValue>;

// The property's value: its text, the file's contents (less one trailing newline) or the
// variable's value. Errors name the file or the variable and why ("file /etc/x: cannot read:
// No such file or directory", "environment variable X is not set"), never a value. A file is
// read as a config file is, to 1 MiB at most ("file /dev/zero: more than 1048576 bytes; a
// property is at most 1048576").
std::expected<std::string, std::string> resolve_property(const PropertyValue& value);

struct KafkaConfig {
  std::string bootstrap_servers = "127.0.0.1:9092";
  std::string group_id = "neardup";
  std::string input_topic = "pages";
  std::string output_topic = "pages-tagged";
  std::string dead_letter_topic = "pages-dead";
  // Between the two roles of a scaled-out deployment (neardupd --role fingerprint|index,
  // daemon/README.md): fingerprinted pages, partition for partition of the input topic.
  std::string fingerprint_topic = "pages-fingerprinted";
  // The index split into shards (store.shards > 1, docs/scale-out.md): the shards' answers to
  // the merge stages, and the merge stages' decided pages (compacted, keyed by page id).
  std::string candidates_topic = "pages-candidates";
  std::string documents_topic = "pages-documents";
  // A secret the fingerprint workers sign their records with and the index role checks
  // (message/fingerprinted.h): records on the fingerprint topic without its signature are dead
  // letters. Empty: records are not signed, and the index trusts whoever can write to the topic.
  PropertyValue fingerprint_key;
  bool exactly_once = false;
  // Extra librdkafka properties, passed through verbatim (e.g. "security.protocol"): `properties`
  // to both clients, then `consumer_properties` to the consumer and `producer_properties` to the
  // producer only (a later one overrides an earlier one).
  PropertyMap properties;
  PropertyMap consumer_properties;
  PropertyMap producer_properties;

  bool operator==(const KafkaConfig&) const = default;
};

struct InputFields {
  std::string url = "url";
  std::string id = "id";
  std::string body = "body";
  std::string body_base64 = "body_base64";
  std::string content_type = "content_type";
  std::string fetched_at = "fetched_at";

  bool operator==(const InputFields&) const = default;
};

struct InputConfig {
  InputFields fields;
  std::uint64_t max_body_bytes = 10 * 1024 * 1024;  // larger bodies are skipped: too_large
  // Larger records are dead letters (record_too_large) and are never parsed.
  std::uint64_t max_record_bytes = 64 * 1024 * 1024;

  bool operator==(const InputConfig&) const = default;
};

struct OutputConfig {
  bool include_body = true;  // false drops the body field(s) from the output record
  // none | all | unseen: the page's main text in the tag's "text" (unseen: without the
  // paragraphs an earlier page published first; containment.enabled).
  MainTextOutput main_text = MainTextOutput::kNone;

  bool operator==(const OutputConfig&) const = default;
};

struct DecodeConfig {
  // Charset used when nothing is declared and detection is inconclusive.
  std::string default_charset = "windows-1252";
  // Run uchardet when no charset is declared or the bytes contradict the declaration.
  bool detect = true;
  // How far into the body to look for <meta charset> / XML declarations (WHATWG prescan).
  std::uint32_t prescan_bytes = 4096;

  bool operator==(const DecodeConfig&) const = default;
};

struct DenoiseConfig {
  // main_text: boilerplate removal; all_text: every visible text block.
  DenoiseMode mode = DenoiseMode::kMainText;
  std::uint32_t max_nodes = 200000;  // past this, fall back to all visible text
  std::uint32_t max_millis = 500;    // past this, fall back to all visible text
  // Each site's own boilerplate, learned from its pages at the index and removed from the main
  // text before features (pipeline/learn/site_blocks.h; docs/configuration.md, "Learning from
  // the crawl"). A scheme setting: it changes fingerprints.
  bool site_boilerplate = false;
  std::uint32_t site_min_pages = 8;      // a block on fewer of a host's pages is never learned
  std::uint32_t site_max_hosts = 65536;  // hosts kept; the least recently seen one makes room

  bool operator==(const DenoiseConfig&) const = default;
};

struct FeaturesConfig {
  std::uint32_t ngram = 2;                 // token n-gram length, 1..8 (see pipeline/features/MEASUREMENTS.md)
  Weighting weighting = Weighting::kTf;    // tf | log_tf | binary (measured)
  CjkTokens cjk = CjkTokens::kBigrams;     // bigrams | words: Han and kana tokens (measured)
  bool stop_words = false;                 // drop stop words (per detected script/language)
  std::uint32_t min_features = 16;         // fewer distinct features: skipped (low_content)
  // tfidf: pages learned from before document frequencies weigh anything (tf until then).
  std::uint32_t idf_warmup_pages = 1000;
  std::uint64_t max_text_bytes = 1 << 20;  // main text beyond this is ignored

  bool operator==(const FeaturesConfig&) const = default;
};

struct FingerprintConfig {
  std::uint64_t seed = 0;  // xxHash3-64 seed for feature hashes

  bool operator==(const FingerprintConfig&) const = default;
};

// The second signature: a MinHash sketch over word shingles, indexed by banded LSH
// (pipeline/minhash/minhash.h, store/FORMAT.md). Defaults measured in
// pipeline/features/MEASUREMENTS.md.
struct MinHashConfig {
  bool enabled = true;
  std::uint32_t shingle = 5;   // tokens per shingle
  std::uint32_t hashes = 128;  // sketch length: 16-bit values
  // LSH bands of `rows` values each (bands * rows <= hashes). Both 0 (unset): the store's design
  // for a scheme it holds, kDefaultLsh for a new one; requested_lsh() says which.
  std::uint32_t bands = 0;
  std::uint32_t rows = 0;

  bool operator==(const MinHashConfig&) const = default;
};

// The third signature (pipeline/passages/passages.h): anchors for containment, paragraph hashes
// for paragraphs seen before.
struct ContainmentConfig {
  bool enabled = false;  // off by default: its cost is measured in pipeline/passages/MEASUREMENTS.md
  std::uint32_t window = 16;           // winnowing window, in shingles of minhash.shingle tokens
  std::uint32_t paragraph_tokens = 8;  // shorter paragraphs are not tracked

  bool operator==(const ContainmentConfig&) const = default;
};

struct DedupConfig {
  std::uint32_t max_distance = 3;  // live k; <= store.design_k
  // A stored page sharing an LSH band is a duplicate at this estimated Jaccard similarity or
  // above (minhash.enabled only).
  double min_similarity = 0.45;
  // A page whose anchors are at least this share found in one earlier page is contained in it
  // (containment.enabled only).
  double min_containment = 0.5;

  bool operator==(const DedupConfig&) const = default;
};

struct StoreConfig {
  std::string path = "/var/lib/neardup";
  std::uint32_t design_k = 3;
  std::uint64_t expected_documents = 100'000'000;
  std::uint32_t tables = 0;                 // 0: derived from expected_documents
  std::uint64_t map_size = 1ull << 30;      // initial LMDB map size, bytes
  std::uint64_t max_map_size = 1ull << 40;  // growth stops here with a clear error
  bool sync = true;  // fsync on commit (false: a crash may lose the last commits, never corrupt)
  // The OS's readahead on the store's map (false: MDB_NORDAHEAD, a page fault reads its page
  // alone: for a store larger than the memory left to the page cache, FORMAT.md). False also
  // asks the kernel, a page ahead, for the band records the next page will probe (PageAdvice).
  bool readahead = true;
  // Entries a table or ids column keeps in memory before a merge writes them to its sorted runs
  // (a band column keeps twice as many: a page adds one entry per band): with both signatures
  // and 10 tables about 1.8 GiB of deltas at 2^21, 0.9 GiB at 2^19. Fewer leave more of the
  // memory to the page cache, for a store larger than memory, at the cost of more, smaller
  // merges (docs/index.md, "Larger than memory").
  std::uint64_t delta_entries = 1ull << 21;
  // Bits an entry of the filters over the prefixes in each run of a table column, which spare a
  // page's probes of runs that hold nothing in its ranges (store/FORMAT.md, "Prefix filters"):
  // with 10 tables, 10 bytes of memory a page at 8. 0: none, every probe reads every run.
  std::uint32_t table_filter_bits = 8;
  // Pages first seen longer ago than this stop being matched, and merges drop their index
  // entries; 0 keeps every page. Seconds.
  std::uint64_t retention_seconds = 0;
  // The index split by table and band (docs/scale-out.md): this store is shard `shard` of
  // `shards` and holds the permuted tables t and the LSH bands b with t mod shards = shard and
  // b mod shards = shard, and every page's document. 1: the whole index.
  std::uint32_t shards = 1;
  std::uint32_t shard = 0;
  // A standby replica of shard `shard` (neardupd --replica; not a key of the file): it builds
  // the same store from the same records under a consumer group of its own and publishes
  // nothing, so that a primary can be started on its store at once (docs/scale-out.md).
  bool replica = false;

  bool operator==(const StoreConfig&) const = default;
};

struct PipelineConfig {
  std::uint32_t threads = 0;           // 0: one per core
  std::uint32_t max_in_flight = 2048;  // pages decoded but not yet delivered
  std::uint32_t batch_size = 512;      // pages per index transaction
  std::uint32_t batch_delay_ms = 20;   // longest wait to fill a batch

  bool operator==(const PipelineConfig&) const = default;
};

struct MetricsConfig {
  std::string listen = "127.0.0.1:9464";  // empty: no metrics server
  // Also answer the index's questions on the listener: POST /v1/lookup, GET /v1/pages/{id}.
  bool queries = false;

  bool operator==(const MetricsConfig&) const = default;
};

struct LogConfig {
  LogLevel level = LogLevel::kInfo;     // trace | debug | info | warn | error | critical | off
  LogFormat format = LogFormat::kText;  // text | json (one JSON object per line)

  bool operator==(const LogConfig&) const = default;
};

struct Config {
  KafkaConfig kafka;
  InputConfig input;
  OutputConfig output;
  DecodeConfig decode;
  DenoiseConfig denoise;
  FeaturesConfig features;
  FingerprintConfig fingerprint;
  MinHashConfig minhash;
  ContainmentConfig containment;
  DedupConfig dedup;
  StoreConfig store;
  PipelineConfig pipeline;
  MetricsConfig metrics;
  LogConfig log;

  bool operator==(const Config&) const = default;
};

// Parses and validates YAML text. Missing keys keep their defaults; an empty document or a
// null section (`kafka:` with nothing under it) means all defaults. Integers may be written in
// decimal or 0x hex; byte sizes also as 512KiB, 64MiB, 1GiB, 1TiB; durations as seconds or
// with a unit: 90s, 30m, 12h, 30d, 4w. Returns, one per line, every
// error found: "line 4: features.ngram: must be 1..8, got 0" for a bad value (the key's path,
// the value, the allowed range), "line 7: features.ngrams: unknown key (did you mean
// features.ngram?)", "line 3, column 9: YAML syntax error: ..." for text that is not YAML.
// Cross-key rules (dedup.max_distance <= store.design_k, distinct field names and topics, ...)
// are checked once every key is valid. decode.default_charset is stored as the WHATWG
// encoding name of the label given ("latin1" -> "windows-1252").
std::expected<Config, std::string> parse_config(const std::string& yaml_text);

// Reads and parses a file. Every error line starts with the file's path
// ("/etc/neardup/neardup.yaml: line 4: features.ngram: must be 1..8, got 0"); a file that
// cannot be read is an error naming the path and the reason. At most 1 MiB + 1 byte is read,
// whatever the path is (a device, a pipe, a FIFO): a longer one is refused unread past that
// ("/dev/zero: more than 1048576 bytes; a config is at most 1048576").
std::expected<Config, std::string> load_config_file(const std::string& path);

// The fingerprint scheme id: "s-" + 8 lower-case hex digits, the high 32 bits of
// XXH3_64bits (seed 0) over the text "neardup-scheme-v3\n" followed by one line
// "<key path>=<value>\n" for every key of the decode, denoise, features, fingerprint and
// minhash sections and containment.window and .paragraph_tokens, in the order of
// examples/neardup.yaml, except features.cjk when it is "words", containment.window when it is
// 16 and containment.paragraph_tokens when it is 8 (which fingerprint as before those keys
// existed, so that older ids stay valid).
// Values: integers in decimal, booleans as
// true/false, strings double-quoted with \\, \" and control bytes (\xHH) escaped. Equal ids
// mean comparable fingerprints; any change to one of those keys changes the id, no other key
// does. The id depends on nothing but the values, so it is the same on every run and machine.
// (A change to a stage's algorithm that alters fingerprints must bump the version: v2 keeps
// shingles inside paragraphs, skips repeated paragraphs, weighs short paragraphs less and
// drops number tokens; v3 adds the MinHash sketch, folds typography and mojibake before
// tokenising and drops captions, teasers, orphaned headings and rights notices from the main
// text.)
std::string scheme_id(const Config& config);

// The LSH design a page of this config asks the index for (PageRequest::bands, rows):
// minhash.bands and minhash.rows both unset gives {0, 0}, which leaves the design to the store
// (a scheme it holds keeps its stored design; a new one gets kDefaultLsh: store/FORMAT.md); one
// of them set gives the other its value from before the store chose (kFormerDefaultLsh), as the
// scheme id does.
LshDesign requested_lsh(const MinHashConfig& minhash);
// The design a new scheme of this config gets: requested_lsh(), or kDefaultLsh when unset.
LshDesign new_scheme_lsh(const MinHashConfig& minhash);
// Whether pages of `config` fit the store whose schemes' designs `stored_lsh` gives (by scheme
// id; {0, 0} for one it holds no sketch of, e.g. IndexStats::lsh_of): an error naming both
// designs when minhash.bands and minhash.rows ask for another than the store holds their scheme
// in (the store would refuse every page as a dead letter), else nullopt.
std::optional<std::string> lsh_conflict(
    const Config& config, const std::function<LshDesign(const std::string& scheme)>& stored_lsh);

// The key paths, among those that cannot change without a restart (kafka.*, store.*,
// metrics.listen, pipeline.threads), whose values differ between a and b, in the order of
// examples/neardup.yaml (e.g. {"kafka.group_id", "store.sync"}). Empty when none differ.
// kafka.properties is compared as a whole and reported as one path.
std::vector<std::string> restart_only_changes(const Config& a, const Config& b);

// Every key with its value as canonical text (as scheme_id hashes it: integers in decimal,
// booleans true/false, strings double-quoted), in the order of examples/neardup.yaml.
struct Setting {
  std::string path;
  std::string value;
};
std::vector<Setting> config_settings(const Config& config);

// Settings that are valid but weaken what neardupd promises (docs/delivery.md), one sentence
// each naming the key and the risk: Kafka properties such as acks=0|1, enable.idempotence=false,
// isolation.level=read_uncommitted, auto.offset.reset=latest. Printed by --check-config and
// logged at start; never an error.
std::vector<std::string> config_warnings(const Config& config);

// Whether a key needs a restart to change (kafka.*, store.*, metrics.*, pipeline.threads); a
// reload keeps the running value of these (keep_restart_only, which this alone decides).
bool is_restart_only(std::string_view path);
// Sets every restart-only key of `next` to its value in `running`.
void keep_restart_only(Config& next, const Config& running);

// The config as YAML text that parse_config accepts and that parses back to an equal Config
// (every key, sections in the order of examples/neardup.yaml; sizes with a binary suffix where
// exact, fingerprint.seed in hex) — except that the text of a secret property
// (is_secret_property, common/secret.h) is printed as "<redacted>"; {file: ...} and {env: ...}
// values are printed as they are. For `neardupd --check-config`, which prints the effective
// configuration.
std::string to_yaml(const Config& config);

}  // namespace neardup
