// A merge stage's reader of the documents topic (message/shard_answer.h: every page the merge
// stages decided, and each input partition's mark; docs/scale-out.md, "Decisions"): what it
// reads goes into the stage's MergeState (daemon/merge_state.h), and each mark into
// decided_through(), the last record of an input partition decided by any stage.
//
// It reads every partition of the topic (no group, nothing committed), from where the state had
// read it. catch_up() reads to where each partition ended when called, as written (open
// transactions included: a catch-up reads past that end only once every transaction written
// below it has ended, so it sees every decision committed before it began); follow() reads
// what has come since, a bounded number of records at a time.
//
// Not thread-safe: the merge stage's ordered thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/merge_state.h"
#include "daemon/work.h"

namespace RdKafka {
class KafkaConsumer;
class Message;
}  // namespace RdKafka

namespace spdlog {
class logger;
}  // namespace spdlog

namespace neardup::daemon {

class DocumentsReader {
 public:
  // How long a catch-up may take before it gives up (the stage then stops): a merge stage killed
  // inside a transaction holds the topic's end until the broker aborts it
  // (transaction.timeout.ms, 60 s).
  static constexpr int kCatchUpMillis = 240000;
  // Records follow() reads at most.
  static constexpr int kFollowRecords = 10000;
  // How often what was read is written to the state, at most.
  static constexpr int kFlushMillis = 1000;

  // Opens the state (the first free merge-N under store.path) and the topic's consumers (with
  // the merge role's client properties), assigns every partition from where the state had read
  // it (all of them from their beginning, the state emptied, when the topic ends before that:
  // it was made anew), and catches up. The error names what failed.
  static std::expected<std::unique_ptr<DocumentsReader>, std::string> open(
      const Config& startup, std::shared_ptr<spdlog::logger> log);
  // Writes what was read to the state, and closes the consumers.
  ~DocumentsReader();
  DocumentsReader(const DocumentsReader&) = delete;
  DocumentsReader& operator=(const DocumentsReader&) = delete;

  MergeState& state() { return *state_; }
  const MergeState& state() const { return *state_; }
  // Per input partition, the last record decided (by any stage, as read; the stage adds its
  // own). A record at or below it was merged before.
  std::map<PartitionId, std::int64_t>& decided_through() { return decided_through_; }

  // Reads every partition up to where it ended when called. Error: an end that cannot be
  // learned, or kCatchUpMillis passed.
  std::expected<void, std::string> catch_up();
  // Reads at most kFollowRecords records of what has come, without waiting; writes the state
  // when kFlushMillis have passed since it last did.
  void follow();

 private:
  DocumentsReader(const Config& startup, std::shared_ptr<spdlog::logger> log);
  std::expected<void, std::string> start();
  // A partition's end as written (its high watermark, open transactions included).
  std::expected<std::int64_t, std::string> end_of(std::int32_t partition);
  // One message; false when there was none.
  bool read(RdKafka::Message& message);
  // Writes what was read to the state; on failure it stays in memory (and is logged).
  void flush();

  const Config& startup_;
  const std::string topic_;
  const std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<RdKafka::KafkaConsumer> documents_;
  std::unique_ptr<RdKafka::KafkaConsumer> ends_;  // read_uncommitted: end_of()
  std::vector<std::int32_t> partitions_;
  std::unique_ptr<MergeState> state_;
  std::chrono::steady_clock::time_point last_flush_;
  std::map<PartitionId, std::int64_t> decided_through_;
};

}  // namespace neardup::daemon
