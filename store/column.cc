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

// Asks the kernel for bytes [begin, end) of the map, whole pages (MADV_WILLNEED).
void read_ahead(const char* begin, const char* end) {
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto from = reinterpret_cast<std::uintptr_t>(begin) & ~(page - 1);
  ::madvise(reinterpret_cast<void*>(from), reinterpret_cast<std::uintptr_t>(end) - from,
            MADV_WILLNEED);  // advice only
}

// Asks the kernel for records [from, from + kReadAheadRecords) of a run that is about to be read
// whole (MADV_WILLNEED), every kReadAheadRecords records: large requests, even on a map opened
// with store.readahead false (MDB_NORDAHEAD advises it random, page by page).
void read_ahead(const RunDirectory& dir, std::size_t r) {
  if (r % kReadAheadRecords != 0) return;
  const std::size_t to = std::min(dir.records.size(), r + 2 * kReadAheadRecords);
  for (std::size_t i = r + (r == 0 ? 0 : kReadAheadRecords); i < to; ++i) {
    read_ahead(dir.records[i], dir.records[i] + dir.bytes[i]);
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
  if (filtered() && !read_only) {
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      auto dir = RunDirectory::load(txn, runs_[i], format_);
      if (!dir) return std::unexpected(dir.error());
      filters_.push_back(filter_of(*dir, state_.runs[i].entries, union_.get()));
    }
  }
  return {};
}

std::unique_ptr<RunFilter> Column::new_filter(std::uint64_t entries) const {
  if (format_ == RunFormat::kNarrow) return RunFilter::bloom(entries);
  const double prefixes = std::ldexp(1.0, static_cast<int>(prefix_bits_));
  if (static_cast<double>(entries) > kMaxPrefixLoad * prefixes) return nullptr;
  // The bitmap, once it is no larger than a Bloom filter of the run's entries.
  if (prefix_bits_ <= RunFilter::kMaxBitmapBits &&
      RunFilter::bitmap_bytes(prefix_bits_) <= entries * prefix_filter_bits_ / 8) {
    return RunFilter::bitmap(prefix_bits_);
  }
  if (entries < min_prefix_filter_entries_) return nullptr;
  // Sized for 8 bits a key: entries * bits / 8 keys' worth.
  return RunFilter::bloom(
      std::max<std::uint64_t>(1, entries * prefix_filter_bits_ / BandFilter::kBitsPerKey));
}

std::unique_ptr<RunFilter> Column::filter_of(const RunDirectory& dir, std::uint64_t entries,
                                             BandFilter* also) const {
  auto filter = new_filter(entries);
  if (filter == nullptr) return nullptr;
  for (std::size_t r = 0; r < dir.records.size(); ++r) {
    read_ahead(dir, r);
    // Ascending keys: the filters fill front to back.
    dir.for_each_key(r, [&](std::size_t, std::uint64_t key) {
      key = filter_key(key);
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
  bytes += merge_filter_memory();
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
  // While the map has not moved, the directories held are current: only runs added since (a
  // merge's new run, which replaced the newest runs) are read, not the runs a merge kept.
  if (directories_generation_ != generation || reopen_runs_ || directories_.size() > runs_.size()) {
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
  }
  for (std::size_t i = directories_.size(); i < runs_.size(); ++i) {
    auto dir = RunDirectory::load(txn, runs_[i], format_);
    if (!dir) return std::unexpected(dir.error());
    directories_.push_back(std::move(*dir));
    ++directories_read_;
  }
  directories_generation_ = generation;
  return {};
}

lmdb::Result<> Column::read_runs_ahead(const lmdb::Txn& txn, std::uint64_t generation) {
  if (auto r = open_directories(txn, generation); !r) return r;
  for (const RunDirectory& dir : directories_) {
    for (std::size_t r = 0; r < dir.records.size(); r += kReadAheadRecords) read_ahead(dir, r);
  }
  return {};
}

lmdb::Result<> Column::read_high_parts_ahead(const lmdb::Txn& txn, std::uint64_t generation) {
  if (auto r = open_directories(txn, generation); !r) return r;
  for (const RunDirectory& dir : directories_) {
    for (std::size_t r = 0; r < dir.records.size(); ++r) {
      const RecordForm& form = dir.forms[r];
      if (!form.elias_fano) continue;
      const char* record = dir.records[r];
      read_ahead(record + form.field_region(form.count), record + form.key_region(form.count));
    }
  }
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

void Column::prefetch(std::uint64_t key, Lookahead step, PageAdvice* advice) const {
  const std::uint64_t lo = range_start(key);
  if (advice != nullptr && step == Lookahead::kRecords && format_ == RunFormat::kNarrow) {
    delta_.prefetch_filled(key);
    if (merge_) merge_->frozen->prefetch_filled(key);
    for_each_probed_run(key, [&](std::size_t i) {
      RunProbe probe(directories_[i], lo, range_end(key), gap(i));
      probe.prefetch();
      probe.advise(*advice);
    });
    return;
  }
  if (step == Lookahead::kDirectories) {
    delta_.prefetch(key);
    if (merge_) merge_->frozen->prefetch(key);
    if (union_) union_->prefetch(stored_key(format_, key));
  } else {
    delta_.prefetch_filled(key);
    if (merge_) merge_->frozen->prefetch_filled(key);
  }
  for (std::size_t i = 0; i < directories_.size(); ++i) {
    // A covered run's filter is read only for a key the union lets through (rarely).
    if (covered(i)) continue;
    // A filtered run: its filter's line, the run's lines once start() knows they are needed.
    const bool filtered = i < filters_.size() && filters_[i];
    if (step == Lookahead::kDirectories) {
      if (filtered) {
        filters_[i]->prefetch(filter_key(key));
      } else {
        RunProbe::prefetch_directory(directories_[i], lo);
      }
    } else if (!filtered || (prefix_filter_bits_ > 0 && !filtered_out(i, key))) {
      // A table run's filter lets a key's prefix through often (a run holds about one entry a
      // prefix at the size its design is chosen for): its line was loaded a page ahead.
      RunProbe(directories_[i], lo, range_end(key), gap(i)).prefetch();
    }
  }
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

}  // namespace neardup
