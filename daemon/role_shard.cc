// A shard of the index split by table and band (--role shard --shard J; docs/scale-out.md): the
// fingerprint workers' records, checked like any input (fingerprinted_stage.h), applied to its
// share of the index (store.shard of store.shards), and its answer for each published to
// kafka.candidates_topic, where the merge stages wait for every shard's.
#include "daemon/fingerprinted_stage.h"

namespace neardup::daemon {
namespace {

class ShardStage final : public FingerprintedStage {
 public:
  explicit ShardStage(StageContext context)
      : FingerprintedStage(std::move(context)),
        shard_(startup_.store.shard),
        shards_(startup_.store.shards) {}

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

  Outgoing render(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                  bool shrunk) const override {
    return render_shard_answer(work, verdict, topics, shard_, shards_, shrunk);
  }

 private:
  const std::uint32_t shard_, shards_;
};

}  // namespace

std::unique_ptr<Stage> make_shard_stage(StageContext context) {
  return std::make_unique<ShardStage>(std::move(context));
}

}  // namespace neardup::daemon
