#include "config/config.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace neardup {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The error parse_config gives for `yaml`; fails the test if the text is accepted.
std::string error_of(const std::string& yaml) {
  auto config = parse_config(yaml);
  EXPECT_FALSE(config.has_value()) << "accepted:\n" << yaml;
  return config.has_value() ? std::string() : config.error();
}

Config parsed(const std::string& yaml) {
  auto config = parse_config(yaml);
  EXPECT_TRUE(config.has_value()) << config.error();
  return config.value_or(Config{});
}

// --- Structure ---------------------------------------------------------------------------

TEST(Config, EmptyTextGivesAllDefaults) { EXPECT_EQ(parsed(""), Config{}); }

TEST(Config, CommentsOnlyGiveAllDefaults) { EXPECT_EQ(parsed("# nothing\n\n"), Config{}); }

TEST(Config, NullSectionKeepsItsDefaults) { EXPECT_EQ(parsed("kafka:\nfeatures:\n"), Config{}); }

TEST(Config, MissingKeysKeepTheirDefaults) {
  Config config = parsed("features:\n  ngram: 5\n");
  EXPECT_EQ(config.features.ngram, 5u);
  config.features.ngram = Config{}.features.ngram;
  EXPECT_EQ(config, Config{});
}

TEST(Config, TopLevelScalarIsRejected) {
  EXPECT_THAT(error_of("just text"), HasSubstr("top level: must be a map of sections"));
}

TEST(Config, TopLevelListIsRejected) {
  EXPECT_THAT(error_of("- a\n- b\n"), HasSubstr("got a list"));
}

TEST(Config, SectionThatIsNotAMapIsRejectedNamingIt) {
  EXPECT_THAT(error_of("features: 3\n"), HasSubstr("line 1: features: must be a map, got 3"));
}

TEST(Config, UnknownKeyIsRejectedNamingItsPath) {
  std::string error = error_of("features:\n  ngram: 3\n  ngrams: 4\n");
  EXPECT_THAT(error, HasSubstr("line 3: features.ngrams: unknown key"));
}

TEST(Config, UnknownKeySuggestsTheNearestKnownKey) {
  EXPECT_THAT(error_of("features:\n  ngrams: 4\n"),
              HasSubstr("features.ngrams: unknown key (did you mean features.ngram?)"));
}

TEST(Config, KeyInTheWrongSectionSuggestsWhereItBelongs) {
  EXPECT_THAT(error_of("dedup:\n  ngram: 4\n"),
              HasSubstr("dedup.ngram: unknown key (did you mean features.ngram?)"));
}

TEST(Config, SectionAtTheWrongLevelSuggestsWhereItBelongs) {
  EXPECT_THAT(error_of("fields:\n  url: link\n"),
              HasSubstr("line 1: fields: unknown key (did you mean input.fields?)"));
}

TEST(Config, UnknownSectionIsRejected) {
  EXPECT_THAT(error_of("featurez:\n  ngram: 4\n"),
              HasSubstr("featurez: unknown key (did you mean features?)"));
}

TEST(Config, UnknownNestedKeyIsRejectedWithItsFullPath) {
  EXPECT_THAT(error_of("input:\n  fields:\n    uri: link\n"),
              HasSubstr("line 3: input.fields.uri: unknown key (did you mean input.fields.url?)"));
}

TEST(Config, DottedKeyIsRejectedWithAHint) {
  EXPECT_THAT(error_of("features.ngram: 4\n"),
              HasSubstr("features.ngram: unknown key (write sections as nested maps"));
}

TEST(Config, DuplicateKeyIsRejected) {
  EXPECT_THAT(error_of("features:\n  ngram: 3\n  ngram: 4\n"),
              HasSubstr("line 3: features.ngram: duplicate key"));
}

TEST(Config, YamlSyntaxErrorGivesLineAndColumn) {
  std::string error = error_of("features:\n  ngram: 3\n  weighting: [tf\n");
  EXPECT_THAT(error, HasSubstr("YAML syntax error"));
  EXPECT_THAT(error, HasSubstr("line 4, column 1"));
}

TEST(Config, BadIndentationIsASyntaxErrorWithItsLine) {
  EXPECT_THAT(error_of("features:\n  ngram: 3\n weighting: tf\n"), HasSubstr("line 3, column"));
}

TEST(Config, SeveralDocumentsAreRejected) {
  EXPECT_THAT(error_of("log:\n  level: info\n---\nlog:\n  level: warn\n"),
              HasSubstr("must be one YAML document, found 2"));
}

TEST(Config, EveryErrorIsReportedOnItsOwnLine) {
  std::string error = error_of("features:\n  ngram: 0\ndedup:\n  max_distance: 99\n");
  EXPECT_THAT(error, HasSubstr("line 2: features.ngram: must be 1..8, got 0\n"));
  EXPECT_THAT(error, HasSubstr("line 4: dedup.max_distance: must be 0..16, got 99"));
}

// --- Integers, sizes, booleans -------------------------------------------------------------

TEST(Config, OutOfRangeIntegerNamesPathValueAndRange) {
  EXPECT_EQ(error_of("features:\n  ngram: 0\n"), "line 2: features.ngram: must be 1..8, got 0");
  EXPECT_THAT(error_of("features:\n  ngram: 9\n"), HasSubstr("must be 1..8, got 9"));
}

TEST(Config, NegativeIntegerIsOutOfRange) {
  EXPECT_THAT(error_of("features:\n  ngram: -1\n"),
              HasSubstr("features.ngram: must be 1..8, got -1"));
}

TEST(Config, NonIntegerIsRejected) {
  EXPECT_THAT(error_of("features:\n  ngram: three\n"),
              HasSubstr("features.ngram: must be an integer in 1..8, got three"));
  EXPECT_THAT(error_of("features:\n  ngram: 2.5\n"), HasSubstr("got 2.5"));
  EXPECT_THAT(error_of("features:\n  ngram: [3]\n"), HasSubstr("got a list"));
  EXPECT_THAT(error_of("features:\n  ngram:\n"), HasSubstr("got nothing"));
}

