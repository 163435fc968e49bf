// The in-memory part of an index column: entries of documents newer than the column's runs.
//
// Entries are bucketed by their top `bucket_bits` bits into fixed slots (twice the expected
// bucket size when the delta is full; the rare overflow goes to a per-bucket spill vector), so
// a prefix probe (a table's prefix is at least bucket_bits wide) reads one contiguous run of
// memory, usually one or two cache lines. A Delta is never written to disk as such: the docs
// table is its log, and Index::open rebuilds it from the documents past the column's
// watermark. Additions since mark() can be undone (an aborted batch transaction).
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

#include "store/run.h"

namespace neardup {

class Delta {
 public:
  // capacity: the entries the delta holds before it is merged (sizes the slots).
  Delta(std::uint32_t bucket_bits, std::uint64_t capacity)
      : bucket_bits_(bucket_bits),
        slots_per_bucket_(static_cast<std::uint32_t>(
            std::clamp<std::uint64_t>(2 * (capacity >> bucket_bits), 4, 64))),
        buckets_(std::size_t{1} << bucket_bits),
        counts_(allocate<std::uint8_t>(buckets_)),
        slots_(allocate<Entry>(buckets_ * slots_per_bucket_)) {
    std::fill_n(counts_.get(), buckets_, 0);
  }

  void add(const Entry& entry) {
    std::size_t b = bucket(entry.key);
    if (counts_[b] < slots_per_bucket_) {
      slots_[b * slots_per_bucket_ + counts_[b]++] = entry;
    } else {
      spill_[b].push_back(entry);
    }
    added_.push_back(entry.key);
  }
  // Starts loading the bucket of key into the cache (probes of several columns overlap).
  void prefetch(std::uint64_t key) const {
    __builtin_prefetch(&counts_[bucket(key)]);
    __builtin_prefetch(&slots_[bucket(key) * slots_per_bucket_]);
  }
  // Calls fn(entry) for every entry with lo <= key <= hi; lo and hi share the top bucket_bits.
  template <typename Fn>
  void scan(std::uint64_t lo, std::uint64_t hi, Fn&& fn) const {
    std::size_t b = bucket(lo);
    const Entry* slots = &slots_[b * slots_per_bucket_];
    for (std::uint32_t i = 0; i < counts_[b]; ++i) {
      if (slots[i].key >= lo && slots[i].key <= hi) fn(slots[i]);
    }
    if (counts_[b] == slots_per_bucket_ && !spill_.empty()) {
      if (auto it = spill_.find(b); it != spill_.end()) {
        for (const Entry& e : it->second) {
          if (e.key >= lo && e.key <= hi) fn(e);
        }
      }
    }
  }
  std::size_t size() const { return size_ + added_.size(); }

  // Starts a batch: undo() removes everything added after the last mark().
  void mark() {
    size_ += added_.size();
    added_.clear();
  }
  void undo() {
    for (auto key = added_.rbegin(); key != added_.rend(); ++key) {
      std::size_t b = bucket(*key);
      if (auto it = spill_.find(b); it != spill_.end()) {
        it->second.pop_back();
        if (it->second.empty()) spill_.erase(it);
      } else {
        --counts_[b];
      }
    }
    added_.clear();
  }

  // All entries in ascending (key, doc) order.
  std::vector<Entry> sorted() const {
    std::vector<Entry> out;
    out.reserve(size());
    for (std::size_t b = 0; b < buckets_; ++b) {
      std::size_t from = out.size();
      out.insert(out.end(), &slots_[b * slots_per_bucket_],
                 &slots_[b * slots_per_bucket_ + counts_[b]]);
      if (auto it = spill_.find(b); it != spill_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
      }
      std::sort(out.begin() + static_cast<long>(from), out.end());
    }
    return out;
  }
  void clear() {
    std::fill_n(counts_.get(), buckets_, 0);
    spill_.clear();
    added_.clear();
    size_ = 0;
  }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  template <typename T>
  using Array = std::unique_ptr<T[], Free>;
  // Counts and slots on 2 MiB pages where the kernel allows (transparent huge pages on
  // request): probes land anywhere in tens of MiB, and 4 KiB pages would cost a TLB miss each.
  template <typename T>
  static Array<T> allocate(std::size_t n) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    std::size_t bytes = (n * sizeof(T) + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, bytes);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure leaves 4 KiB pages
    return Array<T>(static_cast<T*>(p));
  }

  std::size_t bucket(std::uint64_t key) const {
    return bucket_bits_ == 0 ? 0 : key >> (64 - bucket_bits_);
  }
  std::uint32_t bucket_bits_;
  std::uint32_t slots_per_bucket_;
  std::size_t buckets_;
  Array<std::uint8_t> counts_;
  Array<Entry> slots_;
  std::unordered_map<std::size_t, std::vector<Entry>> spill_;
  std::vector<std::uint64_t> added_;
  std::size_t size_ = 0;  // entries before the last mark()
};

}  // namespace neardup
