// A column of the index: a multiset of (key, doc) entries kept as an LSM tree over LMDB — an
// in-memory Delta of recent entries (delta.h) over a few immutable sorted runs on disk (run.h).
// The permuted SimHash tables, the ids column and the LSH band columns are all columns.
//
// A column covers the documents up to its watermark in its runs and those after it in memory.
// Memory is never written as such: the docs table (and, for band columns, the sketches table)
// is its log, and the index re-adds every document past the watermark at open.
//
// Merging, in slices. When the delta is full, begin_merge() freezes it: its entries, sorted,
// become the merge's first input, with the newest runs (wide: each at most kWideMergeRatio times
// what was gathered before it; narrow: whole tiers of kNarrowFanout, while the merged run stays
// within max_run_entries()), and a new, empty delta takes the next entries. merge_slice() then
// writes a bounded number of the merged entries into the new run in the caller's write transaction
// (the index calls it once per batch, sized so that the merge ends well before the new delta
// fills); the last slice also drops the input runs and writes the column's new state to meta.
// adopt() makes a slice current once its transaction commits. Meanwhile probes read the delta,
// the frozen entries and the runs as they were, so a merge never stalls a batch for long and
// never changes an answer. A crash mid-merge leaves the old runs and state in meta; load()
// drops the half-written run, and the merge starts again from the rebuilt delta.
//
// Filters (narrow columns opened for writing): one per run, and one over the union of the runs
// (union_ below), which answers for every run it covers with one cache line.
// Not thread-safe: the index's single writer owns its columns.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/delta.h"
#include "store/key_filter.h"
#include "store/lmdb.h"
#include "store/records.h"
#include "store/run.h"
#include "store/run_filter.h"
#include "store/run_probe.h"

namespace neardup {

// Documents whose entries a merge leaves out: those numbered up to expired_through (past
// store.retention) and the forgotten ones.
struct Dropped {
  std::uint64_t expired_through = 0;
  const std::set<std::uint64_t>* forgotten = nullptr;
  bool contains(std::uint64_t doc) const {
    return doc <= expired_through || (forgotten != nullptr && forgotten->contains(doc));
  }
  bool none() const { return expired_through == 0 && (forgotten == nullptr || forgotten->empty()); }
};

// The first entry of the ascending [first, last) not below value (last if none), found by
// galloping from first: O(log d) comparisons for an answer d entries on, so that a merge of
// interleaved sources pays for the length of each stretch it takes, not of its source's chunk.
const Entry* gallop_lower_bound(const Entry* first, const Entry* last, const Entry& value);

class Column {
 public:
  // Wide runs (SimHash tables, ids, members): a merge takes the newest runs while each is at
  // most kWideMergeRatio times the entries gathered so far, so runs grow geometrically. Under 16
  // a column of up to 16 deltas was one run, rewritten whole by every merge (each entry written
  // 6.5 times at 10M pages and 16.5 at 30M); under 2 it is written 1.5–2 times there, for a
  // second run to probe, whose directory search costs less than the merges saved (30M pages,
  // SimHash alone: 1.22–1.30 times the pages a CPU second, bench/RESULTS.md).
  // Narrow (band) runs, in tiers of kNarrowFanout: a delta is a run of its own until three sit
  // beside it, then the four merge into one of 4 deltas, and three of those with the next into
  // one of 16 (a merge takes whole tiers, each of runs at most twice what it gathered before
  // them). They hold most of the index's entries: each is written 2.5 times on its way to 16
  // deltas, against 3 under a binary counter of deltas (ratio 1: runs of 2^i deltas) and about
  // 16 under ratio 16 at 10M pages; a 3.3M-page fill with both signatures took 0.90–0.93 of the
  // binary counter's time. Their filters (key_filter.h) spare most probes of the few more runs
  // this leaves (at most six below the settled ones).
  static constexpr std::uint64_t kWideMergeRatio = 2;
  static constexpr std::size_t kNarrowFanout = 4;
  // A narrow merge stays within this many full deltas' entries (unless it reclaims dropped
  // documents, begin_merge). The tier after 16 deltas, 64, would pass it: band runs settle at
  // 16 deltas and a little over (≈ 3.3M pages of 21 bands) and take part in no further merge.
  // Without it, every 4^i deltas all the band runs would merge into one, as large as the whole
  // column (under the binary counter before: 5 GB at 12.8M pages, which stalled batches for
  // seconds and doubled the store's footprint while it ran); with it no merge is larger than
  // that, and a page's absent keys check one more filter per 16 deltas (bench/RESULTS.md).
  static constexpr std::uint64_t kNarrowRunDeltas = 32;
  std::uint64_t max_run_entries() const {
    return format_ == RunFormat::kNarrow ? kNarrowRunDeltas * capacity_ : ~std::uint64_t{0};
  }