TEST(Config, IntegerPastTheTypeIsRejected) {
  EXPECT_THAT(error_of("pipeline:\n  max_in_flight: 4294967296\n"),
              HasSubstr("pipeline.max_in_flight: must be 1..4294967295, got 4294967296"));
  EXPECT_THAT(error_of("fingerprint:\n  seed: 18446744073709551616\n"),
              HasSubstr("fingerprint.seed: must be 0..18446744073709551615"));
}

TEST(Config, SeedAcceptsDecimalAndHex) {
  EXPECT_EQ(parsed("fingerprint:\n  seed: 42\n").fingerprint.seed, 42u);
  EXPECT_EQ(parsed("fingerprint:\n  seed: 0xFFFFFFFFFFFFFFFF\n").fingerprint.seed,
            0xFFFFFFFFFFFFFFFFull);
  EXPECT_THAT(error_of("fingerprint:\n  seed: 0xg\n"), HasSubstr("fingerprint.seed"));
}

TEST(Config, SizesAcceptBinarySuffixes) {
  Config config = parsed(
      "store:\n  map_size: 64MiB\n  max_map_size: 2 TiB\ninput:\n  max_body_bytes: 512KiB\n"
      "decode:\n  prescan_bytes: 1KiB\nfeatures:\n  max_text_bytes: 1GiB\n");
  EXPECT_EQ(config.store.map_size, 64ull << 20);
  EXPECT_EQ(config.store.max_map_size, 2ull << 40);
  EXPECT_EQ(config.input.max_body_bytes, 512ull << 10);
  EXPECT_EQ(config.decode.prescan_bytes, 1024u);
  EXPECT_EQ(config.features.max_text_bytes, 1ull << 30);
}

TEST(Config, SizeWithUnknownSuffixIsRejected) {
  EXPECT_THAT(error_of("store:\n  map_size: 64MB\n"),
              HasSubstr("store.map_size: must be a size (bytes, or with KiB, MiB, GiB, TiB)"));
}

TEST(Config, SuffixOnANonSizeIsRejected) {
  EXPECT_THAT(error_of("pipeline:\n  batch_size: 1KiB\n"),
              HasSubstr("pipeline.batch_size: must be an integer"));
}

TEST(Config, SizeThatOverflowsIsRejected) {
  EXPECT_THAT(error_of("store:\n  max_map_size: 99999999TiB\n"),
              HasSubstr("store.max_map_size: must be 1MiB..64TiB, got 99999999TiB"));
}

TEST(Config, DeltaEntriesAreCountedWithinTheirRange) {
  EXPECT_EQ(Config{}.store.delta_entries, 1u << 21);
  EXPECT_EQ(parsed("store:\n  delta_entries: 524288\n").store.delta_entries, 524288u);
  EXPECT_THAT(error_of("store:\n  delta_entries: 100\n"),
              HasSubstr("store.delta_entries: must be 4096..67108864, got 100"));
  EXPECT_THAT(error_of("store:\n  delta_entries: 1GiB\n"), HasSubstr("store.delta_entries"));
}

TEST(Config, TableFilterBitsAreCountedWithinTheirRange) {
  EXPECT_EQ(Config{}.store.table_filter_bits, 8u);
  EXPECT_EQ(parsed("store:\n  table_filter_bits: 0\n").store.table_filter_bits, 0u);
  EXPECT_EQ(parsed("store:\n  table_filter_bits: 4\n").store.table_filter_bits, 4u);
  EXPECT_THAT(error_of("store:\n  table_filter_bits: 17\n"),
              HasSubstr("store.table_filter_bits: must be 0..16, got 17"));
}

TEST(Config, BooleansAcceptYamlSpellings) {
  EXPECT_FALSE(parsed("store:\n  sync: false\n").store.sync);
  EXPECT_FALSE(parsed("store:\n  readahead: false\n").store.readahead);
  EXPECT_TRUE(Config{}.store.readahead);
  EXPECT_FALSE(parsed("store:\n  sync: no\n").store.sync);
  EXPECT_TRUE(parsed("kafka:\n  exactly_once: True\n").kafka.exactly_once);
  EXPECT_TRUE(parsed("kafka:\n  exactly_once: on\n").kafka.exactly_once);
}

TEST(Config, NonBooleanIsRejected) {
  EXPECT_THAT(error_of("store:\n  sync: maybe\n"),
              HasSubstr("line 2: store.sync: must be true or false, got maybe"));
  EXPECT_THAT(error_of("output:\n  include_body: 1\n"), HasSubstr("output.include_body"));
  EXPECT_THAT(error_of("decode:\n  detect: {}\n"), HasSubstr("decode.detect"));
  EXPECT_THAT(error_of("features:\n  stop_words:\n"), HasSubstr("features.stop_words"));
  EXPECT_THAT(error_of("kafka:\n  exactly_once: [x]\n"), HasSubstr("kafka.exactly_once"));
}

// --- One rejecting test per rule -----------------------------------------------------------

TEST(Config, KafkaStringsMustBeNonEmpty) {
  EXPECT_THAT(error_of("kafka:\n  bootstrap_servers: ''\n"),
              HasSubstr("kafka.bootstrap_servers: must be a non-empty"));
  EXPECT_THAT(error_of("kafka:\n  group_id: \"\"\n"), HasSubstr("kafka.group_id"));
  EXPECT_THAT(error_of("kafka:\n  group_id:\n"), HasSubstr("kafka.group_id"));
}

TEST(Config, KafkaTopicsMustBeLegalTopicNames) {
  EXPECT_THAT(error_of("kafka:\n  input_topic: ''\n"), HasSubstr("kafka.input_topic"));
  EXPECT_THAT(error_of("kafka:\n  output_topic: 'a b'\n"),
              HasSubstr("kafka.output_topic: must be a Kafka topic name"));
  EXPECT_THAT(error_of("kafka:\n  dead_letter_topic: ..\n"), HasSubstr("kafka.dead_letter_topic"));
  EXPECT_THAT(error_of("kafka:\n  input_topic: " + std::string(250, 'a') + "\n"),
              HasSubstr("kafka.input_topic"));
}

TEST(Config, KafkaTopicsMustBeDistinct) {
  EXPECT_THAT(error_of("kafka:\n  output_topic: pages\n"),
              HasSubstr("line 2: kafka.output_topic: must differ from kafka.input_topic"));
  EXPECT_THAT(error_of("kafka:\n  dead_letter_topic: pages-tagged\n"),
              HasSubstr("kafka.dead_letter_topic: must differ from kafka.output_topic"));
}

