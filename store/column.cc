#include "store/column.h"

#include <algorithm>
#include <bit>
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
      bucket_bits_(bucket_bits),
      delta_(std::min(prefix_bits, bucket_bits), capacity) {}

lmdb::Result<> Column::load(const lmdb::Txn& txn, lmdb::Dbi meta, bool create,
                            std::uint64_t watermark, bool read_only) {
  merge_.reset();
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
  // The run a merge was writing when the process stopped: never part of the state.
  if (!read_only) {
    if (auto partial = lmdb::Dbi::open(txn, run_name(state->next_run), 0)) {
      if (auto dropped = partial->drop(txn, true); !dropped) return dropped;
    } else if (partial.error().code != MDB_NOTFOUND) {
      return std::unexpected(partial.error());
    }
  }
  state_ = std::move(*state);
  runs_ = std::move(runs);
  directories_generation_ = kStale;
  return {};
}

std::size_t Column::memory() const {
  std::size_t bytes = delta_.memory();
  if (merge_) bytes += merge_->frozen->memory() + merge_->progress.carry.capacity() * sizeof(Entry);
  return bytes;
}

lmdb::Result<> Column::open_directories(const lmdb::Txn& txn, std::uint64_t generation) {
  if (directories_generation_ == generation && directories_.size() == runs_.size()) return {};
  directories_.clear();
  directories_generation_ = kStale;
  if (reopen_runs_) {
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      auto dbi = lmdb::Dbi::open(txn, run_name(state_.runs[i].id), 0);
      if (!dbi) return std::unexpected(dbi.error());
      runs_[i] = *dbi;
    }
    reopen_runs_ = false;
  }
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
  if (merge_) merge_->frozen->prefetch(key);
  const std::uint64_t lo = range_start(key), hi = range_end(key);
  for (std::size_t i = 0; i < directories_.size(); ++i) {
    RunProbe(directories_[i], lo, hi, gap(i)).prefetch();
  }
}

std::uint64_t Column::merge_remaining() const {
  if (!merge_) return 0;
  return merge_->total - merge_->progress.written - merge_->progress.carry.size();
}

void Column::begin_merge(std::uint64_t watermark) {
  Merge m;
  m.frozen = std::make_unique<Delta>(std::move(delta_));
  m.total = m.frozen->size();
  m.keep = state_.runs.size();
  while (m.keep > 0 && state_.runs[m.keep - 1].entries <= kMergeRatio * m.total) {
    m.total += state_.runs[--m.keep].entries;
  }
  m.watermark = watermark;
  m.output = state_.next_run;
  m.progress.input_at.assign(state_.runs.size() - m.keep, {0, 0});
  merge_ = std::move(m);
  bucket_loaded_ = ~std::size_t{0};
  delta_ = Delta(std::min(prefix_bits_, bucket_bits_), capacity_);
}

bool Column::frozen_entry(std::pair<std::size_t, std::size_t>& at, Entry& e) {
  const Delta& frozen = *merge_->frozen;
  while (at.first < frozen.buckets()) {
    if (bucket_loaded_ != at.first) {
      frozen.sorted_bucket(at.first, bucket_);
      if (format_ == RunFormat::kNarrow) {
        for (Entry& entry : bucket_) entry.key = stored_key(format_, entry.key);
        std::sort(bucket_.begin(), bucket_.end());
      }
      bucket_loaded_ = at.first;
    }
    if (at.second < bucket_.size()) {
      e = bucket_[at.second];
      return true;
    }
    ++at.first;
    at.second = 0;
  }
  return false;
}

Entry Column::input_entry(std::size_t input, std::size_t record, std::size_t entry) const {
  const RunDirectory& dir = directories_[merge_->keep + input];
  const char* data = dir.records[record];
  return Entry{record_key_at(format_, data, entry),
               record_doc_at(format_, data, dir.sizes[record], entry)};
}

