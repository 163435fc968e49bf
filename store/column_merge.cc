// Column's merges (column.h): when a delta merges and which runs join it, the merged entries
// written a slice at a time, and a finished merge's adoption or its discard.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "store/column.h"

namespace neardup {

const Entry* gallop_lower_bound(const Entry* first, const Entry* last, const Entry& value) {
  // Invariant: first[0 .. below) < value. Doubling step until first[step - 1] >= value (or the
  // end) leaves the answer in [below, step).
  std::size_t below = 0, step = 1;
  const auto n = static_cast<std::size_t>(last - first);
  while (step <= n && first[step - 1] < value) {
    below = step;
    step *= 2;
  }
  return std::lower_bound(first + below, first + std::min(step, n), value);
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
  if (format_ == RunFormat::kNarrow) {
    // Whole tiers: the newest kNarrowFanout - 1 runs, each at most twice what was gathered
    // before them, join it; then the next tier's, while they keep within the limit.
    constexpr std::size_t kJoin = kNarrowFanout - 1;
    while (m.keep >= kJoin) {
      std::uint64_t sum = 0;
      std::size_t j = 0;
      for (; j < kJoin; ++j) {
        const std::uint64_t next = state_.runs[m.keep - 1 - j].entries;
        if (next > 2 * m.total) break;
        sum += next;
      }
      if (j < kJoin || sum > limit - m.total) break;
      m.total += sum;
      m.keep -= kJoin;
    }
  } else {
    while (m.keep > 0) {
      const std::uint64_t next = state_.runs[m.keep - 1].entries;
      if (next > kWideMergeRatio * m.total || next > limit - m.total) break;
      m.total += next;
      --m.keep;
    }
  }
  m.watermark = watermark;
  m.output = state_.next_run;
  m.progress.input_at.assign(state_.runs.size() - m.keep, {0, 0});
  if (filters_.size() == state_.runs.size() && filtered()) {
    m.filter = new_filter(m.total);
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
      if (format_ == RunFormat::kNarrow) {
        frozen.sorted_bucket(at.first, bucket_, [](Entry& entry) {
          entry.key = stored_key(RunFormat::kNarrow, entry.key);
        });
        // The union filters learn the merged delta's keys here, in ascending order (the
        // merge's inputs are in them already). A delta's keys fall lines apart in a union of
        // gigabytes: the lines of bucket b + kFilterAhead are asked for when bucket b is
        // loaded, so that the writes do not wait for their misses one after another.
        BandFilter* const to_union = merge_->covers ? union_.get() : nullptr;
        BandFilter* const to_build = build_ ? build_->filter.get() : nullptr;
        auto ask = [&](std::size_t b) {
          frozen.for_each_in_bucket(b, [&](const Entry& entry) {
            const std::uint64_t key = stored_key(RunFormat::kNarrow, entry.key);
            if (to_union != nullptr) to_union->prefetch(key);
            if (to_build != nullptr) to_build->prefetch(key);
          });
        };
        if (bucket_loaded_ + 1 != at.first) {
          for (std::size_t b = at.first; b < at.first + kFilterAhead; ++b) ask(b);
        }
        ask(at.first + kFilterAhead);
        for (const Entry& entry : bucket_) {
          if (to_union != nullptr) to_union->add(entry.key);
          if (to_build != nullptr) to_build->add(entry.key);
        }
      } else {
        frozen.sorted_bucket(at.first, bucket_);
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
  RunFilter* filter = merge_->filter.get();
  auto write = [&](std::vector<Entry>& carry, std::size_t keep) -> lmdb::Result<> {
    std::size_t at = 0;
    while (at < carry.size() && carry.size() - at > keep) {
      auto written = writer.write_record(std::span<const Entry>(carry).subspan(at));
      if (!written) return std::unexpected(written.error());
      if (filter != nullptr) {
        for (std::size_t i = at; i < at + *written; ++i) filter->add(filter_key(carry[i].key));
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
  const bool keep_all = dropped.none();
  while (produced < budget) {
    // The smallest head (best) and the next smallest (bound), in one pass over the sources.
    std::size_t best = sources;
    const Entry* bound = nullptr;
    for (std::size_t i = 0; i < sources; ++i) {
      if (!valid[i]) continue;
      const Entry* head = heads[i].at;
      if (best == sources) {
        best = i;
      } else if (*head < *heads[best].at) {
        bound = heads[best].at;
        best = i;
      } else if (bound == nullptr || *head < *bound) {
        bound = head;
      }
    }
    if (best == sources) {
      exhausted = true;
      break;
    }
    // The best source's entries below every other source's head go out in one run, up to the
    // budget, its chunk's end and the end of the record being filled. Its head is below the
    // bound (a tie cannot happen, a document's entry being in one place; one entry goes out
    // regardless, so that the merge always moves). Sources of like size, a band merge's,
    // interleave entry by entry: the next entry is checked before galloping.
    Source& src = heads[best];
    const Entry* from = src.at;
    const Entry* limit = src.end;
    if (static_cast<std::uint64_t>(limit - from) > budget - produced) {
      limit = from + (budget - produced);
    }
    const Entry* stop = bound == nullptr ? limit
                        : from + 1 == limit || !(from[1] < *bound)
                            ? from + 1
                            : gallop_lower_bound(from + 2, limit, *bound);
    while (src.at != stop) {
      // A record, full unless its entries grew wider, whenever enough are carried (what a
      // narrower last record left may already be).
      while (s.carry.size() >= carried()) {
        if (auto r = write(s.carry, s.carry.size() - 1); !r) return std::unexpected(r.error());
      }
      const Entry* run_end =
          src.at + std::min<std::ptrdiff_t>(
                       stop - src.at, static_cast<std::ptrdiff_t>(carried() - s.carry.size()));
      if (!keep_all) {
        for (const Entry* e = src.at; e != run_end; ++e) {
          if (!dropped.contains(e->doc)) s.carry.push_back(*e);
        }
      } else if (run_end - src.at == 1) {
        s.carry.push_back(*src.at);
      } else {
        s.carry.insert(s.carry.end(), src.at, run_end);
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
  // Every run has its filter (or a null one, for a table run that gets none: filter_prefixes):
  // so has the new one.
  const bool run_filters = filtered() && filters_.size() == state_.runs.size();
  state_ = std::move(slice.state);
  runs_ = std::move(slice.runs);
  // The runs kept are unchanged, and so are their directories; open_directories() reads the
  // new run's.
  if (directories_.size() > keep) directories_.resize(keep);
  if (run_filters) {
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