TEST(Config, KafkaPropertiesAreStringifiedScalars) {
  Config config = parsed(
      "kafka:\n  properties:\n    security.protocol: SSL\n    fetch.max.bytes: 1048576\n"
      "    enable.partition.eof: false\n");
  EXPECT_EQ(config.kafka.properties, (PropertyMap{{"security.protocol", "SSL"},
                                                  {"fetch.max.bytes", "1048576"},
                                                  {"enable.partition.eof", "false"}}));
}

TEST(Config, ClientSpecificPropertiesHaveTheirOwnMaps) {
  Config config = parsed(
      "kafka:\n  consumer_properties:\n    session.timeout.ms: 6000\n"
      "  producer_properties:\n    linger.ms: 20\n");
  EXPECT_EQ(config.kafka.consumer_properties, (PropertyMap{{"session.timeout.ms", "6000"}}));
  EXPECT_EQ(config.kafka.producer_properties, (PropertyMap{{"linger.ms", "20"}}));
  EXPECT_TRUE(config.kafka.properties.empty());
  EXPECT_THAT(error_of("kafka:\n  consumer_properties:\n    group.id: other\n"),
              HasSubstr("kafka.consumer_properties.group.id: set kafka.group_id instead"));
}

TEST(Config, APropertyValueMayComeFromAFileOrAnEnvironmentVariable) {
  Config config = parsed(
      "kafka:\n  properties:\n    sasl.password: {file: /etc/neardup/kafka-password}\n"
      "    ssl.key.password:\n      env: NEARDUP_TEST_SECRET\n");
  EXPECT_EQ(config.kafka.properties.at("sasl.password"),
            PropertyValue(PropertyValue::Source::kFile, "/etc/neardup/kafka-password"));
  EXPECT_EQ(config.kafka.properties.at("ssl.key.password"),
            PropertyValue(PropertyValue::Source::kEnv, "NEARDUP_TEST_SECRET"));
  EXPECT_THAT(error_of("kafka:\n  properties:\n    sasl.password: {path: /x}\n"),
              HasSubstr("kafka.properties.sasl.password: must be a string, number or boolean, "
                        "or {file: PATH} or {env: NAME}"));
}

TEST(ResolveProperty, ReadsTextFilesAndEnvironmentVariables) {
  EXPECT_EQ(resolve_property(PropertyValue("plain")), "plain");

  const std::string path = ::testing::TempDir() + "/neardup-secret";
  std::ofstream(path) << "s3cret\n";
  EXPECT_EQ(resolve_property({PropertyValue::Source::kFile, path}), "s3cret");
  auto missing = resolve_property({PropertyValue::Source::kFile, path + ".missing"});
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error(), HasSubstr("file " + path + ".missing: cannot read: "));
  EXPECT_EQ(resolve_property({PropertyValue::Source::kFile, "/dev/zero"}).error(),
            "file /dev/zero: more than 1048576 bytes; a property is at most 1048576");

  ::setenv("NEARDUP_TEST_SECRET", "from-env", 1);
  EXPECT_EQ(resolve_property({PropertyValue::Source::kEnv, "NEARDUP_TEST_SECRET"}), "from-env");
  ::unsetenv("NEARDUP_TEST_SECRET");
  EXPECT_EQ(resolve_property({PropertyValue::Source::kEnv, "NEARDUP_TEST_SECRET"}).error(),
            "environment variable NEARDUP_TEST_SECRET is not set");
}

TEST(Config, KafkaPropertiesMustBeAMapOfScalars) {
  EXPECT_THAT(error_of("kafka:\n  properties: [a]\n"),
              HasSubstr("kafka.properties: must be a map of librdkafka property names"));
  EXPECT_THAT(error_of("kafka:\n  properties:\n    ssl:\n      key: x\n"),
              HasSubstr("line 3: kafka.properties.ssl: must be a string, number or boolean, or "
                        "{file: PATH} or {env: NAME}"));
  EXPECT_THAT(error_of("kafka:\n  properties:\n    client.id:\n"),
              HasSubstr("kafka.properties.client.id: must be a string, number or boolean, or "
                        "{file: PATH} or {env: NAME}, got nothing"));
}

TEST(Config, KafkaPropertiesThatNeardupSetsAreRejected) {
  EXPECT_THAT(error_of("kafka:\n  properties:\n    group.id: other\n"),
              HasSubstr("kafka.properties.group.id: set kafka.group_id instead"));
  EXPECT_THAT(error_of("kafka:\n  properties:\n    bootstrap.servers: x:1\n"),
              HasSubstr("kafka.properties.bootstrap.servers: set kafka.bootstrap_servers"));
  EXPECT_THAT(error_of("kafka:\n  properties:\n    enable.auto.offset.store: true\n"),
              HasSubstr("kafka.properties.enable.auto.offset.store: managed by neardup"));
}

TEST(Config, InputFieldsMustBeNonEmpty) {
  for (const char* field : {"url", "id", "body", "body_base64", "content_type", "fetched_at"}) {
    EXPECT_THAT(error_of(std::string("input:\n  fields:\n    ") + field + ": ''\n"),
                HasSubstr(std::string("input.fields.") + field + ": must be a non-empty"));
  }
}

TEST(Config, InputFieldsMustBeDistinct) {
  EXPECT_THAT(error_of("input:\n  fields:\n    id: url\n"),
              HasSubstr("line 3: input.fields.id: must differ from input.fields.url (both "
                        "\"url\")"));
}

TEST(Config, MaxBodyBytesIsLimitedToOneGiB) {
  EXPECT_THAT(error_of("input:\n  max_body_bytes: 0\n"),
              HasSubstr("input.max_body_bytes: must be 1..1GiB, got 0"));
  EXPECT_THAT(error_of("input:\n  max_body_bytes: 2GiB\n"),
              HasSubstr("input.max_body_bytes: must be 1..1GiB, got 2GiB"));
}

