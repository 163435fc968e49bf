// The fingerprinted page (daemon/README.md, "Scaled out: two roles"): what a fingerprint worker
// (neardupd --role fingerprint) publishes to kafka.fingerprint_topic for one input record, and
// what the index role (neardupd --role index) reads back to apply it to the index and publish
// the tagged output exactly as a single process would. Pure.
//
// The Kafka record keeps the input's key and headers as they are; its value is this encoding
// (all integers little-endian, strings a u32 length then the bytes):
//
//   "NDFP" u8 version (3; versions 2, without upper values, and 1, without passages either, are
//   read too)
//   source topic (string) u32 partition u64 offset u64 timestamp_ms   -- the input record
//   scheme (string)
//   u8 kind: 0 page, 1 skipped page, 2 dead letter
//   kind 2:    code (string) detail (string)
//   kind 0, 1: [kind 1: reason (string) detail (string)] charset (string) charset_source (string)
//              u64 feature_count u8 denoise_fell_back u64 simhash u32 n, n x u16 sketch
//              u32 u, u x u16 upper value (u is 0 or n: common/sketch.h)
//              u32 tokens u32 n, n x u64 anchor u32 m, m x (u64 hash u32 index u32 tokens)
//              paragraph                                          -- the passages
//              main text (string; empty unless output.main_text asks for it)
//   value (string): the input record's bytes (empty when the worker had to drop them)
//
// A newer version is refused by an older reader (bad_fingerprinted_record), never misread.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "message/processing.h"

namespace neardup {

inline constexpr std::uint8_t kFingerprintedVersion = 3;

struct FingerprintedRecord {
  std::string source_topic;  // the input record's topic, partition, offset and timestamp
  std::int32_t source_partition = 0;
  std::int64_t source_offset = 0;
  std::int64_t timestamp_ms = 0;
  std::string scheme;                // the worker's scheme_id
  std::optional<RecordError> error;  // set: the input record is a dead letter
  PageFingerprint result;            // otherwise: the pipeline's result (title/text not kept)
  std::string value;                 // the input record's bytes
};

std::string encode_fingerprinted(const FingerprintedRecord& record);

// The record, or why the bytes are not one ("truncated", "not a fingerprinted record",
// "version 7, this reader knows 1").
std::expected<FingerprintedRecord, std::string> decode_fingerprinted(std::string_view bytes);

// The worker's record for a processed input record. `drop_value`: the input's bytes do not fit
// the fingerprint topic (max.message.bytes); the record becomes a dead letter
// (fingerprinted_too_large) without them.
FingerprintedRecord make_fingerprinted(const ProcessedRecord& processed, std::string source_topic,
                                       std::int32_t source_partition, std::int64_t source_offset,
                                       std::int64_t timestamp_ms, std::string_view value,
                                       bool drop_value = false);

// Whether a decoded record may stand for the input record it names, for an index that runs
// `config` (whose scheme_id is `scheme`) and read it from partition `partition` of the
// fingerprint topic: its source is the partition of the same number of kafka.input_topic (where
// every worker publishes), at an offset >= 0; a page of the index's scheme (not skipped) carries a
// sketch of minhash.hashes values (none when minhash.enabled is false). Otherwise the error says
// what does not hold. A record that fails must not be applied against the offset it names.
std::expected<void, std::string> check_fingerprinted(const FingerprintedRecord& record,
                                                     const Config& config, std::string_view scheme,
                                                     std::int32_t partition);

// Signed records (kafka.fingerprint_key, docs/configuration.md): a worker puts in the header
// kSignatureHeader the HMAC-SHA256, under the key, of the record's key, headers (all but that
// one, in order) and value, as 64 lower-case hex digits; the index role applies only records
// whose signature matches, so that a record written to the fingerprint topic by anyone without
// the key is a dead letter, whatever offset it names.
inline constexpr std::string_view kSignatureHeader = "neardup-signature";
using RecordHeaders = std::vector<std::pair<std::string, std::string>>;
std::string fingerprinted_signature(std::string_view secret, const std::string* key,
                                    const RecordHeaders& headers, std::string_view value);
// Whether `headers` hold exactly one kSignatureHeader, and it matches.
bool signature_matches(std::string_view secret, const std::string* key,
                       const RecordHeaders& headers, std::string_view value);

// The index role's ProcessedRecord for a fingerprinted page, under the index's `config`: the
// envelope is parsed again from the carried value (the output is rendered from it), the
// pipeline's result and the scheme are the worker's. A dead letter stays one; a page of another
// scheme than `scheme` (scheme_id(*config), which callers compute once per config) becomes one
// (scheme_mismatch): its sketch and LSH design belong to the worker's settings.
ProcessedRecord processed_from(FingerprintedRecord record, std::shared_ptr<const Config> config,
                               std::string_view scheme);

}  // namespace neardup
