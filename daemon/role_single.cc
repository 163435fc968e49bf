// The single process (--role single, the default): the input topic's records through the
// pipeline and the index, tagged or dead-lettered (daemon/README.md).
#include "daemon/index_stage.h"

namespace neardup::daemon {
namespace {

class SingleStage final : public IndexStage {
 public:
  using IndexStage::IndexStage;

  Role role() const override { return Role::kSingle; }
  std::vector<std::string> required_topics() const override {
    const KafkaConfig& k = startup_.kafka;
    return {k.input_topic, k.output_topic, k.dead_letter_topic};
  }
  void prepare(Work& work, const std::shared_ptr<const Config>& config,
               const std::string& scheme) override {
    run_pipeline(work, config, scheme, metrics_);
    work.digest = record_digest(work.input.value);
  }
  // The verdicts are stored against the consumed offsets: committed ones cannot come back.
  void committed(const PartitionId& partition, std::int64_t next) override {
    trim_below(partition_key(partition), next);
  }
};

}  // namespace

std::unique_ptr<Stage> make_single_stage(StageContext context) {
  return std::make_unique<SingleStage>(context);
}

}  // namespace neardup::daemon
