#include "store/column.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>

namespace neardup {
namespace {

std::uint64_t low_mask(std::uint32_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

// Records read ahead of the one being read when a run is read whole, in order (its filters at
// open, the union filter).
constexpr std::size_t kReadAheadRecords = 8;

// Asks the kernel for records [from, from + kReadAheadRecords) of a run that is about to be read
// whole (MADV_WILLNEED), every kReadAheadRecords records: large requests, even on a map opened
// with store.readahead false (MDB_NORDAHEAD advises it random, page by page).
void read_ahead(const RunDirectory& dir, std::size_t r) {
  if (r % kReadAheadRecords != 0) return;
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t to = std::min(dir.records.size(), r + 2 * kReadAheadRecords);
  for (std::size_t i = r + (r == 0 ? 0 : kReadAheadRecords); i < to; ++i) {
    const auto begin = reinterpret_cast<std::uintptr_t>(dir.records[i]) & ~(page - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(dir.records[i]) + dir.bytes[i];
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);  // advice only
  }
}

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
    filters_.clear();
    union_.reset();
    covered_.clear();
    build_.reset();
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
  filters_.clear();
  build_.reset();
  union_.reset();
  if (format_ == RunFormat::kNarrow && !read_only && runs_.size() >= 2) union_ = new_union();
  covered_.assign(runs_.size(), union_ != nullptr);
  if (format_ == RunFormat::kNarrow && !read_only) {
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      auto dir = RunDirectory::load(txn, runs_[i], format_);
      if (!dir) return std::unexpected(dir.error());
      filters_.push_back(filter_of(*dir, state_.runs[i].entries, union_.get()));
    }
  }
  return {};
}

std::unique_ptr<BandFilter> Column::filter_of(const RunDirectory& dir, std::uint64_t entries,
                                              BandFilter* also) {
  auto filter = std::make_unique<BandFilter>(entries);
  for (std::size_t r = 0; r < dir.records.size(); ++r) {
    read_ahead(dir, r);
    // Ascending keys: the filters fill front to back.
    dir.for_each_key(r, [&](std::size_t, std::uint64_t key) {
      filter->add(key);
      if (also != nullptr) also->add(key);
    });
  }
  return filter;
}

std::unique_ptr<BandFilter> Column::new_union() const {
  std::uint64_t entries = 0;
  for (const auto& run : state_.runs) entries += run.entries;
  return std::make_unique<BandFilter>(std::max(2 * entries, kUnionMinDeltas * capacity_));
}

void Column::build_union(std::uint64_t budget) {
  if (format_ != RunFormat::kNarrow || filters_.size() != runs_.size()) return;
  if (!build_) {
    if (merge_ || std::count(covered_.begin(), covered_.end(), 0) < 2) return;
    build_ = UnionBuild{.filter = new_union()};
    for (const auto& run : state_.runs) build_->pending.push_back(run.id);
  }
  while (budget > 0 && !build_->pending.empty()) {
    std::size_t i = 0;
    while (state_.runs[i].id != build_->pending.front()) ++i;  // pending runs are live runs
    const RunDirectory& dir = directories_[i];
    std::size_t& r = build_->record;
    for (; r < dir.records.size() && budget > 0; ++r) {
      read_ahead(dir, r);
      dir.for_each_key(r, [&](std::size_t, std::uint64_t key) { build_->filter->add(key); });
      budget -= std::min<std::uint64_t>(budget, dir.sizes[r]);
    }
    if (r == dir.records.size()) {
      build_->pending.erase(build_->pending.begin());
      r = 0;
    }
  }
  // Every run now is either read or a merge's made of read runs and frozen keys added as they
  // were merged; a merge still running would leave its frozen keys half added.
  if (build_->pending.empty() && !merge_) {
    union_ = std::move(build_->filter);
    covered_.assign(runs_.size(), 1);
    build_.reset();
  }
}

std::size_t Column::memory() const {
  std::size_t bytes = delta_memory();
  for (const auto& filter : filters_) bytes += filter ? filter->memory() : 0;
  if (union_) bytes += union_->memory();
  if (build_) bytes += build_->filter->memory();
  if (merge_ && merge_->filter) bytes += merge_->filter->memory();
  for (const RunDirectory& dir : directories_) bytes += dir.memory();
  return bytes;
}

std::size_t Column::delta_memory() const {
  std::size_t bytes = delta_.memory() + (spare_ ? spare_->memory() : 0);
  if (merge_) {
    bytes += merge_->frozen->memory() + merge_->progress.carry.capacity() * sizeof(Entry);
  }
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
  if (union_) union_->prefetch(stored_key(format_, key));
  for (std::size_t i = 0; i < directories_.size(); ++i) {
    // A covered run's filter is read only for a key the union lets through (rarely).
    if (covered(i)) continue;
    // A filtered run: its filter's line now, the run's lines once start() knows they are needed.
    if (i < filters_.size() && filters_[i]) {
      filters_[i]->prefetch(stored_key(format_, key));
    } else {
      RunProbe(directories_[i], lo, hi, gap(i)).prefetch();
    }
  }
}

bool Column::busy() const {
  return !state_.runs.empty() && delta_.size() * kBusyShare >= capacity_;
}

void Column::presize_if_busy(bool beside_busy) {
  if (state_.runs.empty() || merge_ || !(beside_busy || busy())) return;
  delta_.presize();
  spare_ = std::make_unique<Delta>(std::min(prefix_bits_, bucket_bits_), capacity_);
  spare_->presize();
}

std::uint64_t Column::merge_remaining() const {
  if (!merge_) return 0;
  return merge_->total - merge_->progress.written - merge_->progress.carry.size();
}

void Column::begin_merge(std::uint64_t watermark, bool reclaim) {
  const bool full = delta_.size() >= capacity_;
  Merge m;
  m.frozen = std::make_unique<Delta>(std::move(delta_));
  m.total = m.frozen->size();
  m.keep = state_.runs.size();
  const std::uint64_t limit = reclaim ? ~std::uint64_t{0} : max_run_entries();
  while (m.keep > 0) {
    const std::uint64_t next = state_.runs[m.keep - 1].entries;
    if (next > merge_ratio() * m.total || next > limit - m.total) break;
    m.total += next;
    --m.keep;
  }
  m.watermark = watermark;
  m.output = state_.next_run;
  m.progress.input_at.assign(state_.runs.size() - m.keep, {0, 0});
  if (filters_.size() == state_.runs.size() && format_ == RunFormat::kNarrow) {
    m.filter = std::make_unique<BandFilter>(m.total);
    m.covers = union_ != nullptr &&
               std::all_of(covered_.begin() + static_cast<std::ptrdiff_t>(m.keep), covered_.end(),
                           [](char c) { return c != 0; }) &&
               union_->size() + m.frozen->size() <= union_->capacity();
  }
  merge_ = std::move(m);
  bucket_loaded_ = ~std::size_t{0};
  // A full delta's column fills the next one too: it gets the kept table. A partial one (an
  // idle column's) gets a new, small table, and the kept one is freed.
  if (spare_ && full) {
    spare_->reset();
    delta_ = std::move(*spare_);
  } else {
    delta_ = Delta(std::min(prefix_bits_, bucket_bits_), capacity_);
  }
  spare_.reset();
}

bool Column::load_frozen_bucket(std::pair<std::size_t, std::size_t>& at) {
  const Delta& frozen = *merge_->frozen;
  for (; at.first < frozen.buckets(); ++at.first, at.second = 0) {
    if (bucket_loaded_ != at.first) {
      frozen.sorted_bucket(at.first, bucket_);
      if (format_ == RunFormat::kNarrow) {
        for (Entry& entry : bucket_) entry.key = stored_key(format_, entry.key);
        std::sort(bucket_.begin(), bucket_.end());
        // The union filters learn the merged delta's keys here, in ascending order (the
        // merge's inputs are in them already).
        for (const Entry& entry : bucket_) {
          if (merge_->covers) union_->add(entry.key);
          if (build_) build_->filter->add(entry.key);
        }
      }
      bucket_loaded_ = at.first;
    }
    if (at.second < bucket_.size()) return true;
  }
  return false;
}

lmdb::Result<Column::Slice> Column::merge_slice(const lmdb::Txn& txn, lmdb::Dbi meta,
                                                std::uint64_t budget, const Dropped& dropped) {
  const Merge& m = *merge_;
  Slice s = m.progress;
  const std::size_t per_record = entries_per_record(format_);
  std::size_t& record_entries = merge_->record_entries;
  // Entries carried before a record is written: the last record's count and an eighth more
  // (at first, the most a record can hold).
  auto carried = [&] {
    return record_entries == 0 ? per_record
                               : std::min(per_record, record_entries + record_entries / 8 + 1);
  };
  auto out = lmdb::Dbi::open(txn, run_name(m.output), MDB_CREATE);
  if (!out) return std::unexpected(out.error());
  RunWriter writer(txn, *out, format_);
  // Writes records of the new run from the front of the carried entries (each as many as fit)
  // while more than `keep` are left, and adds their keys to the new run's filter. An aborted
  // slice leaves keys in the filter that the run may never hold: harmless, a filter may say
  // "maybe".
  BandFilter* filter = merge_->filter.get();
  auto write = [&](std::vector<Entry>& carry, std::size_t keep) -> lmdb::Result<> {
    std::size_t at = 0;
    while (at < carry.size() && carry.size() - at > keep) {
      auto written = writer.write_record(std::span<const Entry>(carry).subspan(at));
      if (!written) return std::unexpected(written.error());
      if (filter != nullptr) {
        for (std::size_t i = at; i < at + *written; ++i) filter->add(carry[i].key);  // ascending
      }
      at += *written;
      record_entries = *written;
    }
    carry.erase(carry.begin(), carry.begin() + static_cast<std::ptrdiff_t>(at));
    s.written += at;
    return {};
  };

  // The sources: the frozen entries (source 0, a sorted bucket at a time) and each input run
  // (a decoded record at a time). Each source's chunk holds its current entries from `at` on.
  // An input record is checked against its checksum when the merge reaches its first entry; a
  // damaged one ends the source, and the merge fails below before anything of it is committed.
  struct Source {
    const Entry* at = nullptr;
    const Entry* end = nullptr;
    std::vector<Entry> decoded;  // an input run's current record
  };
  const std::size_t sources = 1 + s.input_at.size();
  std::vector<Source> heads(sources);
  std::optional<lmdb::LmdbError> damage;
  // Loads source i's chunk at its position in s; false when the source is exhausted.
  auto load = [&](std::size_t i) {
    Source& src = heads[i];
    src.at = src.end = nullptr;
    if (i == 0) {
      if (!load_frozen_bucket(s.fresh_at)) return false;
      src.at = bucket_.data() + s.fresh_at.second;
      src.end = bucket_.data() + bucket_.size();
      return true;
    }
    const auto [record, entry] = s.input_at[i - 1];
    const RunDirectory& dir = directories_[m.keep + i - 1];
    if (record >= dir.records.size()) return false;
    if (entry == 0 && !dir.intact(record)) {
      damage = damaged_record(run_name(state_.runs[m.keep + i - 1].id), dir.last_keys[record]);
      return false;
    }
    src.decoded.resize(dir.sizes[record]);
    dir.decode(record, src.decoded);
    src.at = src.decoded.data() + entry;
    src.end = src.decoded.data() + src.decoded.size();
    return true;
  };
  // Source i consumed `taken` entries of its chunk: moves its position, and on to its next
  // bucket or record when the chunk is used up.
  auto advance = [&](std::size_t i, std::size_t taken) {
    auto& position = i == 0 ? s.fresh_at : s.input_at[i - 1];
    position.second += taken;
    if (heads[i].at != heads[i].end) return true;
    if (i == 0) return load(0);
    ++position.first;
    position.second = 0;
    return load(i);
  };
  budget = std::max<std::uint64_t>(budget, per_record);
  std::vector<char> valid(sources);
  for (std::size_t i = 0; i < sources; ++i) valid[i] = load(i);
  std::uint64_t produced = 0;
  bool exhausted = false;
  s.carry.reserve(per_record);
  while (produced < budget) {
    std::size_t best = sources;
    for (std::size_t i = 0; i < sources; ++i) {
      if (valid[i] && (best == sources || *heads[i].at < *heads[best].at)) best = i;
    }
    if (best == sources) {
      exhausted = true;
      break;
    }
    const Entry* bound = nullptr;
    for (std::size_t i = 0; i < sources; ++i) {
      if (i != best && valid[i] && (bound == nullptr || *heads[i].at < *bound)) bound = heads[i].at;
    }
    // The best source's entries below every other source's head go out in one run, up to the
    // budget, its chunk's end and the end of the record being filled.
    Source& src = heads[best];
    const Entry* from = src.at;
    const Entry* limit = src.end;
    if (static_cast<std::uint64_t>(limit - from) > budget - produced) {
      limit = from + (budget - produced);
    }
    // (A tie with another source cannot happen, a document's entry being in one place; one
    // entry goes out regardless, so that the merge always moves.)
    const Entry* stop = bound == nullptr ? limit : std::lower_bound(src.at, limit, *bound);
    if (stop == src.at) ++stop;
    const bool keep_all = dropped.none();
    while (src.at != stop) {
      // A record, full unless its entries grew wider, whenever enough are carried (what a
      // narrower last record left may already be).
      while (s.carry.size() >= carried()) {
        if (auto r = write(s.carry, s.carry.size() - 1); !r) return std::unexpected(r.error());
      }
      const Entry* run_end =
          src.at + std::min<std::ptrdiff_t>(
                       stop - src.at, static_cast<std::ptrdiff_t>(carried() - s.carry.size()));
      if (keep_all) {
        s.carry.insert(s.carry.end(), src.at, run_end);
      } else {
        for (const Entry* e = src.at; e != run_end; ++e) {
          if (!dropped.contains(e->doc)) s.carry.push_back(*e);
        }
      }
      src.at = run_end;
    }
    const auto taken = static_cast<std::size_t>(src.at - from);
    produced += taken;
    valid[best] = advance(best, taken);
  }
  if (damage) return std::unexpected(*damage);
  if (!exhausted) {
    exhausted = std::none_of(valid.begin(), valid.end(), [](char v) { return v != 0; });
  }
  if (!exhausted) return s;

  if (auto r = write(s.carry, 0); !r) return std::unexpected(r.error());
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

void Column::recycle(std::unique_ptr<Delta> merged) {
  if (merged && merged->size() >= capacity_) spare_ = std::move(merged);
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
  const std::size_t keep = merge_->keep;
  if (build_) {
    // Inputs the build has not read in full: it reads the new run instead.
    auto& pending = build_->pending;
    const bool front_read = !pending.empty();
    const std::uint32_t front = front_read ? pending.front() : 0;
    bool reread = false;
    for (std::size_t i = keep; i < state_.runs.size(); ++i) {
      if (auto it = std::find(pending.begin(), pending.end(), state_.runs[i].id);
          it != pending.end()) {
        pending.erase(it);
        reread = true;
      }
    }
    if (reread) pending.push_back(slice.state.runs.back().id);
    if (front_read && (pending.empty() || pending.front() != front)) build_->record = 0;
  }
  state_ = std::move(slice.state);
  runs_ = std::move(slice.runs);
  directories_generation_ = kStale;
  if (merge_->filter) {
    filters_.resize(keep);
    filters_.push_back(std::move(merge_->filter));
  }
  covered_.resize(keep);
  covered_.push_back(merge_->covers);
  std::unique_ptr<Delta> frozen = std::move(merge_->frozen);
  merge_.reset();
  return frozen;
}

}  // namespace neardup