TEST(Config, DefaultCharsetMustBeAWhatwgLabel) {
  EXPECT_THAT(error_of("decode:\n  default_charset: klingon\n"),
              HasSubstr("decode.default_charset: must be a WHATWG encoding label"));
  EXPECT_THAT(error_of("decode:\n  default_charset: ''\n"), HasSubstr("decode.default_charset"));
  EXPECT_THAT(error_of("decode:\n  default_charset: x-user-defined\n"),
              HasSubstr("decode.default_charset"));
}

TEST(Config, DefaultCharsetLabelBecomesTheEncodingName) {
  EXPECT_EQ(parsed("decode:\n  default_charset: Latin1\n").decode.default_charset, "windows-1252");
  EXPECT_EQ(parsed("decode:\n  default_charset: gb2312\n").decode.default_charset, "gbk");
  EXPECT_EQ(parsed("decode:\n  default_charset: ' UTF8 '\n").decode.default_charset, "utf-8");
  EXPECT_EQ(parsed("decode:\n  default_charset: sjis\n").decode.default_charset, "shift_jis");
}

TEST(Config, PrescanBytesIsLimitedTo512To64KiB) {
  EXPECT_THAT(error_of("decode:\n  prescan_bytes: 511\n"),
              HasSubstr("decode.prescan_bytes: must be 512..64KiB, got 511"));
  EXPECT_THAT(error_of("decode:\n  prescan_bytes: 65537\n"), HasSubstr("got 65537"));
}

TEST(Config, DenoiseModeMustBeKnown) {
  EXPECT_THAT(error_of("denoise:\n  mode: everything\n"),
              HasSubstr("denoise.mode: must be one of main_text, all_text, got \"everything\""));
  EXPECT_EQ(parsed("denoise:\n  mode: all_text\n").denoise.mode, DenoiseMode::kAllText);
}

TEST(Config, DenoiseCapsHaveMinimums) {
  EXPECT_THAT(error_of("denoise:\n  max_nodes: 99\n"),
              HasSubstr("denoise.max_nodes: must be 100..4294967295, got 99"));
  EXPECT_THAT(error_of("denoise:\n  max_millis: 0\n"),
              HasSubstr("denoise.max_millis: must be 1..4294967295, got 0"));
}

TEST(Config, WeightingMustBeKnown) {
  EXPECT_THAT(
      error_of("features:\n  weighting: idf\n"),
      HasSubstr("features.weighting: must be one of tf, log_tf, binary, tfidf, got \"idf\""));
  EXPECT_THAT(error_of("features:\n  cjk: trigrams\n"),
              HasSubstr("features.cjk: must be one of bigrams, words, got \"trigrams\""));
}

TEST(Config, MinFeaturesIsLimited) {
  EXPECT_THAT(error_of("features:\n  min_features: 0\n"),
              HasSubstr("features.min_features: must be 1..100000, got 0"));
  EXPECT_THAT(error_of("features:\n  min_features: 100001\n"), HasSubstr("got 100001"));
}

TEST(Config, MaxTextBytesIsLimited) {
  EXPECT_THAT(error_of("features:\n  max_text_bytes: 100\n"),
              HasSubstr("features.max_text_bytes: must be 1KiB..1GiB, got 100"));
}

TEST(Config, MaxDistanceIsAtMostSixteen) {
  EXPECT_THAT(error_of("dedup:\n  max_distance: 17\nstore:\n  design_k: 16\n"),
              HasSubstr("dedup.max_distance: must be 0..16, got 17"));
}

TEST(Config, MaxDistanceIsAtMostTheDesignK) {
  EXPECT_EQ(error_of("dedup:\n  max_distance: 4\n"),
            "line 2: dedup.max_distance: must be <= store.design_k (3), got 4");
  EXPECT_EQ(parsed("dedup:\n  max_distance: 4\nstore:\n  design_k: 4\n").dedup.max_distance, 4u);
}

TEST(Config, DesignKIsAtMostSixteen) {
  EXPECT_THAT(error_of("store:\n  design_k: 17\n"),
              HasSubstr("store.design_k: must be 0..16, got 17"));
}

TEST(Config, StorePathMustBeNonEmpty) {
  EXPECT_THAT(error_of("store:\n  path: ''\n"), HasSubstr("store.path: must be a non-empty"));
}

TEST(Config, ExpectedDocumentsIsAtLeastOne) {
  EXPECT_THAT(error_of("store:\n  expected_documents: 0\n"),
              HasSubstr("store.expected_documents: must be >= 1, got 0"));
}

TEST(Config, TablesMustBeZeroOrATableCountOfTheDesign) {
  // k = 3: C(4,1) = 4, C(5,2) = 10, C(6,3) = 20, ...
  EXPECT_EQ(parsed("store:\n  tables: 10\n").store.tables, 10u);
  EXPECT_EQ(parsed("store:\n  tables: 0\n").store.tables, 0u);
  EXPECT_THAT(error_of("store:\n  tables: 7\n"),
              HasSubstr("store.tables: must be 0 (derived from store.expected_documents) or "
                        "C(k + r, r) for some r >= 1 with k = store.design_k = 3, at most 100 "
                        "(4, 10, 20, 35, 56, 84), got 7"));
  EXPECT_THAT(error_of("store:\n  tables: -1\n"), HasSubstr("store.tables"));
  // The store's own limit (common/table_counts.h), also here: C(10, 3) = 120 > 100.
  EXPECT_THAT(error_of("store:\n  design_k: 7\n  tables: 120\n"),
              HasSubstr("at most 100 (8, 36), got 120"));
}

TEST(Config, MapSizeIsAtLeastOneMiB) {
  EXPECT_THAT(error_of("store:\n  map_size: 1000\n"),
              HasSubstr("store.map_size: must be 1MiB..64TiB, got 1000"));
}

TEST(Config, MaxMapSizeIsAtLeastMapSize) {
  EXPECT_THAT(error_of("store:\n  map_size: 2GiB\n  max_map_size: 1GiB\n"),
              HasSubstr("line 3: store.max_map_size: must be >= store.map_size (2GiB), got 1GiB"));
}

