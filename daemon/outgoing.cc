#include "daemon/outgoing.h"

#include "message/fingerprinted.h"
#include "message/shard_answer.h"

namespace neardup::daemon {

kafka::OutgoingRecord Outgoing::record() const {
  return kafka::OutgoingRecord{.topic = topic,
                               .partition = partition,
                               .key = own_key ? &*own_key : key,
                               .value = value,
                               .headers = headers};
}

std::size_t Outgoing::size() const {
  const std::string* k = own_key ? &*own_key : key;
  std::size_t bytes = value.size() + (k ? k->size() : 0);
  for (const auto& [name, header] : headers) bytes += name.size() + header.size();
  return bytes;
}

Outgoing render_outgoing(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                         bool shrunk) {
  const ConsumedRecord& source = work.source();
  Outgoing out;
  out.key = source.key ? &*source.key : nullptr;
  for (const auto& header : source.headers) {
    if (!header.first.starts_with("neardup-")) out.headers.push_back(header);
  }
  // Both carry where the input came from: what consumers deduplicate a redelivery by.
  out.headers.emplace_back("neardup-source", source_position(source));
  Outcome outcome = render_outcome(work.processed, verdict, shrunk);
  if (outcome.dead_letter) {
    out.dead_letter = true;
    out.topic = topics.dead_letter_topic;
    out.label = outcome.error.code;
    std::string detail = outcome.error.detail;
    if (shrunk) detail += " (value dropped: larger than the topic accepts)";
    out.headers.emplace_back("neardup-error", outcome.error.code);
    out.headers.emplace_back("neardup-error-detail", std::move(detail));
    if (!shrunk) out.value = source.value;
    return out;
  }
  out.topic = topics.output_topic;
  out.label = outcome.tag.status;
  out.headers.emplace_back("neardup-status", outcome.tag.status);
  if (outcome.tag.status == "duplicate") {
    out.headers.emplace_back("neardup-duplicate-of", outcome.tag.duplicate_of);
  }
  out.headers.emplace_back("neardup-scheme", outcome.tag.scheme);
  out.value = outcome.value();
  return out;
}

Outgoing render_fingerprinted(const Work& work, const KafkaConfig& topics, bool shrunk,
                              std::string_view signing_key) {
  const ConsumedRecord& input = work.input;
  Outgoing out;
  out.topic = topics.fingerprint_topic;
  out.partition = input.partition.second;
  out.label = "fingerprinted";
  out.key = input.key ? &*input.key : nullptr;
  for (const auto& header : input.headers) {
    if (header.first != kSignatureHeader) out.headers.push_back(header);
  }
  out.value = encode_fingerprinted(make_fingerprinted(work.processed, input.partition.first,
                                                      input.partition.second, input.offset,
                                                      input.timestamp_ms, input.value, shrunk));
  if (!signing_key.empty()) {
    out.headers.emplace_back(kSignatureHeader,
                             fingerprinted_signature(signing_key, out.key, out.headers, out.value));
  }
  return out;
}

Outgoing render_shard_answer(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                             std::uint32_t shard, std::uint32_t shards, bool shrunk) {
  const ConsumedRecord& source = work.source();
  Outgoing out;
  out.topic = topics.candidates_topic;
  out.partition = source.partition.second;
  out.label = "answered";
  out.key = work.input.key ? &*work.input.key : nullptr;
  ShardAnswer answer{.shard = shard,
                     .shards = shards,
                     .source_topic = source.partition.first,
                     .source_partition = source.partition.second,
                     .source_offset = source.offset,
                     .verdict = verdict};
  if (shard == 0) {
    for (const auto& header : work.input.headers) {
      if (header.first != kSignatureHeader) out.headers.push_back(header);
    }
    if (!shrunk) answer.fingerprinted = work.input.value;
  }
  out.value = encode_shard_answer(answer);
  return out;
}

}  // namespace neardup::daemon
