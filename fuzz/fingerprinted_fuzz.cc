// A fingerprinted record (message/fingerprinted.h), as the index role consumes it from
// kafka.fingerprint_topic: decoding any bytes either fails with a reason or gives a record that
// encodes and decodes back to itself; a decoded record then goes through what the index role
// does without the index (its checks against the scheme and its position, the signature, the
// envelope parsed again, the output or the dead letter).
#include <memory>
#include <string_view>

#include "fuzz/fuzz_target.h"
#include "message/fingerprinted.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neardup;
  static const auto config = std::make_shared<const Config>();
  static const std::string scheme = scheme_id(*config);
  auto record = decode_fingerprinted(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!record) {
    if (record.error().empty()) __builtin_trap();  // a refusal names its reason
    return 0;
  }
  auto again = decode_fingerprinted(encode_fingerprinted(*record));
  if (!again || again->value != record->value || again->scheme != record->scheme ||
      again->source_offset != record->source_offset ||
      again->result.sketch != record->result.sketch ||
      again->result.fingerprint != record->result.fingerprint ||
      again->error.has_value() != record->error.has_value()) {
    __builtin_trap();
  }
  // What the index role checks before it applies a record: any bytes give a yes or a reason,
  // and a record signed with the key is the only one whose signature matches.
  for (std::int32_t partition : {0, record->source_partition}) {
    if (auto fits = check_fingerprinted(*record, *config, scheme, partition);
        !fits && fits.error().empty()) {
      __builtin_trap();
    }
  }
  const std::string value(reinterpret_cast<const char*>(data), size);
  RecordHeaders headers = {{"h", record->scheme}};
  headers.emplace_back(kSignatureHeader, fingerprinted_signature("key", nullptr, headers, value));
  if (!signature_matches("key", nullptr, headers, value) ||
      signature_matches("other", nullptr, headers, value)) {
    __builtin_trap();
  }
  const ProcessedRecord processed = processed_from(std::move(*record), config, scheme);
  const Outcome outcome = render_outcome(processed, Verdict{});
  if (!outcome.dead_letter && outcome.value().empty()) __builtin_trap();
  return 0;
}
