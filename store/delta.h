// The in-memory part of an index column: entries of documents newer than the column's runs.
//
// Entries are bucketed by their top bits into fixed slots per bucket (the overflow, which copies
// of a page cause at once with their equal keys, goes to a per-bucket list in a SpillMap), so a
// prefix probe (a table's prefix is at least as wide as the bucket bits) reads one contiguous
// run of memory, usually one or two cache lines. The table
// starts small and doubles its buckets (up to 2^max_bucket_bits) as entries arrive, so memory
// follows what the delta holds, not what it may hold: a store of a thousand pages keeps a few
// KiB per column, a full delta of the default capacity 64 to 128 MiB.
// A Delta is never written to disk as such: the docs table is its log, and Index::open rebuilds
// it from the documents past the column's watermark. Additions since mark() can be undone (an
// aborted batch transaction); the table grows only in mark(), so undo never meets a rehash.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "store/huge_pages.h"
#include "store/run.h"
#include "store/spill_map.h"

namespace neardup {

class Delta {
 public:
  // max_bucket_bits: the widest bucket prefix (at most the narrowest probe prefix). capacity:
  // the entries the delta holds before it is merged; the slots per bucket are sized for it.
  Delta(std::uint32_t max_bucket_bits, std::uint64_t capacity)
      : max_bucket_bits_(max_bucket_bits),
        slots_per_bucket_(static_cast<std::uint32_t>(
            std::clamp<std::uint64_t>(2 * (capacity >> max_bucket_bits), 4, 64))),
        capacity_(capacity) {
    resize(std::min(max_bucket_bits_, kMinBucketBits));
  }

  // Gives the delta, at once, the table it would grow to by the time it holds `capacity`
  // entries, writes every page of it and moves its entries over (as mark() does when it grows):
  // a column that is known to fill its deltas pays for the table when this is called (at open)
  // instead of in the batches that would grow it. Ends the batch, as mark() does.
  void presize() {
    end_batch();
    rehash(std::max(bucket_bits_, bits_for(capacity_)), /*touch=*/true);
  }

  // Ends the batch, as mark() does, and grows the table, now, to the size mark() would grow it
  // to once `entries` more are added: one table for a rebuild that knows how many it adds,
  // instead of a doubling every time it fills up.
  void reserve(std::size_t entries) {
    end_batch();
    if (bucket_bits_ < max_bucket_bits_ && size_ + entries > buckets_ * slots_per_bucket_ / 2) {
      rehash(bits_for(size_ + entries), /*touch=*/false);
    }
  }

  void add(const Entry& entry) {
    const std::size_t b = bucket(entry.key);
    if (counts_[b] < slots_per_bucket_) {
      slots_[b * slots_per_bucket_ + counts_[b]++] = entry;
    } else {
      spill_[b].push_back(entry);
      ++spilled_;
    }
    added_.push_back(entry.key);
  }
  // Starts loading the bucket of key into the cache (probes of several columns overlap): its
  // count and its slots' first two cache lines (a band column's bucket of 8 slots is two).
  void prefetch(std::uint64_t key) const {
    const Entry* slots = &slots_[bucket(key) * slots_per_bucket_];
    __builtin_prefetch(&counts_[bucket(key)]);
    __builtin_prefetch(slots);
    if (slots_per_bucket_ * sizeof(Entry) > 64) __builtin_prefetch(slots + 64 / sizeof(Entry));
  }
  // prefetch()'s second step, once the bucket's count is in the cache (a page later): the rest
  // of the lines its entries fill. A table column's bucket is up to 64 slots, 16 lines, of
  // which a delta half full fills 4 and a full one 8; prefetch() asks for the first two.
  void prefetch_filled(std::uint64_t key) const {
    const std::size_t b = bucket(key);
    const Entry* slots = &slots_[b * slots_per_bucket_];
    constexpr std::size_t kPerLine = 64 / sizeof(Entry);
    for (std::size_t i = 2 * kPerLine; i < counts_[b]; i += kPerLine) __builtin_prefetch(slots + i);
  }
  // Calls fn(entry) for every entry with lo <= key <= hi; lo and hi share the top
  // max_bucket_bits bits.
  template <typename Fn>
  void scan(std::uint64_t lo, std::uint64_t hi, Fn&& fn) const {
    for_each_in_bucket(bucket(lo), [&](const Entry& e) {
      return e.key < lo || e.key > hi || keep_going(fn, e);
    });
  }

