// A merge stage of the index split into shards (--role merge, any number: a consumer group over
// kafka.candidates_topic; docs/scale-out.md). It waits until every shard has answered for an
// input record, merges the answers into the verdict one whole index gives
// (message/shard_answer.h, merge_answers), and publishes the tagged output (or dead letter),
// with the decision on kafka.documents_topic, in one transaction with the answers' offsets.
// Never a verdict from fewer than store.shards answers.
//
// What it keeps (the ordered thread's, but for what readiness() reads):
// - the answers of records not yet answered by every shard (pending_); the offsets it commits
//   stay below the first of them (bound_commits), so a restart reads them again;
// - its reader of the documents topic (daemon/documents_reader.h): the pages decided (by this
//   stage, and by every other through the topic, on disk: daemon/merge_state.h), and per input
//   partition the last record decided (an answer for a record at or below it was merged before
//   and is passed over). The topic is read to its end at start (from where the state had read
//   it) and again before the first record of a partition newly assigned here (which another
//   stage may have been merging), and followed between batches.
#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <limits>
#include <map>

#include "common/log.h"
#include "common/mutex.h"
#include "daemon/clients.h"
#include "daemon/documents_reader.h"
#include "daemon/fingerprinted_stage.h"
#include "daemon/merge_state.h"
#include "daemon/role.h"
#include "kafka/admin.h"

namespace neardup::daemon {
namespace {

// A record still waiting for a shard's answer after this long makes the stage not ready, with
// the shards it waits for named (and a warning logged).
constexpr int kWaitAlertMillis = 10000;
// Records waiting for other shards' answers whose page (shard 0's answer) is held in memory, at
// most; the pages of the others wait on disk (MergeState::keep).
constexpr std::size_t kHeldInMemory = 512;

class MergeStage final : public Stage {
 public:
  explicit MergeStage(StageContext context)
      : startup_config_(std::move(context.startup)),
        metrics_(context.metrics),
        log_(logger("daemon")),
        shards_(startup_.store.shards) {}

  Role role() const override { return Role::kMerge; }
  std::vector<std::string> required_topics() const override {
    const KafkaConfig& k = startup_.kafka;
    return {k.candidates_topic, k.documents_topic, k.output_topic, k.dead_letter_topic};
  }
  // The documents topic must be compacted (it holds every decided page: only the latest record
  // of an id is needed), and the candidates topic must follow the fingerprint topic's partitions.
  std::expected<void, std::string> check_cluster(RdKafka::Handle& handle) const override {
    const KafkaConfig& k = startup_.kafka;
    auto policy =
        kafka::topic_configs(handle, {k.documents_topic}, "cleanup.policy", kMetadataMillis);
    if (!policy) return std::unexpected(policy.error());
    if (auto it = policy->find(k.documents_topic);
        it != policy->end() && it->second.find("compact") == std::string::npos) {
      return std::unexpected("kafka.documents_topic " + k.documents_topic +
                             " has cleanup.policy=" + it->second +
                             ": it must be compacted, or the decisions older than its retention "
                             "are lost to a merge stage that starts (kafka-configs.sh --alter "
                             "--add-config cleanup.policy=compact)");
    }
    return check_partitions_follow(handle, {"kafka.fingerprint_topic", k.fingerprint_topic},
                                   {"kafka.candidates_topic", k.candidates_topic});
  }
  // Merge stages share the candidates partitions: a partition's records need only each other
  // and the documents topic.
  bool owns_every_partition() const override { return false; }

  // The documents topic, read to its end before any record (daemon/documents_reader.h).
  std::expected<void, std::string> attach(RdKafka::KafkaConsumer&) override {
    auto reader = DocumentsReader::open(startup_, log_);
    if (!reader) return std::unexpected(reader.error());
    documents_ = std::move(*reader);
    return {};
  }

