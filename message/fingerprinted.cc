#include "message/fingerprinted.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/coding.h"

namespace neardup {
namespace {

constexpr std::string_view kFingerprintedMagic = "NDFP";

enum Kind : std::uint8_t { kPage = 0, kSkipped = 1, kDeadLetter = 2 };

}  // namespace

std::string encode_fingerprinted(const FingerprintedRecord& record) {
  using namespace coding;
  const PageFingerprint& result = record.result;
  std::string out;
  out.reserve(128 + record.source_topic.size() + record.scheme.size() + result.charset.size() +
              4 * result.sketch.size() + record.value.size());
  out.append(kFingerprintedMagic);
  out.push_back(static_cast<char>(kFingerprintedVersion));
  put_length_prefixed(out, record.source_topic);
  put_fixed32(out, static_cast<std::uint32_t>(record.source_partition));
  put_fixed64(out, static_cast<std::uint64_t>(record.source_offset));
  put_fixed64(out, static_cast<std::uint64_t>(record.timestamp_ms));
  put_length_prefixed(out, record.scheme);
  if (record.error) {
    out.push_back(static_cast<char>(kDeadLetter));
    put_length_prefixed(out, record.error->code);
    put_length_prefixed(out, record.error->detail);
  } else {
    out.push_back(static_cast<char>(result.skip ? kSkipped : kPage));
    if (result.skip) {
      put_length_prefixed(out, result.skip->reason);
      put_length_prefixed(out, result.skip->detail);
    }
    put_length_prefixed(out, result.charset);
    put_length_prefixed(out, result.charset_source);
    put_fixed64(out, result.feature_count);
    out.push_back(result.denoise_fell_back ? 1 : 0);
    put_fixed64(out, result.fingerprint);
    put_fixed32(out, static_cast<std::uint32_t>(result.sketch.size()));
    for (std::uint16_t h : result.sketch) put_fixed16(out, h);
    put_fixed32(out, static_cast<std::uint32_t>(result.sketch_upper.size()));
    for (std::uint16_t h : result.sketch_upper) put_fixed16(out, h);
    const Passages& passages = result.passages;
    put_fixed32(out, passages.tokens);
    put_fixed32(out, static_cast<std::uint32_t>(passages.anchors.size()));
    for (std::uint64_t a : passages.anchors) put_fixed64(out, a);
    put_fixed32(out, static_cast<std::uint32_t>(passages.paragraphs.size()));
    for (const ParagraphHash& p : passages.paragraphs) {
      put_fixed64(out, p.hash);
      put_fixed32(out, p.index);
      put_fixed32(out, p.tokens);
    }
    put_length_prefixed(out, result.text);  // kept for output.main_text only
  }
  put_length_prefixed(out, record.value);
  return out;
}

std::expected<FingerprintedRecord, std::string> decode_fingerprinted(std::string_view bytes) {
  coding::ByteReader in(bytes);
  if (in.bytes(kFingerprintedMagic.size()) != kFingerprintedMagic) {
    return std::unexpected("not a fingerprinted record (no NDFP magic)");
  }
  const std::uint8_t version = in.u8();
  if (version < 1 || version > kFingerprintedVersion) {
    return std::unexpected("fingerprinted record version " + std::to_string(version) +
                           ", this reader knows 1 to " + std::to_string(kFingerprintedVersion));
  }
  FingerprintedRecord record;
  record.source_topic = in.length_prefixed();
  record.source_partition = static_cast<std::int32_t>(in.u32());
  record.source_offset = static_cast<std::int64_t>(in.u64());
  record.timestamp_ms = static_cast<std::int64_t>(in.u64());
  record.scheme = in.length_prefixed();
  const std::uint8_t kind = in.u8();
  if (kind == kDeadLetter) {
    RecordError error;
    error.code = in.length_prefixed();
    error.detail = in.length_prefixed();
    record.error = std::move(error);
  } else if (kind == kPage || kind == kSkipped) {
    PageFingerprint& result = record.result;
    if (kind == kSkipped) {
      Skip skip;
      skip.reason = in.length_prefixed();
      skip.detail = in.length_prefixed();
      result.skip = std::move(skip);
    }
    result.charset = in.length_prefixed();
    result.charset_source = in.length_prefixed();
    result.feature_count = in.u64();
    result.denoise_fell_back = in.u8() != 0;
    result.fingerprint = in.u64();
    const std::uint32_t hashes = in.u32();
    // Each hash takes two bytes: a count past what is left is a damaged record, not a reason
    // to allocate.
    if (!in.ok() || hashes > bytes.size() / 2) return std::unexpected("truncated");
    result.sketch.resize(hashes);
    for (std::uint16_t& h : result.sketch) h = in.u16();
    if (version >= 3) {  // versions 1 and 2 carry no upper values
      const std::uint32_t upper = in.u32();
      if (!in.ok() || (upper != 0 && upper != hashes)) return std::unexpected("truncated");
      result.sketch_upper.resize(upper);
      for (std::uint16_t& h : result.sketch_upper) h = in.u16();
    }
    if (version >= 2) {  // version 1 carries no passages
      Passages& passages = result.passages;
      passages.tokens = in.u32();
      const std::uint32_t anchors = in.u32();
      if (!in.ok() || anchors > bytes.size() / 8) return std::unexpected("truncated");
      passages.anchors.resize(anchors);
      for (std::uint64_t& a : passages.anchors) a = in.u64();
      const std::uint32_t paragraphs = in.u32();
      if (!in.ok() || paragraphs > bytes.size() / 16) return std::unexpected("truncated");
      passages.paragraphs.resize(paragraphs);
      for (ParagraphHash& p : passages.paragraphs) {
        p.hash = in.u64();
        p.index = in.u32();
        p.tokens = in.u32();
      }
      result.text = in.length_prefixed();
    }
  } else if (in.ok()) {
    return std::unexpected("unknown record kind " + std::to_string(kind));
  }
  record.value = in.length_prefixed();
  if (!in.ok()) return std::unexpected("truncated");
  if (!in.done()) return std::unexpected("trailing bytes after the record");
  return record;
}

FingerprintedRecord make_fingerprinted(const ProcessedRecord& processed, std::string source_topic,
                                       std::int32_t source_partition, std::int64_t source_offset,
                                       std::int64_t timestamp_ms, std::string_view value,
                                       bool drop_value) {
  FingerprintedRecord record{.source_topic = std::move(source_topic),
                             .source_partition = source_partition,
                             .source_offset = source_offset,
                             .timestamp_ms = timestamp_ms,
                             .scheme = processed.scheme};
  if (drop_value) {
    record.error = RecordError{"fingerprinted_too_large",
                               "the record and its fingerprint exceed the fingerprint topic's "
                               "max.message.bytes: its value was dropped"};
    return record;
  }
  if (!processed.page) {
    record.error = processed.page.error();
  } else {
    record.result = processed.result;
    record.result.title.clear();
    record.result.text.clear();
  }
  record.value = std::string(value);
  return record;
}

std::expected<void, std::string> check_fingerprinted(const FingerprintedRecord& record,
                                                     const Config& config, std::string_view scheme,
                                                     std::int32_t partition) {
  if (record.source_topic != config.kafka.input_topic) {
    return std::unexpected("names topic " + record.source_topic + ", not kafka.input_topic " +
                           config.kafka.input_topic);
  }
  if (record.source_partition != partition) {
    return std::unexpected("names input partition " + std::to_string(record.source_partition) +
                           " but was read from fingerprint partition " + std::to_string(partition) +
                           " (workers publish to the same number)");
  }
  if (record.source_offset < 0) {
    return std::unexpected("names offset " + std::to_string(record.source_offset));
  }
  if (record.error || record.result.skip || record.scheme != scheme) return {};
  const std::size_t hashes = config.minhash.enabled ? config.minhash.hashes : 0;
  if (record.result.sketch.size() != hashes) {
    return std::unexpected("a page of scheme " + record.scheme + " with a sketch of " +
                           std::to_string(record.result.sketch.size()) + " values, where the " +
                           "scheme has " + std::to_string(hashes));
  }
  return {};
}

std::string fingerprinted_signature(std::string_view secret, const std::string* key,
                                    const RecordHeaders& headers, std::string_view value) {
  std::string message = "NDFP-SIG1";
  coding::put_fixed32(message, key ? 1 : 0);
  if (key) coding::put_length_prefixed(message, *key);
  for (const auto& [name, text] : headers) {
    if (name == kSignatureHeader) continue;
    coding::put_length_prefixed(message, name);
    coding::put_length_prefixed(message, text);
  }
  coding::put_length_prefixed(message, value);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[mac[i] >> 4]);
    hex.push_back(kHex[mac[i] & 15]);
  }
  return hex;
}