lmdb::Result<Column::Slice> Column::merge_slice(const lmdb::Txn& txn, lmdb::Dbi meta,
                                                std::uint64_t budget, const Dropped& dropped) {
  const Merge& m = *merge_;
  Slice s = m.progress;
  const std::size_t per_record = layout_of(format_).entries_per_record();
  auto out = lmdb::Dbi::open(txn, run_name(m.output), MDB_CREATE);
  if (!out) return std::unexpected(out.error());
  RunWriter writer(txn, *out, format_);

  // The sources' heads: the frozen entries (source 0) and each input run. An input record is
  // checked against its checksum when the merge reaches its first entry; a damaged one ends
  // the source, and the merge fails below before anything of it is committed.
  const std::size_t sources = 1 + s.input_at.size();
  std::optional<lmdb::LmdbError> damage;
  auto head = [&](std::size_t i, Entry& e) {
    if (i == 0) return frozen_entry(s.fresh_at, e);
    const auto [record, entry] = s.input_at[i - 1];
    const RunDirectory& dir = directories_[m.keep + i - 1];
    if (record >= dir.records.size()) return false;
    if (entry == 0 && !dir.intact(record)) {
      damage = damaged_record(run_name(state_.runs[m.keep + i - 1].id), dir.last_keys[record]);
      return false;
    }
    e = input_entry(i - 1, record, entry);
    return true;
  };
  auto advance = [&](std::size_t i) {
    if (i == 0) {
      ++s.fresh_at.second;
      return;
    }
    auto& [record, entry] = s.input_at[i - 1];
    if (++entry == directories_[m.keep + i - 1].sizes[record]) {
      ++record;
      entry = 0;
    }
  };
  budget = std::max<std::uint64_t>(budget, per_record);
  // Each source's current entry (valid[i] false once it is exhausted), refreshed only for the
  // source that moved; the smallest source then runs on while it stays below the others.
  std::vector<Entry> heads(sources);
  std::vector<char> valid(sources);
  for (std::size_t i = 0; i < sources; ++i) valid[i] = head(i, heads[i]);
  std::uint64_t produced = 0;
  bool exhausted = false;
  while (produced < budget) {
    std::size_t best = sources;
    for (std::size_t i = 0; i < sources; ++i) {
      if (valid[i] && (best == sources || heads[i] < heads[best])) best = i;
    }
    if (best == sources) {
      exhausted = true;
      break;
    }
    const Entry* bound = nullptr;
    for (std::size_t i = 0; i < sources; ++i) {
      if (i != best && valid[i] && (bound == nullptr || heads[i] < *bound)) bound = &heads[i];
    }
    do {
      ++produced;
      if (dropped.contains(heads[best].doc)) {
        advance(best);
        valid[best] = head(best, heads[best]);
        continue;
      }
      s.carry.push_back(heads[best]);
      if (s.carry.size() == per_record) {
        if (auto r = writer.write_record(s.carry); !r) return std::unexpected(r.error());
        s.written += s.carry.size();
        s.carry.clear();
      }
      advance(best);
      valid[best] = head(best, heads[best]);
    } while (valid[best] && produced < budget && (bound == nullptr || heads[best] < *bound));
  }
  if (damage) return std::unexpected(*damage);
  if (!exhausted) {
    exhausted = std::none_of(valid.begin(), valid.end(), [](char v) { return v != 0; });
  }
  if (!exhausted) return s;

  if (!s.carry.empty()) {
    if (auto r = writer.write_record(s.carry); !r) return std::unexpected(r.error());
    s.written += s.carry.size();
    s.carry.clear();
  }
  for (std::size_t i = m.keep; i < state_.runs.size(); ++i) {
    // Reopened by name: an aborted attempt's mdb_drop closed the handle.
    auto input = lmdb::Dbi::open(txn, run_name(state_.runs[i].id), 0);
    if (!input) return std::unexpected(input.error());
    if (auto r = input->drop(txn, true); !r) return std::unexpected(r.error());
  }
  s.done = true;
  s.state = state_;
  s.state.runs.resize(m.keep);
  s.state.runs.push_back({m.output, s.written});
  s.state.watermark = m.watermark;
  s.state.next_run = m.output + 1;
  s.runs.assign(runs_.begin(), runs_.begin() + static_cast<std::ptrdiff_t>(m.keep));
  s.runs.push_back(*out);
  if (auto r = meta.put(txn, meta_key(), s.state.encode()); !r) return std::unexpected(r.error());
  return s;
}

lmdb::Result<> Column::drop(const lmdb::Txn& txn, lmdb::Dbi meta) {
  std::vector<std::uint32_t> ids;
  for (const auto& run : state_.runs) ids.push_back(run.id);
  ids.push_back(state_.next_run);  // a running merge's output, if it has one yet
  for (std::uint32_t id : ids) {
    auto run = lmdb::Dbi::open(txn, run_name(id), 0);
    if (!run) {
      if (run.error().code == MDB_NOTFOUND) continue;
      return std::unexpected(run.error());
    }
    if (auto dropped = run->drop(txn, true); !dropped) return dropped;
  }
  return meta.del(txn, meta_key());
}

void Column::discard(const Slice& slice) {
  if (!slice.done) return;
  reopen_runs_ = true;
  directories_generation_ = kStale;
}

std::unique_ptr<Delta> Column::adopt(Slice slice) {
  if (!slice.done) {
    merge_->progress = std::move(slice);
    return nullptr;
  }
  state_ = std::move(slice.state);
  runs_ = std::move(slice.runs);
  directories_generation_ = kStale;
  std::unique_ptr<Delta> frozen = std::move(merge_->frozen);
  merge_.reset();
  return frozen;
}

}  // namespace neardup