  void prepare(Work& work, const std::shared_ptr<const Config>& config,
               const std::string& scheme) override {
    auto answer = decode_shard_answer(work.input.value);
    if (answer && answer->shards != shards_) {
      answer = std::unexpected("an answer of shard " + std::to_string(answer->shard) + " of " +
                               std::to_string(answer->shards) + ", but store.shards is " +
                               std::to_string(shards_));
    }
    if (!answer) {
      work.processed = ProcessedRecord{.config = config, .scheme = scheme};
      work.processed.page = std::unexpected(RecordError{"bad_shard_answer", answer.error()});
      return;
    }
    if (answer->shard == 0) {
      // The page itself: read as the index role reads a fingerprinted record, standing for the
      // crawler's record it carries (or, when it cannot be read, for its own bytes).
      if (answer->fingerprinted.empty()) {
        work.processed = ProcessedRecord{.config = config, .scheme = scheme};
        work.processed.page = std::unexpected(RecordError{
            "answer_too_large", "shard 0's answer came without the record: larger than " +
                                    startup_.kafka.candidates_topic + " accepts"});
      } else {
        read_fingerprinted(work, answer->fingerprinted, answer->source_partition, config, scheme);
      }
      if (!work.carried) {
        work.carried = ConsumedRecord{.partition = {answer->source_topic, answer->source_partition},
                                      .offset = answer->source_offset,
                                      .key = work.input.key,
                                      .headers = work.input.headers,
                                      .value = std::move(answer->fingerprinted)};
      }
      answer->fingerprinted.clear();
      answer->fingerprinted.shrink_to_fit();
    }
    work.answer = std::move(*answer);
  }

  std::expected<std::vector<Verdict>, std::string> decide(const std::vector<WorkPtr>& batch,
                                                          const Config&,
                                                          const std::atomic<bool>&) override {
    if (auto caught = catch_up_with_fresh(); !caught) return std::unexpected(caught.error());
    std::vector<Verdict> verdicts(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const WorkPtr& work = batch[i];
      if (!work->answer) {
        verdicts[i].status = Verdict::Status::kDeadLetter;
        verdicts[i].reason = "bad_shard_answer";
        continue;
      }
      const ShardAnswer& answer = *work->answer;
      const SourcePosition source{answer.source_topic, answer.source_partition,
                                  answer.source_offset};
      const PartitionId input{source.topic, source.partition};
      if (auto through = documents_->decided_through().find(input);
          through != documents_->decided_through().end() && source.offset <= through->second) {
        continue;  // merged before: its output is published
      }
      auto [set, added] = pending_.try_emplace(source);
      Pending& pending = set->second;
      if (added) {
        pending.since = Clock::now();
        pending.partition = work->input.partition;
      }
      pending.answers[answer.shard] = answer.verdict;
      pending.first = std::min(pending.first, work->input.offset);
      if (pending.answers.size() < shards_) {
        if (answer.shard == 0) {
          if (auto held = hold(pending, work); !held) return std::unexpected(held.error());
        }
        continue;
      }
      // Shard 0's own answer completing the set carries itself: a pointer that does not own
      // (aliasing an empty one), or the work would keep itself alive.
      if (answer.shard == 0) {
        release(pending);
        work->carrier = std::shared_ptr<const Work>(std::shared_ptr<const Work>(), work.get());
      } else {
        auto carrier = carrier_of(pending);
        if (!carrier) return std::unexpected(carrier.error());
        work->carrier = std::move(*carrier);
      }
      verdicts[i] = merged(pending, *work->carrier, source);
      // A decided page that could not be looked up: the verdict may be wrong, so the batch is
      // not published (the stage stops; its records are read again).
      if (!documents_->state().failure().empty())
        return std::unexpected("merge state: " + documents_->state().failure());
      documents_->decided_through()[input] = source.offset;
      pending_.erase(set);
    }
    note_waiting();
    return verdicts;
  }

  // Follows the documents topic; notes what is still waiting, for readiness().
  void between_batches() override {
    documents_->follow();
    note_waiting();
  }

  Outgoing render(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                  bool shrunk) const override {
    if (!work.answer) return render_outgoing(work, verdict, topics, shrunk);  // not an answer
    if (!work.carrier) return Outgoing{};  // waiting for other shards', or merged before
    return render_outgoing(*work.carrier, verdict, topics, shrunk);
  }

