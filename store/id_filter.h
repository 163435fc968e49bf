// A blocked Bloom filter over the id hashes in the `ids` column's runs (FORMAT.md), in memory.
//
// Most pages an index sees are new: their id hash is in no run, and without the filter every
// one of them costs a cache- and TLB-cold record in each run of the ids column. The
// filter answers "certainly absent" from one cache line (on huge pages where allowed); "maybe
// present" (about 1 % of absent hashes at the sized load) falls back to probing the runs.
// Contract: every hash add()ed is reported by may_contain() (no false negatives). It is never
// written to disk: Index::open rebuilds it from the runs, and a merge adds the merged delta.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace neardup {

class IdFilter {
 public:
  IdFilter() = default;
  // Sized for `capacity` hashes at kBitsPerHash bits each (at least one 2 MiB page).
  explicit IdFilter(std::uint64_t capacity) : capacity_(std::max<std::uint64_t>(capacity, 1)) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    std::size_t bytes = (capacity_ * kBitsPerHash / 8 + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, bytes);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure leaves 4 KiB pages
    std::fill_n(static_cast<std::uint64_t*>(p), bytes / 8, 0);
    words_.reset(static_cast<std::uint64_t*>(p));
    blocks_ = bytes / kBlockBytes;
  }

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t size() const { return size_; }

  void add(std::uint64_t hash) {
    std::uint64_t* block = block_of(hash);
    std::uint64_t g = hash * kMix;
    for (int i = 0; i < kProbes; ++i, g >>= 9) block[(g & 511) >> 6] |= 1ull << (g & 63);
    ++size_;
  }
  bool may_contain(std::uint64_t hash) const {
    if (blocks_ == 0) return true;
    const std::uint64_t* block = block_of(hash);
    std::uint64_t g = hash * kMix;
    for (int i = 0; i < kProbes; ++i, g >>= 9) {
      if (!(block[(g & 511) >> 6] & (1ull << (g & 63)))) return false;
    }
    return true;
  }
  void prefetch(std::uint64_t hash) const {
    if (blocks_ != 0) __builtin_prefetch(block_of(hash));
  }

  static constexpr std::uint64_t kBitsPerHash = 12;

 private:
  static constexpr std::size_t kBlockBytes = 64;  // one cache line: 512 bits
  static constexpr int kProbes = 6;
  static constexpr std::uint64_t kMix = 0x9E3779B97F4A7C15ull;  // odd: a bijection of the hash

  std::uint64_t* block_of(std::uint64_t hash) const {
    const auto b =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(hash) * blocks_) >> 64);
    return words_.get() + b * (kBlockBytes / 8);
  }

  struct Free {
    void operator()(std::uint64_t* p) const { std::free(p); }
  };
  std::uint64_t capacity_ = 0, size_ = 0, blocks_ = 0;
  std::unique_ptr<std::uint64_t[], Free> words_;
};

}  // namespace neardup