TEST(Config, PipelineLimits) {
  EXPECT_THAT(error_of("pipeline:\n  threads: 1025\n"),
              HasSubstr("pipeline.threads: must be 0..1024, got 1025"));
  EXPECT_THAT(error_of("pipeline:\n  max_in_flight: 0\n"),
              HasSubstr("pipeline.max_in_flight: must be 1..4294967295, got 0"));
  EXPECT_THAT(error_of("pipeline:\n  batch_size: 0\n"),
              HasSubstr("pipeline.batch_size: must be 1..100000, got 0"));
  EXPECT_THAT(error_of("pipeline:\n  batch_size: 100001\n"), HasSubstr("got 100001"));
  EXPECT_THAT(error_of("pipeline:\n  batch_delay_ms: 60001\n"),
              HasSubstr("pipeline.batch_delay_ms: must be 0..60000, got 60001"));
}

TEST(Config, MetricsListenIsEmptyOrHostPort) {
  EXPECT_EQ(parsed("metrics:\n  listen: ''\n").metrics.listen, "");
  EXPECT_EQ(parsed("metrics:\n  listen: '[::1]:9464'\n").metrics.listen, "[::1]:9464");
  EXPECT_EQ(parsed("metrics:\n  listen: 0.0.0.0:1\n").metrics.listen, "0.0.0.0:1");
  EXPECT_EQ(parsed("metrics:\n  listen: localhost:65535\n").metrics.listen, "localhost:65535");
  // Port 0: any free port, as the listener takes it (common/listen_address.h: one grammar).
  EXPECT_EQ(parsed("metrics:\n  listen: 127.0.0.1:0\n").metrics.listen, "127.0.0.1:0");
  for (const char* bad : {"9464", ":9464", "host:-1", "host:65536", "host:http", "::1:9464",
                          "[::1]9464", "[::1]:", "a b:80"}) {
    EXPECT_THAT(error_of(std::string("metrics:\n  listen: '") + bad + "'\n"),
                HasSubstr("metrics.listen: must be host:port"))
        << bad;
  }
}

TEST(Config, LogLevelMustBeKnown) {
  EXPECT_EQ(parsed("log:\n  level: critical\n").log.level, LogLevel::kCritical);
  EXPECT_EQ(parsed("").log.format, LogFormat::kText);
  EXPECT_EQ(parsed("log:\n  format: json\n").log.format, LogFormat::kJson);
  EXPECT_THAT(error_of("log:\n  format: xml\n"),
              HasSubstr("log.format: must be one of text, json, got \"xml\""));
  EXPECT_THAT(error_of("log:\n  level: verbose\n"),
              HasSubstr("log.level: must be one of trace, debug, info, warn, error, critical, "
                        "off, got \"verbose\""));
}

// --- Files ---------------------------------------------------------------------------------

class ConfigFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_.string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("neardup-config-test-" + std::to_string(::getpid()) + ".yaml");
};

TEST_F(ConfigFile, ErrorNamesTheFileAndLine) {
  std::string path = write("# neardup\nlog:\n  level: info\nfeatures:\n  ngram: 0\n");
  auto config = load_config_file(path);
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error(), path + ": line 5: features.ngram: must be 1..8, got 0");
}

TEST_F(ConfigFile, EveryErrorLineNamesTheFile) {
  std::string path = write("features:\n  ngram: 0\n  weighting: x\n");
  auto config = load_config_file(path);
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr(path + ": line 2: features.ngram"));
  EXPECT_THAT(config.error(), HasSubstr("\n" + path + ": line 3: features.weighting"));
}

TEST_F(ConfigFile, ValidFileLoads) {
  EXPECT_EQ(load_config_file(write("pipeline:\n  threads: 4\n"))->pipeline.threads, 4u);
}

TEST(Config, MissingFileIsAClearError) {
  auto config = load_config_file("/nonexistent/neardup.yaml");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error(), "/nonexistent/neardup.yaml: cannot read: No such file or directory");
}

TEST(Config, DirectoryIsNotAConfigFile) {
  auto config = load_config_file(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(config.has_value());
  EXPECT_THAT(config.error(), HasSubstr("is a directory"));
}

// A stream that never ends (a FIFO here; /dev/zero alike) is refused once more than the 1 MiB a
// config may hold has been read: the writer is never waited for past that.
TEST(Config, EndlessFileIsRefusedAfterTheLimitNotReadToItsEnd) {
  const std::filesystem::path fifo =
      std::filesystem::temp_directory_path() /
      ("neardup-config-test-" + std::to_string(::getpid()) + ".fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::atomic<std::uint64_t> written = 0;
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    const std::string chunk(1 << 16, '#');
    // 64 MiB at most, so that a reader that reads everything still ends.
    while (written < (64u << 20)) {
      const ssize_t n = ::write(fd, chunk.data(), chunk.size());
      if (n <= 0) break;  // EPIPE: the reader has closed its end
      written += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
  });
  ::signal(SIGPIPE, SIG_IGN);
  auto config = load_config_file(fifo.string());
  writer.join();
  std::filesystem::remove(fifo);
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error(),
            fifo.string() + ": more than 1048576 bytes; a config is at most 1048576");
  EXPECT_LT(written.load(), 4u << 20);
}

TEST(Config, DevZeroIsRefusedAfterTheLimit) {
  auto config = load_config_file("/dev/zero");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error(), "/dev/zero: more than 1048576 bytes; a config is at most 1048576");
}

TEST(Config, ExampleConfigParsesToExactlyTheDefaults) {
  auto config = load_config_file(std::string(NEARDUP_SOURCE_DIR) + "/examples/neardup.yaml");
  ASSERT_TRUE(config.has_value()) << config.error();
  EXPECT_EQ(*config, Config{});
}

// --- scheme_id -----------------------------------------------------------------------------

TEST(SchemeId, IsSPlusEightLowerHexDigits) {
  std::string id = scheme_id(Config{});
  ASSERT_EQ(id.size(), 10u);
  EXPECT_EQ(id.substr(0, 2), "s-");
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 2), std::string::npos) << id;
}