  // name: "t/<scheme>/<table>", "ids" or "b/<scheme>" (its meta key is "column/<name>" and its
  // runs' databases "<name>/<run id>"). prefix_bits: the bits a probe's range shares (64 for an
  // exact key). bucket_bits and capacity size the delta (Delta).
  Column(std::string name, std::uint32_t prefix_bits, RunFormat format,
         std::uint32_t bucket_bits, std::uint64_t capacity);

  // Reads the column's state from meta, opens its runs and (in a write transaction) drops the
  // half-written run of an interrupted merge; when there is no state and `create`, writes an
  // empty one whose watermark is `watermark` (the documents stored so far, which the column
  // then never holds). Errors: LMDB's; EINVAL naming the column when meta is corrupt.
  lmdb::Result<> load(const lmdb::Txn& txn, lmdb::Dbi meta, bool create, std::uint64_t watermark,
                      bool read_only = false);

  // Calls fn(entry) for every entry, runs and memory alike, in ascending (key, doc) order
  // (stored keys for a narrow column). Memory: one record per run and a sorted copy of what
  // is in memory. Directories are not needed.
  template <typename Fn>
  lmdb::Result<> for_each_sorted(const lmdb::Txn& txn, Fn&& fn) const;

  const std::string& name() const { return name_; }
  RunFormat format() const { return format_; }
  // Documents up to here are in the runs; later ones in memory (delta or frozen entries).
  std::uint64_t watermark() const { return state_.watermark; }
  const records::ColumnState& state() const { return state_; }
  Delta& delta() { return delta_; }
  const Delta& delta() const { return delta_; }
  std::uint64_t capacity() const { return capacity_; }
  // Bytes of memory held: the delta, the run filters, a running merge's frozen entries and
  // filter, the table kept for the next delta, and the runs' directories.
  std::size_t memory() const;
  // Of memory() less delta_memory(), a running merge's filter for its new run (narrow columns:
  // held beside its inputs' until the merge ends).
  std::size_t merge_filter_memory() const {
    return merge_ && merge_->filter ? merge_->filter->memory() : 0;
  }
  // Of memory(), the deltas' part (a fixed cost: the tables do not grow with the store): the
  // delta, the table kept for the next, a running merge's frozen entries.
  std::size_t delta_memory() const;

  // Adds an entry of a document past the watermark (to the delta).
  void add(const Entry& entry) { delta_.add(entry); }

  // Makes the run directories current for map generation `generation`: reads every run's when
  // the map moved since they were read, else only those of runs added since (a merge's new
  // run). Call in each transaction before start().
  lmdb::Result<> open_directories(const lmdb::Txn& txn, std::uint64_t generation);