  std::size_t size() const { return size_ + added_.size(); }
  // Bytes of memory the table holds.
  std::size_t memory() const {
    return buckets_ * (1 + slots_per_bucket_ * sizeof(Entry)) + spilled_ * sizeof(Entry);
  }
  // Bytes the list undo() reads holds: a batch's keys while it runs, at most kKeptUndo keys'
  // worth once it ended (end_batch).
  std::size_t undo_memory() const { return added_.capacity() * sizeof(std::uint64_t); }

  // Starts a batch: undo() removes everything added after the last mark(). Grows the table
  // when its buckets hold more than half their slots on average.
  void mark() { reserve(0); }
  void undo() {
    for (auto key = added_.rbegin(); key != added_.rend(); ++key) {
      const std::size_t b = bucket(*key);
      if (std::vector<Entry>* spilled = spill_.find(b); spilled != nullptr && !spilled->empty()) {
        spilled->pop_back();  // the bucket was full when these were added: they go first
        --spilled_;
      } else {
        --counts_[b];
      }
    }
    added_.clear();
  }

  // The table's buckets cover the keys in ascending order: bucket b's entries are all below
  // bucket b + 1's. sorted_bucket() gives one bucket's entries, each passed through `map` (which
  // may change its key) and then sorted.
  std::size_t buckets() const { return buckets_; }
  template <typename Map = void (*)(Entry&)>
  void sorted_bucket(
      std::size_t b, std::vector<Entry>& out, Map&& map = [](Entry&) {}) const {
    out.clear();
    append_bucket(b, out);
    for (Entry& entry : out) map(entry);
    sort_entries(out, 0);
  }
  // Calls fn(entry) for each entry of bucket b, unsorted: its slots, then what it spilled once
  // they were full (b past the last: none). A callback that returns bool ends the walk by
  // returning false.
  template <typename Fn>
  void for_each_in_bucket(std::size_t b, Fn&& fn) const {
    if (b >= buckets_) return;
    const Entry* slots = &slots_[b * slots_per_bucket_];
    for (std::uint32_t i = 0; i < counts_[b]; ++i) {
      if (!keep_going(fn, slots[i])) return;
    }
    if (counts_[b] < slots_per_bucket_ || spill_.empty()) return;  // only a full bucket spills
    if (const std::vector<Entry>* spilled = spill_.find(b)) {
      for (const Entry& e : *spilled) {
        if (!keep_going(fn, e)) return;
      }
    }
  }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t b = 0; b < buckets_; ++b) {
      for (std::uint32_t i = 0; i < counts_[b]; ++i) fn(slots_[b * slots_per_bucket_ + i]);
    }
    spill_.for_each([&](std::size_t, const std::vector<Entry>& spilled) {
      for (const Entry& e : spilled) fn(e);
    });
  }

  // All entries in ascending (key, doc) order.
  std::vector<Entry> sorted() const {
    std::vector<Entry> out;
    out.reserve(size());
    for (std::size_t b = 0; b < buckets_; ++b) {
      const std::size_t from = out.size();
      append_bucket(b, out);
      sort_entries(out, from);
    }
    return out;
  }

  // Sorts entries[from..]. A bucket is in insertion order, and a large one is mostly ascending
  // (a column keyed by document numbers puts them all in one bucket, in the order the documents
  // came): its ascending entries are kept apart, the others sorted and the two merged, so that
  // the merge that reads it is not a sort of millions of entries in one batch.
  static void sort_entries(std::vector<Entry>& entries, std::size_t from) {
    constexpr std::size_t kLarge = 4096;
    const auto begin = entries.begin() + static_cast<std::ptrdiff_t>(from);
    if (entries.size() - from < kLarge) {
      std::sort(begin, entries.end());
      return;
    }
    std::vector<Entry> rest;
    auto kept = begin;  // [begin, kept): the ascending entries, in place
    for (auto it = begin; it != entries.end(); ++it) {
      if (kept == begin || !(*it < *(kept - 1))) {
        *kept++ = *it;
      } else {
        rest.push_back(*it);
      }
    }
    std::sort(rest.begin(), rest.end());
    const auto middle = kept;
    std::copy(rest.begin(), rest.end(), kept);
    std::inplace_merge(begin, middle, entries.end());
  }
  // Empties the delta and returns the table to its smallest size.
  void clear() {
    resize(std::min(max_bucket_bits_, kMinBucketBits));
    added_.clear();
    size_ = 0;
  }
  // Empties the delta but keeps its table, already faulted in: a column that filled it once
  // fills it again, and reusing it spares the page faults (zeroing) and the rehashes of growing
  // a new one.
  void reset() {
    std::fill_n(counts_.get(), buckets_, 0);
    spill_.clear();
    spilled_ = 0;
    added_.clear();
    size_ = 0;
  }

 private:
  static constexpr std::uint32_t kMinBucketBits = 8;

  // The undo list's capacity a delta keeps between batches: a batch of 2^18 entries (about
  // 12,000 pages of 21 bands) reuses it; a larger one, and above all a rebuild at open, which
  // adds everything past the watermark as one batch (millions of keys), gives it back.
  static constexpr std::size_t kKeptUndo = std::size_t{1} << 18;

  // What was added since the last mark() can no longer be undone.
  void end_batch() {
    size_ += added_.size();
    if (added_.capacity() > kKeptUndo) {
      std::vector<std::uint64_t>().swap(added_);
    } else {
      added_.clear();
    }
  }

  void resize(std::uint32_t bits) {
    bucket_bits_ = bits;
    buckets_ = std::size_t{1} << bits;
    counts_ = allocate_huge<std::uint8_t>(buckets_);
    std::fill_n(counts_.get(), buckets_, 0);
    slots_ = allocate_huge<Entry>(buckets_ * slots_per_bucket_);
    spill_.clear();
    spilled_ = 0;
  }

  // Moves every entry (none added since the last mark) into a new table of 2^bits buckets;
  // `touch` writes every page of its slots first (no page faults later).
  void rehash(std::uint32_t bits, bool touch) {
    const std::vector<Entry> all = entries();
    resize(bits);
    if (touch) {
      std::memset(static_cast<void*>(slots_.get()), 0,
                  buckets_ * slots_per_bucket_ * sizeof(Entry));
    }
    for (const Entry& e : all) add(e);
    added_.clear();
  }

  void append_bucket(std::size_t b, std::vector<Entry>& out) const {
    for_each_in_bucket(b, [&out](const Entry& e) { out.push_back(e); });
  }
  // Calls fn(e); whether a walk goes on (what fn returns, when it returns bool).
  template <typename Fn>
  static bool keep_going(Fn& fn, const Entry& e) {
    if constexpr (std::is_same_v<decltype(fn(e)), bool>) {
      return fn(e);
    } else {
      fn(e);
      return true;
    }
  }
  // Every entry, in bucket order (insertion order within a bucket).
  std::vector<Entry> entries() const {
    std::vector<Entry> out;
    out.reserve(size());
    for (std::size_t b = 0; b < buckets_; ++b) append_bucket(b, out);
    return out;
  }

  // The fewest bucket bits (up to max_bucket_bits_) at which `entries` fill at most half the
  // slots.
  std::uint32_t bits_for(std::size_t entries) const {
    std::uint32_t bits = std::min(max_bucket_bits_, kMinBucketBits);
    while (bits < max_bucket_bits_ && entries > (std::size_t{1} << bits) * slots_per_bucket_ / 2) {
      ++bits;
    }
    return bits;
  }

  std::size_t bucket(std::uint64_t key) const {
    return bucket_bits_ == 0 ? 0 : key >> (64 - bucket_bits_);
  }
  std::uint32_t max_bucket_bits_;
  std::uint32_t slots_per_bucket_;
  std::uint64_t capacity_;
  std::uint32_t bucket_bits_ = 0;
  std::size_t buckets_ = 0;
  HugeArray<std::uint8_t> counts_;
  HugeArray<Entry> slots_;
  SpillMap spill_;
  std::size_t spilled_ = 0;
  std::vector<std::uint64_t> added_;
  std::size_t size_ = 0;  // entries before the last mark()
};

}  // namespace neardup