TEST(Config, MinHashKeysAreValidatedTogether) {
  // One of the two set: the other is as it was before the store chose (42 bands, 3 rows).
  EXPECT_THAT(error_of("minhash:\n  bands: 50\n"),
              HasSubstr("minhash.bands: bands x rows (50 x 3) must be <= minhash.hashes (128)"));
  EXPECT_THAT(error_of("minhash:\n  hashes: 32\n"),
              HasSubstr("minhash.bands: bands x rows (21 x 2, the default) must be <= "
                        "minhash.hashes (32)"));
  EXPECT_THAT(error_of("minhash:\n  rows: 17\n"), HasSubstr("minhash.rows: must be 0..16, got 17"));
  Config c = parsed("minhash:\n  hashes: 64\n  bands: 21\ndedup:\n  min_similarity: 0.6\n");
  EXPECT_EQ(c.minhash.hashes, 64u);
  EXPECT_EQ(c.minhash.bands, 21u);
  EXPECT_DOUBLE_EQ(c.dedup.min_similarity, 0.6);
}

TEST(Config, SimilarityIsANumberInItsRange) {
  EXPECT_THAT(error_of("dedup:\n  min_similarity: 1.5\n"),
              HasSubstr("line 2: dedup.min_similarity: must be 0.01..1, got 1.5"));
  EXPECT_THAT(error_of("dedup:\n  min_similarity: half\n"),
              HasSubstr("dedup.min_similarity: must be a number in 0.01..1, got half"));
  EXPECT_DOUBLE_EQ(parsed("dedup:\n  min_similarity: .5\n").dedup.min_similarity, 0.5);
  // Printed as the shortest text that reads back the same.
  EXPECT_THAT(to_yaml(parsed("dedup:\n  min_similarity: 0.45\n")), HasSubstr("min_similarity: 0.45\n"));
}

TEST(Config, RetentionIsADurationWithUnits) {
  EXPECT_EQ(parsed("store:\n  retention: 30d\n").store.retention_seconds, 30u * 86400);
  EXPECT_EQ(parsed("store:\n  retention: 90\n").store.retention_seconds, 90u);
  EXPECT_EQ(parsed("store:\n  retention: 2w\n").store.retention_seconds, 14u * 86400);
  EXPECT_THAT(error_of("store:\n  retention: 3 months\n"),
              HasSubstr("store.retention: must be a duration (seconds, or with s, m, h, d, w)"));
  EXPECT_THAT(to_yaml(parsed("store:\n  retention: 36h\n")), HasSubstr("retention: 36h\n"));
}

TEST(Config, AShardIsOneOfTheShardsAndSplitsOnlyWhatCanBeSplit) {
  const Config c = parsed("store:\n  shards: 3\n  shard: 2\n");
  EXPECT_EQ(c.store.shards, 3u);
  EXPECT_EQ(c.store.shard, 2u);
  EXPECT_EQ(Config{}.store.shards, 1u);
  EXPECT_THAT(error_of("store:\n  shards: 3\n  shard: 3\n"),
              HasSubstr("store.shard: must be below store.shards (3), got 3"));
  EXPECT_THAT(error_of("store:\n  shards: 0\n"), HasSubstr("store.shards: must be 1..64"));
  EXPECT_THAT(error_of("store:\n  shards: 2\ncontainment:\n  enabled: true\n"),
              HasSubstr("containment.enabled: is not supported by an index split into shards"));
  EXPECT_THAT(error_of("store:\n  shards: 2\nfeatures:\n  weighting: tfidf\n"),
              HasSubstr("features.weighting: is not supported by an index split into shards"));
  EXPECT_TRUE(parsed("containment:\n  enabled: true\n").containment.enabled);
}

TEST(SchemeId, IsStableForEqualConfigs) { EXPECT_EQ(scheme_id(Config{}), scheme_id(parsed(""))); }

TEST(Config, AnUnsetLshDesignIsTheStoresAndKeepsTheFormerSchemeId) {
  const Config unset;
  EXPECT_EQ(requested_lsh(unset.minhash), LshDesign{});
  EXPECT_EQ(new_scheme_lsh(unset.minhash), kDefaultLsh);
  // Both set, or one: the other as before the store chose.
  EXPECT_EQ(requested_lsh(parsed("minhash:\n  bands: 21\n  rows: 2\n").minhash),
            (LshDesign{21, 2}));
  EXPECT_EQ(requested_lsh(parsed("minhash:\n  bands: 30\n").minhash), (LshDesign{30, 3}));
  EXPECT_EQ(new_scheme_lsh(parsed("minhash:\n  rows: 2\n").minhash), (LshDesign{42, 2}));
  // Unset hashes as 42 x 3 did: a store written then keeps its scheme (and its design).
  EXPECT_EQ(scheme_id(unset), scheme_id(parsed("minhash:\n  bands: 42\n  rows: 3\n")));
  EXPECT_EQ(scheme_id(parsed("minhash:\n  bands: 30\n")),
            scheme_id(parsed("minhash:\n  bands: 30\n  rows: 3\n")));
  EXPECT_NE(scheme_id(unset), scheme_id(parsed("minhash:\n  bands: 21\n  rows: 2\n")));
}

TEST(SchemeId, IsPinnedForAFixedConfig) {
  // The serialisation is a contract (config.h): a different id here means every stored
  // fingerprint would start a new scheme.
  Config config;
  config.decode = {.default_charset = "utf-8", .detect = true, .prescan_bytes = 4096};
  config.denoise = {.mode = DenoiseMode::kMainText, .max_nodes = 200000, .max_millis = 500};
  config.features = {.ngram = 3,
                     .weighting = Weighting::kLogTf,
                     .cjk = CjkTokens::kWords,  // the pinned scheme predates features.cjk
                     .stop_words = false,
                     .min_features = 16,
                     .max_text_bytes = 1 << 20};
  config.fingerprint.seed = 0;
  EXPECT_EQ(scheme_id(config), "s-22a6bf8d");
}