  // Probes for every entry whose key shares `key`'s top prefix_bits: calls fn(entry) for the
  // entries in memory now and, unless with_runs is false (the caller knows no run holds the
  // key), appends one started RunProbe per run to `probes`; RunProbe::finish() reads them.
  // Narrow runs answer for the key's top 40 bits, and a run whose filter rules the key out is
  // not probed.
  template <typename Fn>
  void start(std::uint64_t key, std::vector<RunProbe>& probes, Fn&& fn, bool with_runs = true) {
    const std::uint64_t lo = range_start(key), hi = range_end(key);
    delta_.scan(lo, hi, fn);
    if (merge_) merge_->frozen->scan(lo, hi, fn);
    if (!with_runs) return;
    for_each_probed_run(key, [&](std::size_t i) {
      probes.emplace_back(directories_[i], lo, hi, gap(i));
      probes.back().start();
    });
  }

  // Starts loading what start(key) will read, in two steps a page apart, so that the cache and
  // TLB misses of the pages ahead overlap the work on this one. Directories must be current.
  //   kDirectories (two pages ahead): the delta's bucket, the filters' lines, and the directory
  //     lines of the record the key most likely falls in: prefetches only, nothing is read.
  //   kRecords (the next page): reads the directories and the delta's bucket count (their
  //     lines loaded by the step before) and prefetches the lines of the records where the
  //     search will begin and the rest of the delta bucket's entries.
  //   With `advice` (kRecords, a narrow column), also finds the runs start(key) will probe (the
  //     union's and their filters' lines loaded by the step before), prefetches their records'
  //     lines, and adds those lines' pages to `advice` (RunProbe::advise).
  enum class Lookahead { kDirectories, kRecords };
  void prefetch(std::uint64_t key, Lookahead step, PageAdvice* advice = nullptr) const;

  // Makes the directories current (open_directories) and asks the kernel to read every run of
  // the column into the page cache (MADV_WILLNEED: large reads, which it may start later or
  // drop under memory pressure; nothing waits for them). For the columns every page probes, at
  // open: their pages are then read in a few large requests, not by a fault a page each.
  lmdb::Result<> read_runs_ahead(const lmdb::Txn& txn, std::uint64_t generation);
  // The same for the high parts of the keys of the column's Elias–Fano records alone (every
  // record of a band column this format writes): what every probe that passes a run's filter
  // reads first, about a twentieth of a band run (its low parts are a third, its docs the rest).
  // For the band columns of a store larger than memory, whose open read each run whole for its
  // filters and kept only the runs read last (docs/index.md, "Larger than memory").
  lmdb::Result<> read_high_parts_ahead(const lmdb::Txn& txn, std::uint64_t generation);

  // Table columns opened for writing: each run gets a filter over the prefixes of its keys
  // (their top prefix_bits, what a probe's range shares), so that a probe skips a run that holds
  // nothing in its range (RunFilter). Below its design's size a table's prefixes are mostly
  // empty (at 10M pages with the 10 tables of 25-26 bits chosen for 100M, about 9 in 10 of a
  // run's). A run gets:
  //   - an exact bitmap of the prefixes once that is no larger than a Bloom filter of `bits`
  //     bits an entry (from 2^prefix_bits / bits entries): 4 MiB a run for 25 bits;
  //   - below that, a Bloom filter of `bits` bits an entry, if it holds at least `min_entries`
  //     (OpenOptions::prefix_filter_min_entries);
  //   - none above kMaxPrefixLoad entries a prefix: at least 1 - e^-1 = 63 % of its prefixes are
  //     taken, and a filter would spare few probes for the cache line it costs each.
  // 0 bits: no filters. Call before load().
  static constexpr double kMaxPrefixLoad = 1.0;
  void filter_prefixes(std::uint32_t bits, std::uint64_t min_entries) {
    prefix_filter_bits_ = bits;
    min_prefix_filter_entries_ = min_entries;
  }

  // Narrow columns opened for writing: reads up to `budget` more run entries into the union
  // filter being built (below), starting a build when two or more runs are not covered by the
  // current one and no merge runs, and making it current once it covers every run and no merge
  // runs. Directories must be current. Nothing on disk changes.
  void build_union(std::uint64_t budget);
  // The runs' directories, as of the last open_directories(), and how many run directories it
  // has read in all (tests and stats).
  const std::vector<RunDirectory>& directories() const { return directories_; }
  std::uint64_t directories_read() const { return directories_read_; }
  // Whether a check of the union filter answers for run i (tests and stats).
  bool covered(std::size_t i) const { return i < covered_.size() && covered_[i] != 0; }
  bool building_union() const { return build_.has_value(); }

