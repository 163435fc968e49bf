#include "store/column.h"

#include <algorithm>
#include <cerrno>
#include <cmath>

namespace neardup {
namespace {

std::uint64_t low_mask(std::uint32_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

}  // namespace

Column::Column(std::string name, std::uint32_t prefix_bits, RunFormat format,
               std::uint32_t bucket_bits, std::uint64_t capacity)
    : name_(std::move(name)),
      prefix_bits_(prefix_bits),
      format_(format),
      capacity_(capacity),
      delta_(std::min(prefix_bits, bucket_bits), capacity) {}

lmdb::Result<> Column::load(const lmdb::Txn& txn, lmdb::Dbi meta, bool create,
                            std::uint64_t watermark) {
  auto stored = meta.get(txn, meta_key());
  if (!stored) {
    if (stored.error().code != MDB_NOTFOUND || !create) return std::unexpected(stored.error());
    state_ = records::ColumnState{.watermark = watermark};
    runs_.clear();
    return meta.put(txn, meta_key(), state_.encode());
  }
  auto state = records::ColumnState::decode(*stored);
  if (!state) return std::unexpected(lmdb::LmdbError{EINVAL, "meta " + meta_key() + " is corrupt"});
  std::vector<lmdb::Dbi> runs;
  for (const auto& run : state->runs) {
    auto dbi = lmdb::Dbi::open(txn, run_name(run.id), 0);
    if (!dbi) return std::unexpected(dbi.error());
    runs.push_back(*dbi);
  }
  state_ = std::move(*state);
  runs_ = std::move(runs);
  directories_generation_ = kStale;
  return {};
}

lmdb::Result<> Column::open_directories(const lmdb::Txn& txn, std::uint64_t generation) {
  if (directories_generation_ == generation && directories_.size() == runs_.size()) return {};
  directories_.clear();
  directories_generation_ = kStale;
  for (lmdb::Dbi run : runs_) {
    auto dir = RunDirectory::load(txn, run, format_);
    if (!dir) return std::unexpected(dir.error());
    directories_.push_back(std::move(*dir));
  }
  directories_generation_ = generation;
  return {};
}

std::uint64_t Column::range_start(std::uint64_t key) const {
  return key & ~low_mask(64 - prefix_bits_);
}
std::uint64_t Column::range_end(std::uint64_t key) const {
  return range_start(key) | low_mask(64 - prefix_bits_);
}

double Column::gap(std::size_t i) const {
  return std::ldexp(1.0, 64) /
         static_cast<double>(std::max<std::uint64_t>(state_.runs[i].entries, 1));
}

void Column::prefetch(std::uint64_t key) const {
  delta_.prefetch(key);
  const std::uint64_t lo = range_start(key), hi = range_end(key);
  for (std::size_t i = 0; i < directories_.size(); ++i) {
    RunProbe(directories_[i], lo, hi, gap(i)).prefetch();
  }
}

lmdb::Result<Column::Merged> Column::merge_into(const lmdb::Txn& txn, lmdb::Dbi meta,
                                                std::uint64_t watermark) {
  Merged merged;
  merged.entries = delta_.sorted();
  if (format_ == RunFormat::kNarrow) {
    for (Entry& e : merged.entries) e.key = stored_key(format_, e.key);
    std::sort(merged.entries.begin(), merged.entries.end());
  }
  std::uint64_t total = merged.entries.size();
  std::size_t keep = state_.runs.size();
  while (keep > 0 && state_.runs[keep - 1].entries <= kMergeRatio * total) {
    total += state_.runs[--keep].entries;
  }
  const records::ColumnState::Run run{state_.next_run, total};
  auto out = lmdb::Dbi::open(txn, run_name(run.id), MDB_CREATE);
  if (!out) return std::unexpected(out.error());
  std::vector<lmdb::Dbi> inputs;
  for (std::size_t i = keep; i < state_.runs.size(); ++i) {
    // Reopened by name: an aborted attempt's mdb_drop closed the handle.
    auto input = lmdb::Dbi::open(txn, run_name(state_.runs[i].id), 0);
    if (!input) return std::unexpected(input.error());
    inputs.push_back(*input);
  }
  if (auto r = merge_runs(txn, format_, merged.entries, inputs, *out); !r) {
    return std::unexpected(r.error());
  }
  for (lmdb::Dbi input : inputs) {
    if (auto r = input.drop(txn, true); !r) return std::unexpected(r.error());
  }
  merged.state = state_;
  merged.state.runs.resize(keep);
  merged.state.runs.push_back(run);
  merged.state.watermark = watermark;
  merged.state.next_run = state_.next_run + 1;
  merged.runs.assign(runs_.begin(), runs_.begin() + static_cast<std::ptrdiff_t>(keep));
  merged.runs.push_back(*out);
  if (auto r = meta.put(txn, meta_key(), merged.state.encode()); !r) {
    return std::unexpected(r.error());
  }
  return merged;
}

void Column::adopt(Merged merged) {
  state_ = std::move(merged.state);
  runs_ = std::move(merged.runs);
  delta_.clear();
  directories_generation_ = kStale;
}

}  // namespace neardup
