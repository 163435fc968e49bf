// One consumed record on its way through neardupd (docs/delivery.md).
//
// Written in two phases, each by one thread, and read-only afterwards: the consumer thread fills
// `input` when it creates the Work, before sharing it; one pipeline worker fills `processed`
// and then calls Lanes::mark_ready, whose mutex publishes it to the index thread. The verdict
// and the delivery state are not kept here: the index thread hands the verdict to the
// Publisher, which keeps it with the record's delivery (daemon/publisher.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "daemon/offset_tracker.h"
#include "kafka/client.h"
#include "message/processing.h"
#include "message/shard_answer.h"

namespace neardup::daemon {

// A Kafka record as consumed.
struct ConsumedRecord {
  PartitionId partition;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = 0;
  std::optional<std::string> key;
  kafka::Headers headers;
  std::string value;
};

// Where a record came from, "topic/partition/offset" (e.g. "pages/3/1042"): the neardup-source
// header of its output or dead letter, and the source= of log lines.
inline std::string source_position(const ConsumedRecord& record) {
  return partition_key(record.partition) + "/" + std::to_string(record.offset);
}

struct Work {
  explicit Work(ConsumedRecord record) : input(std::move(record)) {}

  // The input record this work stands for: what its output keeps (key, headers), what a dead
  // letter carries and names (neardup-source), and the offset its verdict is stored against.
  // The consumed record itself, except in the index role, where it is the crawler's record a
  // fingerprinted record carries (message/fingerprinted.h).
  const ConsumedRecord& source() const { return carried ? *carried : input; }

  const ConsumedRecord input;  // as consumed: its offset is what the consumer commits
  // By one pipeline worker, before Lanes::mark_ready:
  ProcessedRecord processed;
  std::optional<ConsumedRecord> carried;  // index role: the record carried by `input`
  std::uint64_t digest = 0;               // record_digest(source().value), stored with its verdict
  // Merge role: the shard's answer this record is (its verdict; shard 0's record bytes are
  // read into `processed` and `carried` instead), or none when it is not one.
  std::optional<ShardAnswer> answer;
  // Merge role: set by decide() on the ordered thread, before the record is rendered on that
  // thread, for the shard's answer that completes a page's answers: the answer that carries the
  // page (shard 0's), whose source() and processed record the output is rendered from. When that
  // answer is this record's own, the pointer does not own it.
  std::shared_ptr<const Work> carrier;
};
using WorkPtr = std::shared_ptr<Work>;

}  // namespace neardup::daemon
