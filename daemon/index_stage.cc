#include "daemon/index_stage.h"

#include <chrono>
#include <map>
#include <thread>

#include "message/processing.h"

namespace neardup::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

}  // namespace

IndexStage::IndexStage(StageContext& context)
    : startup_config_(context.startup),
      metrics_(context.metrics),
      log_(logger("daemon")),
      index_(std::move(context.index)) {}

void IndexStage::trim_below(std::string partition, std::int64_t offset) {
  MutexLock lock(trims_mutex_);
  trims_.emplace_back(std::move(partition), offset);
}

void IndexStage::between_batches() {
  std::vector<std::pair<std::string, std::int64_t>> committed;
  {
    MutexLock lock(trims_mutex_);
    committed.swap(trims_);
  }
  for (const auto& [partition, offset] : committed) {
    if (auto trimmed = index_->trim_pending(partition, offset); !trimmed) {
      log_->warn("trim_pending partition={} error={}", partition, trimmed.error().message);
    }
  }
}

Outgoing IndexStage::render(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                            bool shrunk) const {
  return render_outgoing(work, verdict, topics, shrunk);
}

std::expected<void, std::string> IndexStage::readiness() const {
  if (!index_) return std::unexpected("the index is not open");
  MutexLock lock(blocked_mutex_);
  if (!store_blocked_.empty()) {
    return std::unexpected("store out of space, input paused: " + store_blocked_);
  }
  return {};
}

std::expected<std::vector<Verdict>, std::string> IndexStage::decide(
    const std::vector<WorkPtr>& batch, const Config&, const std::atomic<bool>& stop) {
  std::vector<IndexItem> items;
  std::vector<const ProcessedRecord*> records;
  items.reserve(batch.size());
  records.reserve(batch.size());
  for (const WorkPtr& work : batch) {
    records.push_back(&work->processed);
    const ConsumedRecord& source = work->source();
    items.push_back(index_item(
        work->processed, SourceOffset{partition_key(source.partition), source.offset, work->digest},
        source.timestamp_ms));
  }
  if (record_positions_) add_positions(batch, items, records);
  const auto apply_start = Clock::now();
  auto verdicts = apply(items, records, stop);
  if (metrics_) {
    metrics_->stage(ops::Stage::kIndex)
        .observe(std::chrono::duration<double>(Clock::now() - apply_start).count());
  }
  if (!verdicts) return std::unexpected("index: " + verdicts.error().message);
  verdicts->resize(batch.size());  // the positions' own verdicts are of no record
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Verdict& verdict = (*verdicts)[i];
    if (verdict.replayed) replayed_ += 1;
    if (metrics_ && items[i].page && !verdict.replayed) {
      metrics_->probe_candidates.observe(verdict.candidates);
      if (verdict.capped_bands > 0) metrics_->probe_capped.inc();
    }
    if (verdict.offset_conflict) {
      const ConsumedRecord& source = batch[i]->source();
      log_->warn(
          "source offset conflict partition={} offset={} read_from={}/{}: a record applied "
          "before names the same offset; this one was decided afresh",
          partition_key(source.partition), source.offset, partition_key(batch[i]->input.partition),
          batch[i]->input.offset);
      if (metrics_) metrics_->source_conflicts.inc();
    }
  }
  return std::move(*verdicts);
}

// One item per consumed partition of the batch, after its last record, keyed by that record's
// own offset: a skipped item the store records like any other (and trims once committed), so
// that the partition's applied offset is where the store stands in the consumed topic. A
// partition whose last record is keyed by its own offset already (a dead letter) needs none.
void IndexStage::add_positions(const std::vector<WorkPtr>& batch, std::vector<IndexItem>& items,
                               std::vector<const ProcessedRecord*>& records) const {
  static const ProcessedRecord kPosition;
  std::map<PartitionId, const Work*> last;
  for (const WorkPtr& work : batch) last[work->input.partition] = work.get();
  for (const auto& [partition, work] : last) {
    if (!work->carried) continue;
    items.push_back(
        IndexItem{.decided = Verdict{.status = Verdict::Status::kSkipped, .reason = "position"},
                  .source = SourceOffset{partition_key(partition), work->input.offset, 0}});
    records.push_back(&kPosition);
  }
}

StoreResult<std::vector<Verdict>> IndexStage::apply(
    const std::vector<IndexItem>& items, const std::vector<const ProcessedRecord*>& records,
    const std::atomic<bool>& stop) {
  auto verdicts = learning_.apply(*index_, items, records);
  if (verdicts || !out_of_space(verdicts.error())) return verdicts;
  {
    MutexLock lock(blocked_mutex_);
    store_blocked_ = verdicts.error().message;
  }
  if (metrics_) metrics_->store_blocked.set(1);
  Clock::time_point last_log;
  while (!verdicts && out_of_space(verdicts.error()) && !stop) {
    if (Clock::now() - last_log >= std::chrono::seconds(30)) {
      last_log = Clock::now();
      log_->error("store out of space, input paused, retrying every {} ms: {}", kStoreRetryMillis,
                  verdicts.error().message);
    }
    for (int waited = 0; waited < kStoreRetryMillis && !stop; waited += 100) {
      std::this_thread::sleep_for(milliseconds(100));
    }
    if (!stop) verdicts = learning_.apply(*index_, items, records);
  }
  {
    MutexLock lock(blocked_mutex_);
    store_blocked_.clear();
  }
  if (metrics_) metrics_->store_blocked.set(0);
  if (verdicts) log_->info("store writable again: batch of {} applied, consuming", items.size());
  return verdicts;
}

}  // namespace neardup::daemon