  // ---- merging ----

  bool merging() const { return merge_.has_value(); }
  // Whether a merge should begin (the delta is full and none is running).
  bool full() const { return !merge_ && delta_.size() >= capacity_; }

  // Whether the column has merged before and its delta holds at least 1/kBusyShare of its
  // capacity: it was in use when the store closed.
  static constexpr std::uint64_t kBusyShare = 16;
  bool busy() const;
  // At open, once the deltas are rebuilt: a busy column, or one with runs that fills beside a
  // busy one (`beside_busy`: the wide columns of a scheme gain an entry a page each and merge
  // one after another, so one that has just merged holds a small delta while the others are
  // full), will fill its delta, so its table and the next merge's are made at their full size
  // now, rather than grown in the batches that follow (rehashed and faulted in: up to a second a
  // batch at 10M pages). An idle column (a scheme no longer written, a few late pages) keeps its
  // small table.
  void presize_if_busy(bool beside_busy = false);
  // Entries the running merge has still to write (0 when none runs).
  std::uint64_t merge_remaining() const;
  // Freezes the delta as described above; `watermark` is every document stored so far (the
  // merged state's watermark). The merged run stays within max_run_entries() unless `reclaim`
  // (documents past store.retention are being dropped: the oldest runs must be rewritten for
  // their space to come back). In memory only; the delta is empty afterwards.
  void begin_merge(std::uint64_t watermark, bool reclaim = false);

  // Writes up to `budget` (at least one record's worth) more entries of the running merge into
  // txn, leaving out the entries of `dropped` documents; the slice that writes the last entry
  // also drops the inputs and writes the new state to meta. Directories must be current. Returns the progress to adopt() after txn commits (on
  // failure nothing changed in memory). Errors: LMDB's (MDB_MAP_FULL: grow and run again).
  struct Slice {
    std::pair<std::size_t, std::size_t> fresh_at;  // (bucket, entry) in the frozen delta
    std::vector<std::pair<std::size_t, std::size_t>> input_at;  // (record, entry) per input
    std::vector<Entry> carry;  // merged entries short of a full record, written next slice
    std::uint64_t written = 0;
    bool done = false;
    records::ColumnState state;     // done: the column's new state
    std::vector<lmdb::Dbi> runs;    // done: its runs' handles
  };
  lmdb::Result<Slice> merge_slice(const lmdb::Txn& txn, lmdb::Dbi meta, std::uint64_t budget,
                                  const Dropped& dropped = {});
  // Deletes the column from txn: every run (and the output of a running merge), and its state
  // in meta. The Column must not be used after txn commits. Errors: LMDB's.
  lmdb::Result<> drop(const lmdb::Txn& txn, lmdb::Dbi meta);

  // Makes a committed slice current. Returns the frozen delta once the merge is done (the ids
  // column adds its entries to its filter), else null.
  std::unique_ptr<Delta> adopt(Slice slice);
  // Takes back a merged delta: a full one's table, already faulted in, becomes the next merge's
  // new delta (sparing the page faults and rehashes of growing one: a column that filled a
  // delta fills the next); a partial one (an idle column's) is freed.
  void recycle(std::unique_ptr<Delta> merged);
  // Forgets a slice whose transaction was aborted. A final slice dropped the input runs, which
  // closes their handles even when the drop is rolled back: they are opened again by name.
  void discard(const Slice& slice);