bool signature_matches(std::string_view secret, const std::string* key,
                       const RecordHeaders& headers, std::string_view value) {
  const std::string* given = nullptr;
  for (const auto& [name, text] : headers) {
    if (name != kSignatureHeader) continue;
    if (given != nullptr) return false;
    given = &text;
  }
  if (given == nullptr) return false;
  const std::string expected = fingerprinted_signature(secret, key, headers, value);
  return given->size() == expected.size() &&
         CRYPTO_memcmp(given->data(), expected.data(), expected.size()) == 0;
}

ProcessedRecord processed_from(FingerprintedRecord record, std::shared_ptr<const Config> config,
                               std::string_view scheme) {
  ProcessedRecord processed{.config = std::move(config), .scheme = std::move(record.scheme)};
  if (record.error) {
    processed.page = std::unexpected(std::move(*record.error));
    return processed;
  }
  if (processed.scheme != scheme) {
    // The LSH design and the sketch's length belong to the scheme: a page fingerprinted under
    // other settings than the index runs cannot be asked under them.
    processed.page = std::unexpected(
        RecordError{"scheme_mismatch", "fingerprinted under scheme " + processed.scheme +
                                           ", the index runs " + std::string(scheme) +
                                           ": give the workers and the index the same "
                                           "fingerprint settings"});
    return processed;
  }
  processed.page = parse_page(record.value, processed.config->input);
  processed.result = std::move(record.result);
  return processed;
}

}  // namespace neardup