TEST(SchemeId, IsTheDocumentedHashOfTheDocumentedText) {
  Config config;
  config.decode.default_charset = "utf-8";
  config.fingerprint.seed = 7;
  const std::string text =
      "neardup-scheme-v3\n"
      "decode.default_charset=\"utf-8\"\n"
      "decode.detect=" +
      std::string(config.decode.detect ? "true" : "false") +
      "\n"
      "decode.prescan_bytes=" +
      std::to_string(config.decode.prescan_bytes) +
      "\n"
      "denoise.mode=\"" +
      std::string(name_of(config.denoise.mode)) +
      "\"\n"
      "denoise.max_nodes=" +
      std::to_string(config.denoise.max_nodes) +
      "\n"
      "denoise.max_millis=" +
      std::to_string(config.denoise.max_millis) +
      "\n"
      "features.ngram=" +
      std::to_string(config.features.ngram) +
      "\n"
      "features.weighting=\"" +
      std::string(name_of(config.features.weighting)) +
      "\"\n"
      "features.cjk=\"" +
      std::string(name_of(config.features.cjk)) +
      "\"\n"
      "features.stop_words=" +
      std::string(config.features.stop_words ? "true" : "false") +
      "\n"
      "features.min_features=" +
      std::to_string(config.features.min_features) +
      "\n"
      "features.max_text_bytes=" +
      std::to_string(config.features.max_text_bytes) +
      "\n"
      "fingerprint.seed=7\n"
      "minhash.enabled=true\n"
      "minhash.shingle=5\n"
      "minhash.hashes=128\n"
      "minhash.bands=42\n"  // unset: hashed as the former default
      "minhash.rows=3\n";
  const std::uint64_t hash = XXH3_64bits(text.data(), text.size());
  char expected[16];
  std::snprintf(expected, sizeof expected, "s-%08x", static_cast<unsigned>(hash >> 32));
  EXPECT_EQ(scheme_id(config), expected);
}

TEST(SchemeId, AKeyAddedLaterKeepsTheOlderSchemesId) {
  // features.cjk "words" fingerprints as before the key existed: its scheme text leaves the key
  // out, so an index of that scheme goes on matching new pages.
  Config config;
  config.features.cjk = CjkTokens::kWords;
  Config bigrams = config;
  bigrams.features.cjk = CjkTokens::kBigrams;
  EXPECT_NE(scheme_id(config), scheme_id(bigrams));
  EXPECT_EQ(scheme_id(config), "s-aff0c346");  // the default scheme before features.cjk
}

TEST(SchemeId, ChangesWithEveryFingerprintSetting) {
  const Config base;
  const std::string base_id = scheme_id(base);
  std::vector<std::pair<std::string, Config>> variants;
  auto vary = [&](const std::string& name, auto change) {
    Config c = base;
    change(c);
    variants.emplace_back(name, c);
  };
  vary("decode.default_charset", [](Config& c) { c.decode.default_charset = "utf-8"; });
  vary("decode.detect", [](Config& c) { c.decode.detect = !c.decode.detect; });
  vary("decode.prescan_bytes", [](Config& c) { c.decode.prescan_bytes += 1; });
  vary("denoise.mode", [](Config& c) { c.denoise.mode = DenoiseMode::kAllText; });
  vary("denoise.max_nodes", [](Config& c) { c.denoise.max_nodes += 1; });
  vary("denoise.max_millis", [](Config& c) { c.denoise.max_millis += 1; });
  vary("features.ngram", [](Config& c) { c.features.ngram = c.features.ngram % 8 + 1; });
  vary("features.weighting", [](Config& c) {
    c.features.weighting =
        c.features.weighting == Weighting::kBinary ? Weighting::kTf : Weighting::kBinary;
  });
  vary("features.cjk", [](Config& c) { c.features.cjk = CjkTokens::kWords; });
  vary("features.stop_words", [](Config& c) { c.features.stop_words = !c.features.stop_words; });
  vary("features.min_features", [](Config& c) { c.features.min_features += 1; });
  vary("features.max_text_bytes", [](Config& c) { c.features.max_text_bytes += 1; });
  vary("fingerprint.seed", [](Config& c) { c.fingerprint.seed += 1; });
  vary("minhash.enabled", [](Config& c) { c.minhash.enabled = false; });
  vary("minhash.shingle", [](Config& c) { c.minhash.shingle = 4; });
  vary("minhash.hashes", [](Config& c) { c.minhash.hashes = 256; });
  vary("minhash.bands", [](Config& c) { c.minhash.bands = 30; });
  vary("minhash.rows", [](Config& c) { c.minhash.rows = 4; });
  for (const auto& [name, config] : variants) {
    EXPECT_NE(scheme_id(config), base_id) << name;
  }
}

TEST(SchemeId, IgnoresSettingsThatDoNotChangeFingerprints) {
  Config config;
  config.dedup.max_distance = 1;
  config.dedup.min_similarity = 0.9;
  config.store.design_k = 5;
  config.store.path = "/elsewhere";
  config.kafka.input_topic = "other";
  config.kafka.properties["client.id"] = "x";
  config.input.max_body_bytes = 1;
  config.input.fields.url = "link";
  config.output.include_body = false;
  config.pipeline.threads = 3;
  config.metrics.listen = "";
  config.log.level = LogLevel::kDebug;
  EXPECT_EQ(scheme_id(config), scheme_id(Config{}));
}

TEST(SchemeId, EquivalentCharsetLabelsGiveTheSameId) {
  EXPECT_EQ(scheme_id(parsed("decode:\n  default_charset: latin1\n")), scheme_id(Config{}));
}

// --- restart_only_changes ------------------------------------------------------------------

TEST(RestartOnlyChanges, IsEmptyForEqualConfigs) {
  EXPECT_TRUE(restart_only_changes(Config{}, Config{}).empty());
}

TEST(RestartOnlyChanges, NamesEveryChangedRestartKeyInOrder) {
  Config after;
  after.kafka.group_id = "other";
  after.kafka.properties["client.id"] = "x";
  after.store.sync = false;
  after.store.map_size = 2ull << 30;
  after.store.max_map_size = 2ull << 40;
  after.metrics.listen = "";
  after.store.readahead = false;
  after.store.delta_entries = 1u << 19;
  after.store.table_filter_bits = 4;
  after.pipeline.threads = 8;
  EXPECT_EQ(restart_only_changes(Config{}, after),
            (std::vector<std::string>{"kafka.group_id", "kafka.properties", "store.map_size",
                                      "store.max_map_size", "store.sync", "store.readahead",
                                      "store.delta_entries", "store.table_filter_bits",
                                      "pipeline.threads", "metrics.listen"}));
}

TEST(RestartOnlyChanges, IgnoresKeysThatApplyOnReload) {
  Config after;
  after.dedup.max_distance = 1;
  after.log.level = LogLevel::kDebug;
  after.output.include_body = false;
  after.input.max_body_bytes = 1000;
  after.features.ngram = 1;
  after.pipeline.batch_size = 7;
  EXPECT_TRUE(restart_only_changes(Config{}, after).empty());
}

