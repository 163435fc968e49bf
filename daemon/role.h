// What one neardupd process does (daemon/README.md, "Scaled out: two roles"), and the stage each
// role plugs into the engine (engine.h).
//
// The engine does what every role shares: it consumes a topic with backpressure, hands each
// record to the role's prepare() on a pool of workers, gives the role the prepared records in
// batches in offset order per partition (decide(), on one thread), publishes what render() makes
// of each record and its verdict, and stores or commits the consumed offsets once those are
// delivered. A role is the rest, in a file of its own:
//   role_single.cc       kSingle       input topic -> pipeline -> index -> outputs (the default)
//   role_fingerprint.cc  kFingerprint  input topic -> pipeline -> fingerprint topic (any number)
//   role_index.cc        kIndex        fingerprint topic -> index -> outputs (the store's owner)
//   role_shard.cc        kShard        fingerprint topic -> shard j of the index -> candidates
//   role_merge.cc        kMerge        candidates -> the S answers of a page merged -> outputs
// index_stage.h holds what the roles with a store share, and fingerprinted_stage.h what the
// roles that read the workers' fingerprinted records share.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "daemon/outgoing.h"
#include "daemon/work.h"
#include "ops/metrics.h"
#include "store/index.h"

namespace neardup::daemon {

// How long a role waits for a topic's metadata (check_cluster).
inline constexpr int kMetadataMillis = 5000;

enum class Role { kSingle, kFingerprint, kIndex, kShard, kMerge };
std::string_view role_name(Role role);  // single, fingerprint, index, shard, merge
std::optional<Role> parse_role(std::string_view name);

// The consumer group and topic a role consumes: kafka.group_id and kafka.input_topic, but for
// the index, "<group_id>-index" and kafka.fingerprint_topic; for shard j (store.shard),
// "<group_id>-<candidates_topic>-shard-<j>" (a replica's: "...-shard-<j>-replica") and
// kafka.fingerprint_topic; for the merge stages,
// "<group_id>-<candidates_topic>-merge" and kafka.candidates_topic. A set of shards is named by
// the candidates topic it answers on, so that a new one (resharding: docs/scale-out.md) starts
// from the fingerprint topic's beginning beside the old.
std::string consumer_group(const Config& config, Role role);
const std::string& consumed_topic(const Config& config, Role role);

// What a role plugs into the engine. The engine calls each method on the thread it names; the
// role keeps whatever state it needs for that, and says which thread owns it.
class Stage {
 public:
  virtual ~Stage() = default;

  virtual Role role() const = 0;
  // The topics the role needs to exist: the engine checks them before it handles a record.
  virtual std::vector<std::string> required_topics() const = 0;
  // What else the cluster must hold (partition counts), once the topics exist; the error says
  // what is wrong and how to mend it. Any thread.
  virtual std::expected<void, std::string> check_cluster(RdKafka::Handle&) const { return {}; }
  // Whether this process must be assigned every partition of what it consumes (one store per
  // group, so a second member pauses both: daemon/README.md, "One daemon per consumer group").
  virtual bool owns_every_partition() const = 0;
  // Once the engine's clients exist, before any thread runs: `consumer` consumes the role's
  // topic (and outlives the stage's use of it). The error stops the start.
  virtual std::expected<void, std::string> attach(RdKafka::KafkaConsumer& consumer) {
    (void)consumer;
    return {};
  }

  // A worker thread, any number at once: fills work.processed (and carried, digest) from the
  // record as consumed, under `config` (whose scheme_id is `scheme`).
  virtual void prepare(Work& work, const std::shared_ptr<const Config>& config,
                       const std::string& scheme) = 0;

  // The ordered thread, one batch at a time (each partition's records in offset order): one
  // verdict per record. Returns the error that must stop the daemon (nothing of the batch may
  // be published then); `stop` set by a stop request ends any wait.
  virtual std::expected<std::vector<Verdict>, std::string> decide(
      const std::vector<WorkPtr>& batch, const Config& config, const std::atomic<bool>& stop) = 0;
  // The ordered thread, before it waits for the next batch: work queued by the other threads.
  virtual void between_batches() {}