 private:
  // The frozen delta and the progress of a running merge.
  struct Merge {
    std::unique_ptr<Delta> frozen;  // read in key order, a bucket at a time
    std::size_t keep = 0;         // runs [keep, end) are the inputs
    std::uint64_t total = 0;      // entries the new run will hold
    std::uint64_t watermark = 0;  // the new state's
    std::uint32_t output = 0;     // the new run's id
    Slice progress;
    std::unique_ptr<RunFilter> filter;  // the new run's, filled as slices write
    bool covers = false;  // the frozen keys go into union_, and the new run is covered
    // Entries the merge's last record took (0 before the first): the merged entries carried
    // before a record is written, a few more than that, so that a record is full and few are
    // left over. Slices copy what they carry (an aborted slice leaves the merge unchanged).
    std::size_t record_entries = 0;
  };
  // A union filter under construction: every run in `pending` is read into it a slice a batch;
  // the frozen keys of merges meanwhile are added as they are merged.
  struct UnionBuild {
    std::unique_ptr<BandFilter> filter;
    std::vector<std::uint32_t> pending;  // ids of the runs still to read, front first
    std::size_t record = 0;              // the front run's next record
  };
  // A union filter starts sized for twice the runs' entries, and for at least this many full
  // deltas' entries. (A quarter more instead held less memory after an open, but two unions
  // for half of each cycle: store/FORMAT.md, tried and not kept.)
  static constexpr std::uint64_t kUnionMinDeltas = 8;
  std::unique_ptr<BandFilter> new_union() const;

  // Whether the runs get filters: narrow columns', and table columns' whose prefixes are filtered.
  bool filtered() const { return format_ == RunFormat::kNarrow || prefix_filter_bits_ > 0; }
  // What a run's filter holds of a key: the stored key (narrow), or its prefix (tables).
  std::uint64_t filter_key(std::uint64_t key) const {
    return stored_key(format_, range_start(key));
  }
  // Whether run i's filter rules out `key` (false without a filter).
  bool filtered_out(std::size_t i, std::uint64_t key) const {
    return i < filters_.size() && filters_[i] && !filters_[i]->may_contain(filter_key(key));
  }
  // Calls fn(i) for each run i that a probe of `key` reads: those the union filter (for the
  // runs it covers) and the run's own filter do not rule out (start(), and prefetch's advice).
  template <typename Fn>
  void for_each_probed_run(std::uint64_t key, Fn&& fn) const {
    const bool in_union = union_ == nullptr || union_->may_contain(stored_key(format_, key));
    for (std::size_t i = 0; i < directories_.size(); ++i) {
      if ((!in_union && covered(i)) || filtered_out(i, key)) continue;
      fn(i);
    }
  }
  // A filter over the filter keys of the entries the run `dir` holds.
  std::unique_ptr<RunFilter> filter_of(const RunDirectory& dir, std::uint64_t entries,
                                       BandFilter* also = nullptr) const;
  // A filter for a run of `entries` entries (null when the run gets none: filter_prefixes).
  std::unique_ptr<RunFilter> new_filter(std::uint64_t entries) const;
  std::uint64_t range_start(std::uint64_t key) const;
  std::uint64_t range_end(std::uint64_t key) const;
  // The expected distance between neighbouring keys of run i (RunProbe).
  double gap(std::size_t i) const;
  std::string run_name(std::uint32_t run) const { return name_ + "/" + std::to_string(run); }
  std::string meta_key() const { return "column/" + name_; }
  // Buckets of the frozen delta ahead of the one loaded whose keys' union filter lines are asked
  // for (load_frozen_bucket; a full delta's bucket holds a few keys).
  static constexpr std::size_t kFilterAhead = 8;
  // Loads the frozen delta's bucket at.first (sorted, keys in stored form) into bucket_, moving
  // on to the next bucket while at.second is past the end; false past the last bucket.
  bool load_frozen_bucket(std::pair<std::size_t, std::size_t>& at);

