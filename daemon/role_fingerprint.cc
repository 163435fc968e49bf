// A fingerprint worker (--role fingerprint, any number): the input topic's records through the
// pipeline, each published as a fingerprinted record to the fingerprint partition of the same
// number for the index role (daemon/README.md, "Scaled out: two roles"). No store.
#include "daemon/role.h"

namespace neardup::daemon {
namespace {

class FingerprintStage final : public Stage {
 public:
  explicit FingerprintStage(StageContext context)
      : startup_config_(context.startup),
        metrics_(context.metrics),
        key_(std::move(context.fingerprint_key)) {}

  Role role() const override { return Role::kFingerprint; }
  std::vector<std::string> required_topics() const override {
    return {startup_.kafka.input_topic, startup_.kafka.fingerprint_topic};
  }
  // Each input partition's pages go to the fingerprint partition of the same number, so the
  // fingerprint topic needs at least as many partitions.
  std::expected<void, std::string> check_cluster(RdKafka::Handle& handle) const override {
    const KafkaConfig& k = startup_.kafka;
    return check_partitions_follow(handle, {"kafka.input_topic", k.input_topic},
                                   {"kafka.fingerprint_topic", k.fingerprint_topic});
  }
  // Workers share their input by design: each record is fingerprinted alone.
  bool owns_every_partition() const override { return false; }

  void prepare(Work& work, const std::shared_ptr<const Config>& config,
               const std::string& scheme) override {
    run_pipeline(work, config, scheme, metrics_);
  }
  // No verdicts: the records go on as they are.
  std::expected<std::vector<Verdict>, std::string> decide(const std::vector<WorkPtr>& batch,
                                                          const Config&,
                                                          const std::atomic<bool>&) override {
    return std::vector<Verdict>(batch.size());
  }
  Outgoing render(const Work& work, const Verdict&, const KafkaConfig& topics,
                  bool shrunk) const override {
    return render_fingerprinted(work, topics, shrunk, key_);
  }

 private:
  const std::shared_ptr<const Config> startup_config_;
  const Config& startup_ = *startup_config_;
  ops::DaemonMetrics* const metrics_;
  const std::string key_;  // kafka.fingerprint_key: the records' signature
};

}  // namespace

std::unique_ptr<Stage> make_fingerprint_stage(StageContext context) {
  return std::make_unique<FingerprintStage>(std::move(context));
}

}  // namespace neardup::daemon
