// spill_map: the entries a Delta's full buckets overflow into, by bucket number.
//
// A bucket overflows when more of a batch's keys land in it than it has slots, which copies
// of one page do at once (their table and band keys are equal, so no growth of the table
// spreads them). The map is an open-addressing table of (bucket, list) with linear probing,
// a power of two in size and at most half full: a lookup is a multiply and usually one cache
// line, where std::unordered_map divides by a prime and follows a node pointer. Lists are
// never removed before clear(); a Delta's undo() leaves them empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "store/run.h"

namespace neardup {

class SpillMap {
 public:
  // The list of bucket b, or nullptr when it has none.
  const std::vector<Entry>* find(std::size_t b) const {
    if (lists_.empty()) return nullptr;
    for (std::size_t i = home(b);; i = (i + 1) & mask_) {
      if (slots_[i].bucket_plus_one == 0) return nullptr;
      if (slots_[i].bucket_plus_one == b + 1) return &lists_[slots_[i].list];
    }
  }
  std::vector<Entry>* find(std::size_t b) {
    return const_cast<std::vector<Entry>*>(static_cast<const SpillMap*>(this)->find(b));
  }
  // The list of bucket b, added empty when it has none.
  std::vector<Entry>& operator[](std::size_t b) {
    if (2 * (lists_.size() + 1) > slots_.size()) grow();
    std::size_t i = home(b);
    for (; slots_[i].bucket_plus_one != 0; i = (i + 1) & mask_) {
      if (slots_[i].bucket_plus_one == b + 1) return lists_[slots_[i].list];
    }
    slots_[i] = Slot{b + 1, lists_.size()};
    return lists_.emplace_back();
  }
  // Whether no bucket has a list (not even an emptied one).
  bool empty() const { return lists_.empty(); }
  void clear() {
    slots_.clear();
    lists_.clear();
    mask_ = 0;
  }
  // Calls fn(bucket, list) for every bucket with a list, in no particular order.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const Slot& slot : slots_) {
      if (slot.bucket_plus_one != 0) fn(slot.bucket_plus_one - 1, lists_[slot.list]);
    }
  }

 private:
  struct Slot {
    std::size_t bucket_plus_one = 0;  // 0: free
    std::size_t list = 0;             // into lists_
  };
  static constexpr std::size_t kMinSlots = 16;

  std::size_t home(std::size_t b) const {
    return static_cast<std::size_t>((b * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? kMinSlots : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.bucket_plus_one == 0) continue;
      std::size_t i = home(slot.bucket_plus_one - 1);
      while (slots_[i].bucket_plus_one != 0) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  std::vector<std::vector<Entry>> lists_;
  std::size_t mask_ = 0;
};

}  // namespace neardup
