// The index role (--role index, one process: the store's owner): the fingerprint workers'
// records, checked like any input (fingerprinted_stage.h), applied to the index and published
// tagged exactly as the single process publishes them (daemon/README.md, "Scaled out: two
// roles").
#include "daemon/fingerprinted_stage.h"

namespace neardup::daemon {
namespace {

class IndexRoleStage final : public FingerprintedStage {
 public:
  explicit IndexRoleStage(StageContext context) : FingerprintedStage(std::move(context)) {}

  Role role() const override { return Role::kIndex; }
  std::vector<std::string> required_topics() const override {
    const KafkaConfig& k = startup_.kafka;
    return {k.fingerprint_topic, k.output_topic, k.dead_letter_topic};
  }
};

}  // namespace

std::unique_ptr<Stage> make_index_stage(StageContext context) {
  return std::make_unique<IndexRoleStage>(std::move(context));
}

}  // namespace neardup::daemon