// --- to_yaml -------------------------------------------------------------------------------

TEST(ToYaml, DefaultsRoundTrip) { EXPECT_EQ(parsed(to_yaml(Config{})), Config{}); }

TEST(ToYaml, NonDefaultConfigRoundTrips) {
  Config config;
  config.kafka.bootstrap_servers = "b1:9092,b2:9092";
  config.kafka.exactly_once = true;
  config.kafka.properties = {{"security.protocol", "SASL_SSL"},
                             {"sasl.password", {PropertyValue::Source::kFile, "/etc/p: w"}},
                             {"client.id", "p\"a:ss #\\ word\n"}};
  config.kafka.consumer_properties = {{"session.timeout.ms", "6000"}};
  config.kafka.producer_properties = {
      {"ssl.key.password", {PropertyValue::Source::kEnv, "KEY_PASSWORD"}}};
  config.input.fields.url = "link";
  config.input.max_body_bytes = 12345;
  config.output.include_body = false;
  config.decode.default_charset = "gbk";
  config.decode.detect = false;
  config.denoise.mode = DenoiseMode::kAllText;
  config.features.ngram = 5;
  config.features.weighting = Weighting::kBinary;
  config.features.cjk = CjkTokens::kWords;
  config.features.stop_words = true;
  config.fingerprint.seed = 0xdeadbeefcafef00dull;
  config.dedup.max_distance = 6;
  config.store.design_k = 6;
  config.store.tables = 7;  // C(7, 1) with k = 6
  config.store.path = "/srv/neardup: index";
  config.store.map_size = 3ull << 20;
  config.pipeline.threads = 12;
  config.metrics.listen = "";
  config.log.level = LogLevel::kOff;
  std::string yaml = to_yaml(config);
  EXPECT_EQ(parsed(yaml), config) << yaml;
}

TEST(ToYaml, NeverPrintsTheTextOfASecret) {
  Config config;
  config.kafka.properties = {{"sasl.password", "hunter2"}, {"sasl.username", "neardup"}};
  config.kafka.consumer_properties = {{"ssl.key.password", "k3y"}};
  std::string yaml = to_yaml(config);
  EXPECT_THAT(yaml, Not(HasSubstr("hunter2")));
  EXPECT_THAT(yaml, Not(HasSubstr("k3y")));
  EXPECT_THAT(yaml, HasSubstr("\"sasl.password\": \"<redacted>\""));
  EXPECT_THAT(yaml, HasSubstr("\"sasl.username\": \"neardup\""));
  // A changed secret is still a change that needs a restart.
  Config changed = config;
  changed.kafka.properties["sasl.password"] = "hunter3";
  EXPECT_EQ(restart_only_changes(config, changed), (std::vector<std::string>{"kafka.properties"}));
}

TEST(Config, FingerprintKeyIsASecretTextFileOrVariable) {
  EXPECT_EQ(
      parsed("kafka:\n  fingerprint_key: {file: /etc/neardup/fp.key}\n").kafka.fingerprint_key,
      PropertyValue(PropertyValue::Source::kFile, "/etc/neardup/fp.key"));
  EXPECT_EQ(parsed("kafka:\n  fingerprint_key: {env: FP_KEY}\n").kafka.fingerprint_key,
            PropertyValue(PropertyValue::Source::kEnv, "FP_KEY"));
  EXPECT_THAT(error_of("kafka:\n  fingerprint_key: [a]\n"),
              HasSubstr("kafka.fingerprint_key: must be a string, or {file: PATH} or {env: NAME}"));
  Config config;
  config.kafka.fingerprint_key = PropertyValue("s3cret");
  const std::string yaml = to_yaml(config);
  EXPECT_THAT(yaml, Not(HasSubstr("s3cret")));
  EXPECT_THAT(yaml, HasSubstr("fingerprint_key: \"<redacted>\""));
  EXPECT_EQ(parsed(to_yaml(Config{})).kafka.fingerprint_key, PropertyValue());
}

TEST(ToYaml, PrintsSizesWithSuffixesAndTheSeedInHex) {
  std::string yaml = to_yaml(Config{});
  EXPECT_THAT(yaml, HasSubstr("\n  map_size: 1GiB\n"));
  EXPECT_THAT(yaml, HasSubstr("\n  seed: 0x0000000000000000\n"));
  EXPECT_THAT(yaml, HasSubstr("\ninput:\n  fields:\n    url: \"url\"\n"));
  EXPECT_THAT(yaml, HasSubstr("# neardup configuration (scheme " + scheme_id(Config{}) + ")"));
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

TEST(ConfigWarnings, NameKafkaPropertiesThatWeakenDelivery) {
  auto config = parse_config(
      "kafka:\n  properties:\n    acks: '1'\n  producer_properties:\n"
      "    enable.idempotence: 'False'\n  consumer_properties:\n"
      "    isolation.level: read_uncommitted\n    auto.offset.reset: latest\n"
      "    session.timeout.ms: '6000'\n");
  ASSERT_TRUE(config) << config.error();
  auto warnings = config_warnings(*config);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_TRUE(warnings[0].starts_with("kafka.properties.acks: 1: "));
  EXPECT_TRUE(warnings[1].starts_with("kafka.consumer_properties.auto.offset.reset: latest: "));
  EXPECT_TRUE(warnings[2].starts_with("kafka.consumer_properties.isolation.level: "));
  EXPECT_TRUE(warnings[3].starts_with("kafka.producer_properties.enable.idempotence: False: "));
  EXPECT_TRUE(config_warnings(Config{}).empty());
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

TEST(Config, MapSizesBeyondTheAddressSpaceAreRefused) {
  auto config = parse_config("store:\n  map_size: 16383TiB\n");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().find("store.map_size"), std::string::npos) << config.error();
  EXPECT_TRUE(parse_config("store:\n  map_size: 1TiB\n  max_map_size: 64TiB\n"));
  EXPECT_FALSE(parse_config("store:\n  max_map_size: 65TiB\n"));
}

}  // namespace
}  // namespace neardup
