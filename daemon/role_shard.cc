// A shard of the index split by table and band (--role shard --shard J; docs/scale-out.md): the
// fingerprint workers' records, checked like any input (fingerprinted_stage.h), applied to its
// share of the index (store.shard of store.shards), and its answer for each published to
// kafka.candidates_topic, where the merge stages wait for every shard's.
//
// Its store records how far it has applied each fingerprint partition, and the shard starts
// each partition there when that is below its group's committed offset: a store built by a
// standby replica (--replica: the same store under a group of its own, publishing nothing),
// restored from a copy, or new, answers again what it had not applied. The merge stages pass
// over answers of records they have decided, and a shard answers a record it applied before
// as it did then, so answering again never changes an output.
#include <librdkafka/rdkafkacpp.h>

#include "daemon/fingerprinted_stage.h"

namespace neardup::daemon {
namespace {

class ShardStage final : public FingerprintedStage {
 public:
  explicit ShardStage(StageContext context)
      : FingerprintedStage(std::move(context)),
        shard_(startup_.store.shard),
        shards_(startup_.store.shards),
        replica_(startup_.store.replica) {
    record_positions_ = true;
  }

  Role role() const override { return Role::kShard; }
  std::vector<std::string> required_topics() const override {
    const KafkaConfig& k = startup_.kafka;
    return {k.fingerprint_topic, k.candidates_topic};
  }
  // Each fingerprint partition's answers go to the candidates partition of the same number.
  std::expected<void, std::string> check_cluster(RdKafka::Handle& handle) const override {
    const KafkaConfig& k = startup_.kafka;
    return check_partitions_follow(handle, {"kafka.fingerprint_topic", k.fingerprint_topic},
                                   {"kafka.candidates_topic", k.candidates_topic});
  }

  void start_offsets(std::map<PartitionId, std::int64_t>& start) override {
    const IndexStats stats = index()->stats();
    const bool store_new = stats.documents == 0 && stats.applied_offsets.empty();
    for (auto& [partition, offset] : start) {
      auto position = index()->applied_offset(partition_key(partition));
      if (!position) {
        log_->warn(
            "the store's position in partition={} unknown error={}: starting at the "
            "group's committed offset",
            partition_key(partition), position.error().message);
        continue;
      }
      const std::int64_t from = store_start(offset, *position, store_new);
      if (from == offset) continue;
      log_->info(
          "partition={} starts at {} below the group's committed offset {}: the store "
          "stands there (answers again what it had not applied)",
          partition_key(partition),
          from == RdKafka::Topic::OFFSET_BEGINNING ? "the beginning" : std::to_string(from),
          offset);
      offset = from;
    }
  }

  // A replica publishes nothing: its transactions carry its offsets alone.
  Outgoing render(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                  bool shrunk) const override {
    if (replica_) return Outgoing{};
    return render_shard_answer(work, verdict, topics, shard_, shards_, shrunk);
  }

 private:
  const std::uint32_t shard_, shards_;
  const bool replica_;
};

}  // namespace

std::unique_ptr<Stage> make_shard_stage(StageContext context) {
  return std::make_unique<ShardStage>(std::move(context));
}

}  // namespace neardup::daemon
