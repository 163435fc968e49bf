#include "daemon/documents_reader.h"

#include <librdkafka/rdkafkacpp.h>

#include <algorithm>

#include "common/log.h"
#include "daemon/clients.h"
#include "daemon/role.h"
#include "kafka/admin.h"

namespace neardup::daemon {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

DocumentsReader::DocumentsReader(const Config& startup, std::shared_ptr<spdlog::logger> log)
    : startup_(startup), topic_(startup.kafka.documents_topic), log_(std::move(log)) {}

DocumentsReader::~DocumentsReader() {
  if (state_) flush();
  if (documents_) documents_->close();
  if (ends_) ends_->close();
}

std::expected<std::unique_ptr<DocumentsReader>, std::string> DocumentsReader::open(
    const Config& startup, std::shared_ptr<spdlog::logger> log) {
  std::unique_ptr<DocumentsReader> reader(new DocumentsReader(startup, std::move(log)));
  if (auto started = reader->start(); !started) return std::unexpected(started.error());
  return reader;
}

std::expected<void, std::string> DocumentsReader::start() {
  auto settings = consumer_properties(startup_, Role::kMerge);
  if (!settings) return std::unexpected(settings.error());
  settings->emplace_back("group.id", consumer_group(startup_, Role::kMerge) + "-documents");
  settings->emplace_back("enable.auto.commit", "false");
  settings->emplace_back("enable.partition.eof", "true");
  auto conf = kafka::make_conf(*settings);
  if (!conf) return std::unexpected("kafka consumer: " + conf.error());
  auto made = kafka::make_consumer(**conf);
  if (!made) return std::unexpected(made.error());
  documents_ = std::move(*made);
  // The topic's end as written, open transactions included (a read_committed client's
  // ListOffsets answers the last stable offset instead): end_of().
  for (auto& [name, value] : *settings) {
    if (name == "isolation.level") value = "read_uncommitted";
  }
  auto ends_conf = kafka::make_conf(*settings);
  if (!ends_conf) return std::unexpected("kafka consumer: " + ends_conf.error());
  auto ends = kafka::make_consumer(**ends_conf);
  if (!ends) return std::unexpected(ends.error());
  ends_ = std::move(*ends);
  auto opened = MergeState::open(startup_.store.path, topic_);
  if (!opened) return std::unexpected(opened.error());
  state_ = std::move(*opened);
  auto partitions = kafka::topic_partitions(*documents_, topic_, kMetadataMillis);
  if (!partitions) return std::unexpected(partitions.error());
  for (std::int32_t p : *partitions) {
    auto end = end_of(p);
    if (!end) return std::unexpected(end.error());
    if (state_->next(p) > *end) {  // the topic was made anew: its offsets start again
      log_->warn(
          "{} ends at {} in partition {}, before where the state {} had read it ({}): "
          "reading it again from its beginning",
          topic_, *end, p, state_->path(), state_->next(p));
      if (auto cleared = state_->clear(); !cleared) return cleared;
      break;
    }
  }
  kafka::TopicPartitions wanted;
  for (std::int32_t p : *partitions) wanted.add(topic_, p, state_->next(p));
  partitions_ = *partitions;
  for (const auto& [input, offset] : state_->marks()) {
    decided_through_[PartitionId{input.first, input.second}] = offset;
  }
  const std::uint64_t kept = state_->stored();
  if (RdKafka::ErrorCode code = documents_->assign(wanted.get()); code) {
    return std::unexpected("assign " + topic_ + ": " + RdKafka::err2str(code));
  }
  const auto start = Clock::now();
  if (auto caught = catch_up(); !caught) return caught;
  log_->info(
      "documents read topic={} state={} pages_kept={} pages={} partitions_decided={} "
      "seconds={:.1f}",
      topic_, state_->path(), kept, state_->stored(), decided_through_.size(),
      std::chrono::duration<double>(Clock::now() - start).count());
  return {};
}

std::expected<std::int64_t, std::string> DocumentsReader::end_of(std::int32_t p) {
  std::int64_t low = 0, high = 0;
  if (RdKafka::ErrorCode code =
          ends_->query_watermark_offsets(topic_, p, &low, &high, kMetadataMillis);
      code) {
    return std::unexpected("the end of " + topic_ + "/" + std::to_string(p) +
                           " unknown: " + RdKafka::err2str(code));
  }
  return high;
}

void DocumentsReader::flush() {
  last_flush_ = Clock::now();
  if (auto flushed = state_->flush(); !flushed) {
    log_->warn("{} (kept in memory: {} pages)", flushed.error(), state_->unflushed());
  }
}

std::expected<void, std::string> DocumentsReader::catch_up() {
  std::map<std::int32_t, std::int64_t> ends;
  for (std::int32_t p : partitions_) {
    auto end = end_of(p);
    if (!end) return std::unexpected(end.error());
    ends[p] = *end;
  }
  const auto deadline = Clock::now() + milliseconds(kCatchUpMillis);
  while (true) {
    bool done = true;
    for (const auto& [p, end] : ends) done = done && state_->next(p) >= end;
    if (done) {
      flush();
      return {};
    }
    if (Clock::now() > deadline) {
      return std::unexpected("could not read " + topic_ + " to its end within " +
                             std::to_string(kCatchUpMillis / 1000) + " s");
    }
    std::unique_ptr<RdKafka::Message> message(documents_->consume(100));
    read(*message);
  }
}

void DocumentsReader::follow() {
  for (int n = 0; n < kFollowRecords; ++n) {
    std::unique_ptr<RdKafka::Message> message(documents_->consume(0));
    if (!read(*message)) break;
  }
  if (Clock::now() - last_flush_ >= milliseconds(kFlushMillis)) flush();
}

bool DocumentsReader::read(RdKafka::Message& message) {
  const std::int32_t p = message.partition();
  switch (message.err()) {
    case RdKafka::ERR_NO_ERROR:
      break;
    case RdKafka::ERR__PARTITION_EOF:
      state_->reached(p, message.offset());
      return true;
    case RdKafka::ERR__TIMED_OUT:
      return false;
    default:
      log_->warn("documents topic error={}", message.errstr());
      return false;
  }
  state_->reached(p, message.offset() + 1);
  const std::string_view key =
      message.key() ? std::string_view(*message.key()) : std::string_view();
  auto record = decode_documents_record(
      key, std::string_view(static_cast<const char*>(message.payload()), message.len()));
  if (!record) {
    log_->warn("documents record {}/{}/{} skipped: {}", message.topic_name(), p, message.offset(),
               record.error());
    return true;
  }
  const SourcePosition& source = record->source;
  if (record->mark) {
    std::int64_t& through = decided_through_[PartitionId{source.topic, source.partition}];
    through = std::max(through, source.offset);
  }
  state_->read(p, message.offset(), *record);
  return true;
}

}  // namespace neardup::daemon
