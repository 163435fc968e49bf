// A column of the index: a multiset of (key, doc) entries kept as an LSM tree over LMDB — an
// in-memory Delta of recent entries (delta.h) over a few immutable sorted runs on disk (run.h).
// The permuted SimHash tables, the ids column and the LSH band columns are all columns.
//
// A column covers the documents up to its watermark in its runs and those after it in its
// delta. The delta is never written as such: the docs table (and, for band columns, the
// sketches table) is its log, and the index re-adds every document past the watermark at open.
// When the delta is full, merge_into() writes it and the newest runs (each at most kMergeRatio
// times what was gathered so far) as one new run and drops those runs, in the caller's write
// transaction; adopt() then makes the result current once that transaction commits.
// Not thread-safe: the index's single writer owns its columns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/delta.h"
#include "store/lmdb.h"
#include "store/records.h"
#include "store/run.h"

namespace neardup {

class Column {
 public:
  // A merge takes the newest runs while each is at most this many times the entries gathered
  // so far, so runs grow geometrically: few runs to probe, each entry rewritten a few times.
  static constexpr std::uint64_t kMergeRatio = 16;

  // name: "t/<scheme>/<table>", "ids" or "b/<scheme>" (its meta key is "column/<name>" and its
  // runs' databases "<name>/<run id>"). prefix_bits: the bits a probe's range shares (64 for an
  // exact key). bucket_bits and capacity size the delta (Delta).
  Column(std::string name, std::uint32_t prefix_bits, RunFormat format,
         std::uint32_t bucket_bits, std::uint64_t capacity);

  // Reads the column's state from meta and opens its runs; when there is none and `create`,
  // writes an empty state whose watermark is `watermark` (the documents stored so far, which
  // the column then never holds). Errors: LMDB's; kCorrupt as EINVAL with the column named.
  lmdb::Result<> load(const lmdb::Txn& txn, lmdb::Dbi meta, bool create, std::uint64_t watermark);

  const std::string& name() const { return name_; }
  RunFormat format() const { return format_; }
  std::uint64_t watermark() const { return state_.watermark; }
  const records::ColumnState& state() const { return state_; }
  Delta& delta() { return delta_; }
  const Delta& delta() const { return delta_; }
  bool full() const { return delta_.size() >= capacity_; }

  // Adds an entry of a document past the watermark (to the delta).
  void add(const Entry& entry) { delta_.add(entry); }

  // Makes the run directories current for map generation `generation` (reloads them when the
  // runs or the map changed since they were loaded). Call in each transaction before start().
  lmdb::Result<> open_directories(const lmdb::Txn& txn, std::uint64_t generation);

  // Probes for every entry whose key shares `key`'s top prefix_bits: calls fn(entry) for the
  // delta's entries now and, unless with_runs is false (the caller knows no run holds the
  // key), appends one started RunProbe per run to `probes`; RunProbe::finish() reads them.
  // Narrow runs answer for the key's top 32 bits (run.h).
  template <typename Fn>
  void start(std::uint64_t key, std::vector<RunProbe>& probes, Fn&& fn, bool with_runs = true) {
    const std::uint64_t lo = range_start(key), hi = range_end(key);
    delta_.scan(lo, hi, fn);
    if (!with_runs) return;
    for (std::size_t i = 0; i < directories_.size(); ++i) {
      probes.emplace_back(directories_[i], lo, hi, gap(i));
      probes.back().start();
    }
  }

  // Starts loading what start(key) will read, so that the cache and TLB misses of the next
  // page overlap the work on this one. Directories must be current.
  void prefetch(std::uint64_t key) const;

  // Writes the merge described above into txn: the new run, the dropped runs, the new state in
  // meta with `watermark` (every document stored so far). Returns the state to adopt() after
  // txn commits; on failure nothing changed in memory. Errors: LMDB's (MDB_MAP_FULL: grow and
  // run again).
  struct Merged {
    records::ColumnState state;
    std::vector<lmdb::Dbi> runs;
    std::vector<Entry> entries;  // the delta's entries as merged (sorted, stored_key form)
  };
  lmdb::Result<Merged> merge_into(const lmdb::Txn& txn, lmdb::Dbi meta, std::uint64_t watermark);
  void adopt(Merged merged);

 private:
  std::uint64_t range_start(std::uint64_t key) const;
  std::uint64_t range_end(std::uint64_t key) const;
  // The expected distance between neighbouring keys of run i (RunProbe).
  double gap(std::size_t i) const;
  std::string run_name(std::uint32_t run) const { return name_ + "/" + std::to_string(run); }
  std::string meta_key() const { return "column/" + name_; }

  std::string name_;
  std::uint32_t prefix_bits_;
  RunFormat format_;
  std::uint64_t capacity_;
  records::ColumnState state_;
  std::vector<lmdb::Dbi> runs_;  // one per state_.runs entry
  Delta delta_;
  // One per run, valid while the runs and the map (generation) are unchanged.
  std::vector<RunDirectory> directories_;
  std::uint64_t directories_generation_ = kStale;
  static constexpr std::uint64_t kStale = ~0ull;
};

}  // namespace neardup