  // With the output of a merged record: the page's decision and the partition's mark.
  std::vector<Outgoing> companions(const Work& work, const Verdict& verdict) const override {
    if (!work.answer || !work.carrier) return {};
    const ShardAnswer& answer = *work.answer;
    const SourcePosition source{answer.source_topic, answer.source_partition, answer.source_offset};
    std::vector<Outgoing> out;
    auto add = [&](std::pair<std::string, std::string> record) {
      Outgoing& o = out.emplace_back();
      o.topic = startup_.kafka.documents_topic;
      o.label = "decided";
      o.own_key = std::move(record.first);
      o.value = std::move(record.second);
    };
    const auto& page = work.carrier->processed.page;
    if (page && !verdict.replayed &&
        (verdict.status == Verdict::Status::kUnique ||
         verdict.status == Verdict::Status::kDuplicate)) {
      add(encode_decided(page->id, source, verdict));
    }
    add(encode_mark(source));
    return out;
  }

  void bound_commits(std::map<PartitionId, std::int64_t>& next) const override {
    for (const auto& [source, set] : pending_) {
      auto it = next.find(set.partition);
      if (it != next.end()) it->second = std::min(it->second, set.first);
    }
  }

  // The consumer thread: partitions (newly, or again) assigned here. Another stage may have
  // merged them meanwhile: before their first record this one reads the documents topic to its
  // end, and forgets the answers it kept of them (the consumer reads them again from the
  // committed offset, which lies below every one).
  void assigned(const std::vector<PartitionId>& partitions) override EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    fresh_.insert(partitions.begin(), partitions.end());
  }

  std::expected<void, std::string> readiness() const override EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    if (!waiting_.empty()) return std::unexpected(waiting_);
    return {};
  }

 private:
  // The answers of a record not yet answered by every shard.
  struct Pending {
    std::map<std::uint32_t, Verdict> answers;  // by shard
    PartitionId partition;                     // the candidates partition they were read from
    std::int64_t first = std::numeric_limits<std::int64_t>::max();  // their lowest offset there
    // Shard 0's answer, which carries the page: in memory (at most kHeldInMemory of them), or
    // else kept in the state's waiting environment under `kept` with what prepare() needs.
    WorkPtr carrier;
    std::string kept;
    std::shared_ptr<const Config> config;
    std::string scheme;
    Clock::time_point since;
  };

  // Holds shard 0's answer until the other shards' come: in memory while fewer than
  // kHeldInMemory are, else on disk (the consumed record, read again by prepare() later).
  std::expected<void, std::string> hold(Pending& pending, const WorkPtr& work) {
    release(pending);
    if (held_in_memory_ < kHeldInMemory) {
      pending.carrier = work;
      held_in_memory_ += 1;
      return {};
    }
    pending.kept = source_position(work->input);
    if (auto kept = documents_->state().keep(pending.kept, encode_consumed(work->input)); !kept) {
      return std::unexpected(kept.error());
    }
    pending.config = work->processed.config;
    pending.scheme = work->processed.scheme;
    return {};
  }

  // Forgets what a record holds of shard 0's answer.
  void release(Pending& pending) {
    if (pending.carrier) {
      pending.carrier.reset();
      held_in_memory_ -= 1;
    }
    if (!pending.kept.empty()) {
      if (auto taken = documents_->state().take(pending.kept); !taken)
        log_->warn("{}", taken.error());
      pending.kept.clear();
    }
  }

  // Shard 0's answer to a record whose answers are all there, taken from where it was held.
  std::expected<WorkPtr, std::string> carrier_of(Pending& pending) {
    if (pending.carrier) {
      WorkPtr carrier = pending.carrier;
      release(pending);
      return carrier;
    }
    auto bytes = documents_->state().take(pending.kept);
    pending.kept.clear();
    if (!bytes) return std::unexpected(bytes.error());
    auto record = decode_consumed(*bytes);
    if (!record)
      return std::unexpected("merge state: a record kept while waiting: " + record.error());
    auto carrier = std::make_shared<Work>(std::move(*record));
    prepare(*carrier, pending.config, pending.scheme);
    return carrier;
  }

