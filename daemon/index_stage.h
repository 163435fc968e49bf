// What the roles with a store share (role_single.cc, role_index.cc): each batch applied to the
// index in one write transaction, with the wait for space when the store is full; the verdicts
// it stores against source offsets trimmed once those are committed for good; the outputs and
// dead letters rendered from the verdicts; and the store for the index's questions.
//
// Out of space (store/status.h out_of_space: a full file system or store.max_map_size): the
// failed batch is applied again every kStoreRetryMillis; meanwhile it holds its records in
// flight, so backpressure pauses the input, readiness() names the cause, and nothing is lost.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "daemon/role.h"
#include "message/learning.h"

namespace neardup::daemon {

inline constexpr int kStoreRetryMillis = 2000;

class IndexStage : public Stage {
 public:
  // Takes the context's index.
  explicit IndexStage(StageContext& context);

  bool owns_every_partition() const override { return true; }
  std::expected<std::vector<Verdict>, std::string> decide(const std::vector<WorkPtr>& batch,
                                                          const Config& config,
                                                          const std::atomic<bool>& stop) override;
  void between_batches() override EXCLUDES(trims_mutex_);
  Outgoing render(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                  bool shrunk) const override;
  std::expected<void, std::string> readiness() const override EXCLUDES(blocked_mutex_);
  Index* index() override { return index_.get(); }
  std::uint64_t replayed() const override { return replayed_; }

 protected:
  // The stored verdicts of `partition` below `offset` can go (any thread): the ordered thread
  // trims them between batches.
  void trim_below(std::string partition, std::int64_t offset) EXCLUDES(trims_mutex_);

  const std::shared_ptr<const Config> startup_config_;
  const Config& startup_ = *startup_config_;
  ops::DaemonMetrics* const metrics_;
  const std::shared_ptr<spdlog::logger> log_;
  // Whether each batch also records, in its transaction, how far the store has applied each
  // consumed partition (position_key(); Index::applied_offset then reads it): for a store whose
  // items are keyed by another topic's offsets (a shard's, by the crawler's).
  bool record_positions_ = false;

 private:
  // Index::apply, waiting out a store without space until `stop`.
  StoreResult<std::vector<Verdict>> apply(const std::vector<IndexItem>& items,
                                          const std::vector<const ProcessedRecord*>& records,
                                          const std::atomic<bool>& stop) EXCLUDES(blocked_mutex_);

  // Appends to a batch's items (and records) the positions record_positions_ asks for.
  void add_positions(const std::vector<WorkPtr>& batch, std::vector<IndexItem>& items,
                     std::vector<const ProcessedRecord*>& records) const;

  const std::unique_ptr<Index> index_;
  Learning learning_;  // the ordered thread's
  std::atomic<std::uint64_t> replayed_{0};
  Mutex trims_mutex_;
  std::vector<std::pair<std::string, std::int64_t>> trims_ GUARDED_BY(trims_mutex_);
  // Set while the store is out of space (the ordered thread; readiness() reads it): why.
  mutable Mutex blocked_mutex_;
  std::string store_blocked_ GUARDED_BY(blocked_mutex_);
};

}  // namespace neardup::daemon