  std::string name_;
  std::uint32_t prefix_bits_;
  RunFormat format_;
  std::uint64_t capacity_;
  std::uint32_t bucket_bits_;
  records::ColumnState state_;
  std::vector<lmdb::Dbi> runs_;  // one per state_.runs entry
  // Columns opened for writing whose runs are filtered (filtered()): one filter per run
  // (run_filter.h), over a narrow run's stored keys or a table run's prefixes (null for a table
  // run that gets none: filter_prefixes), built at load() and by each merge. Empty otherwise,
  // and every probe reads every run.
  std::vector<std::unique_ptr<RunFilter>> filters_;
  // Narrow columns opened for writing: one filter over the stored keys of every run marked in
  // covered_, 8 bits a key like theirs. Most of a page's band keys are in no run; one check of
  // it answers for every covered run where their own filters cost a cache line each (a page's
  // 42 keys against 6 runs: 252 lines, the stall of most probes); a key it lets through is
  // checked against each covered run's own filter. Built at load over every run when there are
  // two or more, extended by each merge whose inputs are all covered while it has room for the
  // merged delta, and replaced by a new one twice the runs' entries (build_) once two runs are
  // left out of it. Stale keys (dropped documents) stay in it: a filter may say "maybe".
  std::unique_ptr<BandFilter> union_;
  std::vector<char> covered_;  // one per run
  std::optional<UnionBuild> build_;
  Delta delta_;
  std::optional<Merge> merge_;
  std::unique_ptr<Delta> spare_;  // the last merge's frozen delta, the next merge's new delta
  std::size_t bucket_loaded_ = ~std::size_t{0};  // which frozen bucket bucket_ holds, sorted
  std::vector<Entry> bucket_;
  // One per run, valid while the map (generation) is unchanged: a run never changes (LMDB does
  // not move or rewrite the pages of a committed, live database). After a merge, those of the
  // runs it kept, until open_directories() reads the new run's (reading every run's walked the
  // leaf pages of the whole column after each merge: store/FORMAT.md, "Memory").
  std::vector<RunDirectory> directories_;
  std::uint64_t directories_generation_ = kStale;
  std::uint64_t directories_read_ = 0;
  static constexpr std::uint64_t kStale = ~0ull;
  bool reopen_runs_ = false;  // runs_ handles were closed by a rolled-back drop
  std::uint32_t prefix_filter_bits_ = 0;  // filter_prefixes()
  std::uint64_t min_prefix_filter_entries_ = 0;
};

template <typename Fn>
lmdb::Result<> Column::for_each_sorted(const lmdb::Txn& txn, Fn&& fn) const {
  std::vector<std::vector<Entry>> memory;
  memory.push_back(delta_.sorted());
  if (merge_) memory.push_back(merge_->frozen->sorted());
  for (auto& entries : memory) {
    if (format_ == RunFormat::kNarrow) {
      for (Entry& e : entries) e.key = stored_key(format_, e.key);
      std::sort(entries.begin(), entries.end());
    }
  }
  std::vector<RunReader> readers;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    auto reader = RunReader::open(txn, runs_[i], format_, run_name(state_.runs[i].id));
    if (!reader) return std::unexpected(reader.error());
    readers.push_back(std::move(*reader));
  }
  std::vector<std::size_t> at(memory.size(), 0);
  while (true) {
    // The smallest head among the memory vectors (index < memory.size()) and the readers.
    std::size_t best = ~std::size_t{0};
    Entry min{};
    for (std::size_t i = 0; i < memory.size(); ++i) {
      if (at[i] < memory[i].size() && (best == ~std::size_t{0} || memory[i][at[i]] < min)) {
        best = i;
        min = memory[i][at[i]];
      }
    }
    for (std::size_t i = 0; i < readers.size(); ++i) {
      if (!readers[i].done() && (best == ~std::size_t{0} || readers[i].current() < min)) {
        best = memory.size() + i;
        min = readers[i].current();
      }
    }
    if (best == ~std::size_t{0}) return {};
    fn(min);
    if (best < memory.size()) {
      ++at[best];
    } else if (auto next = readers[best - memory.size()].next(); !next) {
      return next;
    }
  }
}

}  // namespace neardup
