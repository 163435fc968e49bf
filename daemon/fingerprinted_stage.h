// What the roles that apply the fingerprint workers' records share (role_index.cc: the whole
// index; role_shard.cc: a shard of it): each record decoded, checked and, with
// kafka.fingerprint_key, its signature verified, standing for the crawler's record it carries;
// and the verdicts stored against the crawler's input offsets trimmed once the workers' group
// has committed past them (daemon/README.md, "Scaled out: two roles").
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/mutex.h"
#include "daemon/consumer.h"
#include "daemon/index_stage.h"

namespace neardup::daemon {

// The work of a fingerprinted record (message/fingerprinted.h), `bytes`, read from partition
// `partition` of kafka.fingerprint_topic, under `config` (whose scheme_id is `scheme`): its
// processed record and the crawler's record it carries (work.carried); or, when the bytes do
// not decode, do not fit the config (check_fingerprinted) or `signature` says the record is not
// signed as it must be, a bad_fingerprinted_record dead letter against the work's own input.
void read_fingerprinted(Work& work, std::string_view bytes, std::int32_t partition,
                        std::shared_ptr<const Config> config, const std::string& scheme,
                        const std::optional<std::string>& signature_error = std::nullopt);

// Where a shard starts consuming a fingerprint partition (Stage::start_offsets): from the
// group's committed offset `committed` (negative: none, auto.offset.reset), or lower where its
// store stands lower: after `position`, the last offset the store applied of the partition
// (Index::applied_offset, kept by IndexStage's record_positions_), or from the first record
// kept (RdKafka::Topic::OFFSET_BEGINNING) for a store that has applied nothing (`store_new`).
// A store that holds pages but no position (written before positions were kept) starts at
// `committed`.
std::int64_t store_start(std::int64_t committed, std::optional<std::int64_t> position,
                         bool store_new);

class FingerprintedStage : public IndexStage {
 public:
  explicit FingerprintedStage(StageContext context);
  ~FingerprintedStage() override;

  // A client of the fingerprint workers' group that never joins it, to read their committed
  // input offsets (poll()).
  std::expected<void, std::string> attach(RdKafka::KafkaConsumer& consumer) override;
  void prepare(Work& work, const std::shared_ptr<const Config>& config,
               const std::string& scheme) override;
  void poll(const std::set<PartitionId>& assigned) override EXCLUDES(plans_mutex_);
  void committed(const PartitionId& partition, std::int64_t next) override EXCLUDES(plans_mutex_);

 private:
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

}  // namespace neardup::daemon
