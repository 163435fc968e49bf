#include "daemon/fingerprinted_stage.h"

#include <chrono>

#include "daemon/clients.h"
#include "daemon/consumer.h"
#include "kafka/admin.h"
#include "message/fingerprinted.h"

namespace neardup::daemon {
namespace {

using std::chrono::milliseconds;

// How often the stage reads the fingerprint workers' committed input offsets, to trim the
// verdicts stored against source offsets that can no longer come back (poll()).
constexpr int kTrimCheckMillis = 10000;

}  // namespace

void read_fingerprinted(Work& work, std::string_view bytes, std::int32_t partition,
                        std::shared_ptr<const Config> config, const std::string& scheme,
                        const std::optional<std::string>& signature_error) {
  auto record = decode_fingerprinted(bytes);
  if (record) {
    if (auto fits = check_fingerprinted(*record, *config, scheme, partition); !fits) {
      record = std::unexpected(fits.error());
    } else if (signature_error) {
      record = std::unexpected(*signature_error);
    }
  }
  if (!record) {
    work.processed = ProcessedRecord{.config = std::move(config), .scheme = scheme};
    work.processed.page = std::unexpected(RecordError{"bad_fingerprinted_record", record.error()});
    return;
  }
  work.carried = ConsumedRecord{.partition = {record->source_topic, record->source_partition},
                                .offset = record->source_offset,
                                .timestamp_ms = record->timestamp_ms,
                                .key = work.input.key,
                                .headers = work.input.headers,
                                .value = record->value};
  work.processed = processed_from(std::move(*record), std::move(config), scheme);
}

std::int64_t store_start(std::int64_t committed, std::optional<std::int64_t> position,
                         bool store_new) {
  if (committed < 0) return committed;
  if (position) return std::min(committed, *position + 1);
  return store_new ? RdKafka::Topic::OFFSET_BEGINNING : committed;
}

FingerprintedStage::FingerprintedStage(StageContext context)
    : IndexStage(context), key_(std::move(context.fingerprint_key)) {}

FingerprintedStage::~FingerprintedStage() {
  if (worker_offsets_) worker_offsets_->close();
}

std::expected<void, std::string> FingerprintedStage::attach(RdKafka::KafkaConsumer& consumer) {
  consumer_ = &consumer;
  auto settings = consumer_properties(startup_, Role::kFingerprint);
  if (!settings) return std::unexpected(settings.error());
  auto conf = kafka::make_conf(*settings);
  if (!conf) return std::unexpected("kafka consumer: " + conf.error());
  auto made = kafka::make_consumer(**conf);
  if (!made) return std::unexpected(made.error());
  worker_offsets_ = std::move(*made);
  return {};
}

// A record that does not decode, does not fit the index (check_fingerprinted) or is not signed
// with kafka.fingerprint_key is a dead letter against its own position in the fingerprint
// topic, never against the input offset it names. Otherwise the work stands for the crawler's
// record it carries.
void FingerprintedStage::prepare(Work& work, const std::shared_ptr<const Config>& config,
                                 const std::string& scheme) {
  std::optional<std::string> unsigned_record;
  if (!key_.empty() && !signature_matches(key_, work.input.key ? &*work.input.key : nullptr,
                                          work.input.headers, work.input.value)) {
    unsigned_record = std::string("its ") + std::string(kSignatureHeader) +
                      " header is missing or not made with kafka.fingerprint_key";
  }
  read_fingerprinted(work, work.input.value, work.input.partition.second, config, scheme,
                     unsigned_record);
  work.digest = record_digest(work.source().value);
}

// Every kTrimCheckMillis (consumer thread): the workers' committed offset of each assigned
// partition's input, then the fingerprint partition's end. Every copy of an input offset below
// the former was published before that commit, so it lies below the latter.
void FingerprintedStage::poll(const std::set<PartitionId>& assigned) {
  {
    MutexLock lock(plans_mutex_);
    if (assigned.empty() || Clock::now() - last_plan_ < milliseconds(kTrimCheckMillis)) return;
    last_plan_ = Clock::now();
  }
  kafka::TopicPartitions wanted;
  for (const auto& id : assigned) {
    wanted.add(startup_.kafka.input_topic, id.second, RdKafka::Topic::OFFSET_INVALID);
  }
  if (RdKafka::ErrorCode code = worker_offsets_->committed(wanted.get(), kAssignmentCheckMillis);
      code) {
    log_->debug("workers' committed offsets unknown error={}", kafka::error_name(code));
    return;
  }
  std::map<std::int32_t, TrimPlan> plans;
  for (auto* tp : wanted.get()) {
    if (tp->err() != RdKafka::ERR_NO_ERROR || tp->offset() < 0) continue;
    std::int64_t low = 0, high = 0;
    if (consumer_->query_watermark_offsets(startup_.kafka.fingerprint_topic, tp->partition(), &low,
                                           &high,
                                           kAssignmentCheckMillis) != RdKafka::ERR_NO_ERROR) {
      continue;
    }
    plans[tp->partition()] = TrimPlan{tp->offset(), high};
  }
  MutexLock lock(plans_mutex_);
  for (const auto& [partition, plan] : plans) plans_[partition] = plan;
}

// The fingerprint partition `partition` is committed up to `next`. The verdicts are stored
// against the crawler's input offsets, which a worker may publish again until its group commits
// past them: they are trimmed below the workers' committed offset once everything the
// fingerprint partition held after that commit is committed here (poll()). Records
// dead-lettered against their own fingerprint-topic position go below `next`.
void FingerprintedStage::committed(const PartitionId& partition, std::int64_t next) {
  trim_below(partition_key(partition), next);
  MutexLock lock(plans_mutex_);
  auto plan = plans_.find(partition.second);
  if (plan == plans_.end() || next < plan->second.fingerprint_end) return;
  trim_below(partition_key({startup_.kafka.input_topic, partition.second}),
             plan->second.input_committed);
  plans_.erase(plan);
}

}  // namespace neardup::daemon