  // The verdict of a record every shard has answered; `carrier` is shard 0's answer.
  Verdict merged(const Pending& set, const Work& carrier, const SourcePosition& source) {
    const ProcessedRecord& processed = carrier.processed;
    if (!processed.page) {  // a dead letter, whatever the shards said
      return Verdict{.status = Verdict::Status::kDeadLetter, .reason = processed.page.error().code};
    }
    std::vector<ShardAnswer> answers;
    answers.reserve(set.answers.size());
    for (const auto& [shard, verdict] : set.answers) {
      answers.push_back(ShardAnswer{.shard = shard, .shards = shards_, .verdict = verdict});
    }
    Verdict verdict = merge_answers(processed.page->id, answers, documents_->state());
    documents_->state().decide(processed.page->id, verdict, source);
    return verdict;
  }

  // After an assignment (assigned()): the documents topic read to its end, and the answers kept
  // of the partitions assigned forgotten, before any of their records is merged.
  std::expected<void, std::string> catch_up_with_fresh() EXCLUDES(mutex_) {
    std::set<PartitionId> fresh;
    {
      MutexLock lock(mutex_);
      fresh.swap(fresh_);
    }
    if (fresh.empty()) return {};
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (!fresh.contains(it->second.partition)) {
        ++it;
        continue;
      }
      release(it->second);
      it = pending_.erase(it);
    }
    return documents_->catch_up();
  }

  // Why the stage is not ready: the oldest record still waiting for a shard past
  // kWaitAlertMillis, with the shards it waits for.
  void note_waiting() EXCLUDES(mutex_) {
    std::string waiting;
    const auto now = Clock::now();
    std::vector<double> oldest(shards_, 0.0);  // per shard, seconds
    std::vector<double> records(shards_, 0.0);  // per shard, records waiting for it
    for (const auto& [source, set] : pending_) {
      const double age = std::chrono::duration<double>(now - set.since).count();
      for (std::uint32_t j = 0; j < shards_; ++j) {
        if (set.answers.contains(j)) continue;
        oldest[j] = std::max(oldest[j], age);
        records[j] += 1;
      }
      if (!waiting.empty() || age * 1000 < kWaitAlertMillis) continue;
      std::string missing;
      for (std::uint32_t j = 0; j < shards_; ++j) {
        if (!set.answers.contains(j)) missing += (missing.empty() ? "" : ", ") + std::to_string(j);
      }
      waiting = "waiting " + std::to_string(static_cast<std::int64_t>(age)) +
                " s for the answers of shard " + missing + " for " + source.topic + "/" +
                std::to_string(source.partition) + "/" + std::to_string(source.offset) + " (" +
                std::to_string(pending_.size()) + " records waiting, the pages of " +
                std::to_string(documents_->state().kept()) +
                " of them on disk): is that shard running, and keeping up?";
    }
    if (metrics_) {
      for (std::uint32_t j = 0; j < shards_; ++j) {
        metrics_->merge_wait.labels({std::to_string(j)}).set(oldest[j]);
        metrics_->merge_waiting.labels({std::to_string(j)}).set(records[j]);
      }
      metrics_->merge_pages_on_disk.set(static_cast<double>(documents_->state().kept()));
    }
    MutexLock lock(mutex_);
    if (!waiting.empty() && waiting_.empty()) log_->warn("{}", waiting);
    if (waiting.empty() && !waiting_.empty()) log_->info("every shard answers again");
    waiting_ = std::move(waiting);
  }

  const std::shared_ptr<const Config> startup_config_;
  const Config& startup_ = *startup_config_;
  ops::DaemonMetrics* const metrics_;  // may be null
  const std::shared_ptr<spdlog::logger> log_;
  const std::uint32_t shards_;

  // What was read of the documents topic, how far, and the last record decided per input
  // partition.
  std::unique_ptr<DocumentsReader> documents_;
  std::map<SourcePosition, Pending> pending_;
  std::size_t held_in_memory_ = 0;  // records of pending_ holding shard 0's answer in memory

  mutable Mutex mutex_;
  std::set<PartitionId> fresh_ GUARDED_BY(mutex_);  // assigned since the last catch-up
  std::string waiting_ GUARDED_BY(mutex_);
};

}  // namespace

std::unique_ptr<Stage> make_merge_stage(StageContext context) {
  return std::make_unique<MergeStage>(std::move(context));
}

}  // namespace neardup::daemon