  // The record to publish for a record and its verdict (`shrunk`: the topic refused the full
  // record as too large). A worker's or the ordered thread, or the delivery thread.
  virtual Outgoing render(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                          bool shrunk) const = 0;

  // Records to publish besides render()'s, in the same transaction (the merge role's documents
  // records); the ordered thread, after render(). Not counted as outputs.
  virtual std::vector<Outgoing> companions(const Work& work, const Verdict& verdict) const {
    (void)work;
    (void)verdict;
    return {};
  }
  // Under kafka.exactly_once, the offsets a batch's transaction commits (the next offset to
  // consume, per partition): the role may lower one below a record it still holds (one whose
  // outcome a later record decides: the merge role). The ordered thread.
  virtual void bound_commits(std::map<PartitionId, std::int64_t>& next) const { (void)next; }

  // The consumer thread, when the group assigns partitions to this process: `start` holds each
  // one's committed offset (RdKafka::Topic::OFFSET_INVALID: none, auto.offset.reset applies),
  // where consuming starts; the role may move a start lower (OFFSET_BEGINNING: the first
  // record kept), when its state stands below the group's commits (a shard's store built by a
  // replica, restored, or new).
  virtual void start_offsets(std::map<PartitionId, std::int64_t>& start) { (void)start; }
  // The consumer thread, when the group assigns these partitions to this process, before any of
  // their records is consumed.
  virtual void assigned(const std::vector<PartitionId>& partitions) { (void)partitions; }
  // The consumer thread, at every turn of the consume loop, with the partitions assigned.
  virtual void poll(const std::set<PartitionId>& assigned) { (void)assigned; }
  // A consumed partition is committed up to `next`: from the consumer thread's commit callback,
  // or the ordered thread when a transaction commits.
  virtual void committed(const PartitionId& partition, std::int64_t next) {
    (void)partition;
    (void)next;
  }

  // Why the role cannot take pages now (e.g. its store is out of space); any thread.
  virtual std::expected<void, std::string> readiness() const { return {}; }
  // The role's store, if it has one.
  virtual Index* index() { return nullptr; }
  // Records answered from stored state (a replayed offset or page); any thread.
  virtual std::uint64_t replayed() const { return 0; }
};

// That topic `to` has at least as many partitions as topic `from`, whose partition n's records
// go to its partition n (each a config key and the topic it names); otherwise the error names
// both counts and how to add partitions.
std::expected<void, std::string> check_partitions_follow(
    RdKafka::Handle& handle, std::pair<std::string_view, const std::string&> from,
    std::pair<std::string_view, const std::string&> to);

// The pure pipeline on a consumed record (prepare() of the roles that fingerprint): the record
// parsed and fingerprinted under `config`, its stage times observed when `metrics` is set.
void run_pipeline(Work& work, const std::shared_ptr<const Config>& config,
                  const std::string& scheme, ops::DaemonMetrics* metrics);

// Everything a role's stage may need, given by the engine when it makes it.
struct StageContext {
  std::shared_ptr<const Config> startup;  // the config at start-up (restart-only keys)
  ops::DaemonMetrics* metrics;            // may be null
  std::unique_ptr<Index> index;           // the store (null for a fingerprint worker)
  std::string fingerprint_key;            // kafka.fingerprint_key, read (empty: no signing)
};

// The stage of `role` (role_*.cc).
std::unique_ptr<Stage> make_single_stage(StageContext context);
std::unique_ptr<Stage> make_fingerprint_stage(StageContext context);
std::unique_ptr<Stage> make_index_stage(StageContext context);
std::unique_ptr<Stage> make_shard_stage(StageContext context);
std::unique_ptr<Stage> make_merge_stage(StageContext context);

}  // namespace neardup::daemon
