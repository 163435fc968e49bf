#include "daemon/daemon.h"

#include <chrono>

#include "common/log.h"
#include "daemon/engine.h"
#include "pipeline/learn/finish.h"

namespace neardup::daemon {
namespace {

StoreError no_index() {
  return StoreError{StoreError::Code::kNotFound, 0,
                    "this role has no index: ask the index role (or a shard)"};
}

std::unique_ptr<Stage> make_stage(Role role, StageContext context) {
  switch (role) {
    case Role::kFingerprint:
      return make_fingerprint_stage(std::move(context));
    case Role::kIndex:
      return make_index_stage(std::move(context));
    case Role::kShard:
      return make_shard_stage(std::move(context));
    case Role::kMerge:
      return make_merge_stage(std::move(context));
    case Role::kSingle:
      break;
  }
  return make_single_stage(std::move(context));
}

}  // namespace

Daemon::Daemon(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}

std::expected<void, std::string> Daemon::check_cluster(const std::shared_ptr<const Config>& config,
                                                       Role role) {
  auto producer = make_daemon_producer(*config, role, nullptr, nullptr);
  if (!producer) return std::unexpected(producer.error());
  const std::unique_ptr<Stage> stage = make_stage(role, StageContext{.startup = config});
  if (auto present = check_cluster_for(**producer, *stage, config->kafka.bootstrap_servers);
      !present) {
    return std::unexpected(present.error().message);
  }
  return {};
}

Daemon::~Daemon() = default;

std::expected<std::unique_ptr<Daemon>, StartError> Daemon::create(const ops::ConfigHolder& holder,
                                                                  std::unique_ptr<Index> index,
                                                                  ops::DaemonMetrics* metrics,
                                                                  Role role) {
  const std::shared_ptr<const Config> config = holder.current();
  if (role != Role::kSingle && learn::learns(*config)) {
    // The fingerprinted record carries finished signatures; what the index learns finishes
    // them at the index, from the text's tokens, which only the single role keeps.
    return std::unexpected(StartError(
        "features.weighting tfidf and denoise.site_boilerplate learn from the crawl at the "
        "index, which needs the page's text: run the single role (--role single), or turn "
        "them off for --role " +
            std::string(role_name(role)),
        true));
  }
  if ((role == Role::kShard || role == Role::kMerge) && !config->kafka.exactly_once) {
    // A merge stage must see each shard's answer once, and publish a page's output with the
    // decision it records in one transaction (docs/scale-out.md).
    return std::unexpected(StartError(
        "--role " + std::string(role_name(role)) + " needs kafka.exactly_once: true", true));
  }
  auto key = resolve_property(config->kafka.fingerprint_key);
  if (!key) return std::unexpected(StartError("kafka.fingerprint_key: " + key.error(), true));
  // The flag lives in the Daemon, made first so that the engine can hold it.
  auto daemon = std::unique_ptr<Daemon>(new Daemon(nullptr));
  auto engine = Engine::create(holder,
                               make_stage(role, StageContext{.startup = config,
                                                             .metrics = metrics,
                                                             .index = std::move(index),
                                                             .fingerprint_key = std::move(*key)}),
                               metrics, daemon->stop_requested_);
  if (!engine) return std::unexpected(engine.error());
  daemon->engine_ = std::move(*engine);
  return daemon;
}

std::expected<void, std::string> Daemon::run() {
  auto log = logger("daemon");
  const Stage& stage = engine_->stage();
  const Role role = stage.role();
  const std::vector<std::string> topics = stage.required_topics();
  const std::string& consumed = consumed_topic(engine_->startup(), role);
  std::string produces;
  for (const std::string& topic : topics) {
    if (topic != consumed) produces += (produces.empty() ? "" : ",") + topic;
  }
  log->info("started role={} input={} group={} produces={} scheme={} exactly_once={}",
            role_name(role), consumed, consumer_group(engine_->startup(), role), produces,
            scheme_id(engine_->startup()), engine_->startup().kafka.exactly_once);
  auto ran = engine_->run();
  const DaemonCounts c = counts();
  log->info("stopped pages_in={} outputs={} dead_letters={} replayed={} stop_ms={}", c.pages_in,
            c.outputs, c.dead_letters, c.replayed, engine_->stop_duration().count());
  finished_ = true;
  return ran;
}

Role Daemon::role() const { return engine_->stage().role(); }

DaemonCounts Daemon::counts() const {
  const EngineCounts c = engine_->counts();
  return {c.pages_in, c.outputs, c.dead_letters, engine_->stage().replayed()};
}

IndexStats Daemon::index_stats() {
  Index* index = engine_->stage().index();
  return index ? index->stats() : IndexStats{};
}

StoreResult<LookupAnswer> Daemon::lookup(const ProcessedRecord& record) {
  Index* index = engine_->stage().index();
  if (!index) return std::unexpected(no_index());
  return lookup_record(*index, record);
}

StoreResult<std::optional<nlohmann::json>> Daemon::describe_page(const std::string& id,
                                                                 std::size_t max_members) {
  Index* index = engine_->stage().index();
  if (!index) return std::unexpected(no_index());
  return neardup::describe_page(*index, id, max_members);
}

StoreResult<nlohmann::json> Daemon::explain_stored(const std::string& id,
                                                   const std::string& with) {
  Index* index = engine_->stage().index();
  if (!index) return std::unexpected(no_index());
  return neardup::explain_stored(*index, id, with);
}

std::expected<void, std::string> Daemon::health() const { return engine_->health(); }

std::expected<void, std::string> Daemon::readiness() const { return engine_->readiness(); }

}  // namespace neardup::daemon
