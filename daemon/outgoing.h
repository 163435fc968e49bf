// The Kafka record neardupd publishes for one consumed record (docs/records.md): its tagged output
// to kafka.output_topic, or its dead letter to kafka.dead_letter_topic. Pure.
//
// Both keep the input's key and its headers, except those named neardup-*, which neardupd owns,
// and add neardup-source, where the input came from ("topic/partition/offset"): an output adds
// neardup-status, neardup-duplicate-of (duplicates) and neardup-scheme; a dead letter carries the
// input's bytes unchanged plus neardup-error (the reason code) and neardup-error-detail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "config/config.h"
#include "daemon/work.h"
#include "kafka/client.h"
#include "store/index.h"

namespace neardup::daemon {

struct Outgoing {
  bool dead_letter = false;
  std::string topic;            // empty: nothing to publish for the record (Publisher::publish)
  std::int32_t partition = -1;  // -1: the partitioner chooses (from the key)
  // The metric label: an output's status, or a dead letter's reason code.
  std::string label;
  const std::string* key = nullptr;  // the input's key (owned by the Work), or none
  std::optional<std::string> own_key;  // a key of the record's own, instead (companions)
  kafka::Headers headers;
  std::string value;

  // A view for kafka::produce, valid while this Outgoing and its Work live.
  kafka::OutgoingRecord record() const;
  // Bytes of key, value and headers: what the broker's max.message.bytes is checked against,
  // less the record batch's own overhead.
  std::size_t size() const;
};

// The record for `work` and its verdict. `shrunk`: the topic refused the full record as too
// large, so an output goes without its body fields and a dead letter with an empty value (its
// neardup-error-detail says so). Built from work.source(): in the index role, the output of the
// crawler's record a fingerprinted record carried.
Outgoing render_outgoing(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                         bool shrunk);

// The fingerprint role's record for `work` (message/fingerprinted.h): to kafka.fingerprint_topic,
// to the partition of the input's number, with the input's key and its headers; label
// "fingerprinted". `shrunk`: the topic refused it as too large, so it goes as a dead letter
// without the input's bytes (fingerprinted_too_large). With a `signing_key`
// (kafka.fingerprint_key) the record carries its signature in the kSignatureHeader header,
// which the input's own headers never supply.
Outgoing render_fingerprinted(const Work& work, const KafkaConfig& topics, bool shrunk,
                              std::string_view signing_key = {});

// Shard `shard` of `shards`' answer for `work` and its verdict (message/shard_answer.h): to
// kafka.candidates_topic, to the partition of the source's number, with the consumed record's
// key; shard 0's also with its headers (but a signature) and its bytes, which the merge stage
// renders the output from. Label "answered". `shrunk`: the topic refused it as too large, so it
// goes without the record's bytes (the merge stage dead-letters the page: answer_too_large).
Outgoing render_shard_answer(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                             std::uint32_t shard, std::uint32_t shards, bool shrunk);

}  // namespace neardup::daemon
