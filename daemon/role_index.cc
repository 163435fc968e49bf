// The index role (--role index, one process: the store's owner): the fingerprint workers'
// records, checked like any input, applied to the index and published tagged exactly as the
// single process publishes them (daemon/README.md, "Scaled out: two roles").
#include <chrono>
#include <map>

#include "daemon/clients.h"
#include "daemon/consumer.h"
#include "daemon/index_stage.h"
#include "kafka/admin.h"
#include "message/fingerprinted.h"

namespace neardup::daemon {
namespace {

using std::chrono::milliseconds;

// How often the index reads the fingerprint workers' committed input offsets, to trim the
// verdicts stored against source offsets that can no longer come back (poll()).
constexpr int kTrimCheckMillis = 10000;

class IndexRoleStage final : public IndexStage {
 public:
  explicit IndexRoleStage(StageContext context)
      : IndexStage(context), key_(std::move(context.fingerprint_key)) {}
  ~IndexRoleStage() override {
    if (worker_offsets_) worker_offsets_->close();
  }

  Role role() const override { return Role::kIndex; }
  std::vector<std::string> required_topics() const override {
    const KafkaConfig& k = startup_.kafka;
    return {k.fingerprint_topic, k.output_topic, k.dead_letter_topic};
  }

  // A client of the fingerprint workers' group that never joins it, to read their committed
  // input offsets (poll()).
  std::expected<void, std::string> attach(RdKafka::KafkaConsumer& consumer) override {
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

  void prepare(Work& work, const std::shared_ptr<const Config>& config,
               const std::string& scheme) override {
    read_fingerprinted(work, config, scheme);
    work.digest = record_digest(work.source().value);
  }

  // Every kTrimCheckMillis (consumer thread): the workers' committed offset of each assigned
  // partition's input, then the fingerprint partition's end. Every copy of an input offset below
  // the former was published before that commit, so it lies below the latter.
  void poll(const std::set<PartitionId>& assigned) override EXCLUDES(plans_mutex_) {
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
      if (consumer_->query_watermark_offsets(startup_.kafka.fingerprint_topic, tp->partition(),
                                             &low, &high,
                                             kAssignmentCheckMillis) != RdKafka::ERR_NO_ERROR) {
        continue;
      }
      plans[tp->partition()] = TrimPlan{tp->offset(), high};
    }
    MutexLock lock(plans_mutex_);
    for (const auto& [partition, plan] : plans) plans_[partition] = plan;
  }

  // The fingerprint partition `partition` is committed up to `next`. The verdicts are stored
  // against the crawler's input offsets, which a worker may publish again until its group
  // commits past them: they are trimmed below the workers' committed offset once everything the
  // fingerprint partition held after that commit is committed here (poll()). Records
  // dead-lettered against their own fingerprint-topic position go below `next`.
  void committed(const PartitionId& partition, std::int64_t next) override EXCLUDES(plans_mutex_) {
    trim_below(partition_key(partition), next);
    MutexLock lock(plans_mutex_);
    auto plan = plans_.find(partition.second);
    if (plan == plans_.end() || next < plan->second.fingerprint_end) return;
    trim_below(partition_key({startup_.kafka.input_topic, partition.second}),
               plan->second.input_committed);
    plans_.erase(plan);
  }

 private:
  // A record that does not decode, does not fit the index (check_fingerprinted) or is not
  // signed with kafka.fingerprint_key is a dead letter against its own position in the
  // fingerprint topic, never against the input offset it names. Otherwise the work stands for
  // the crawler's record it carries.
  void read_fingerprinted(Work& work, std::shared_ptr<const Config> config,
                          const std::string& scheme) const {
    auto record = decode_fingerprinted(work.input.value);
    if (record) {
      if (auto fits = check_fingerprinted(*record, *config, scheme, work.input.partition.second);
          !fits) {
        record = std::unexpected(fits.error());
      } else if (!key_.empty() &&
                 !signature_matches(key_, work.input.key ? &*work.input.key : nullptr,
                                    work.input.headers, work.input.value)) {
        record = std::unexpected(std::string("its ") + std::string(kSignatureHeader) +
                                 " header is missing or not made with kafka.fingerprint_key");
      }
    }
    if (!record) {
      work.processed = ProcessedRecord{.config = std::move(config), .scheme = scheme};
      work.processed.page =
          std::unexpected(RecordError{"bad_fingerprinted_record", record.error()});
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

  // Per input partition number: the workers' committed input offset and the fingerprint
  // partition's high watermark read after it.
  struct TrimPlan {
    std::int64_t input_committed = 0;
    std::int64_t fingerprint_end = 0;
  };

  const std::string key_;  // kafka.fingerprint_key: records must carry its signature
  RdKafka::KafkaConsumer* consumer_ = nullptr;  // the role's consumer (watermarks)
  std::unique_ptr<RdKafka::KafkaConsumer> worker_offsets_;
  Mutex plans_mutex_;
  std::map<std::int32_t, TrimPlan> plans_ GUARDED_BY(plans_mutex_);
  Clock::time_point last_plan_ GUARDED_BY(plans_mutex_);
};

}  // namespace

std::unique_ptr<Stage> make_index_stage(StageContext context) {
  return std::make_unique<IndexRoleStage>(std::move(context));
}

}  // namespace neardup::daemon
