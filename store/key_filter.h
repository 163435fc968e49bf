// A blocked Bloom filter over 64-bit keys, in memory: "certainly absent" from one cache line.
//
// Two uses, both 8 bits a key with 5 bits set (about 2.3 % of absent keys get through at the
// load a filter is sized for). The `ids` column keeps one over the id hashes in its runs, sized
// for twice them when built (8–16 bits an id): most pages an index sees are new, and without it
// every one costs a cache- and TLB-cold record in each ids run. Each run of an LSH band column
// has its own over the run's stored keys: most band keys of a page are in no run, and the filter
// spares their probes the run's cold record and the TLB miss that comes with a 64 KiB record
// anywhere in a file of gigabytes; a band column has a few runs (tiers of four, column.h), and a
// key its union filter lets through checks every run's, so what gets through is paid once per
// run (store/FORMAT.md).
// The table lives on huge pages where the kernel allows, so a check rarely misses the TLB.
// Keys must be spread evenly over their top bits (hashes, or a hash's top 40 bits), which choose
// the block; the bits within it come from all of the key's bits.
// Contract: every key add()ed is reported by may_contain() (no false negatives). It is never
// written to disk: the index rebuilds it from the runs, and a merge adds what it merged.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/mix.h"
#include "common/prefetch.h"
#include "store/huge_pages.h"

namespace neardup {

// BitsPerKey bits of table a key, Probes bits set a key (at most 7) in its one 512-bit block.
template <std::uint32_t BitsPerKey, int Probes>
class KeyFilter {
 public:
  static_assert(Probes >= 1 && Probes <= 7);
  static constexpr std::uint32_t kBitsPerKey = BitsPerKey;

  KeyFilter() = default;
  // Sized for `capacity` keys (at least one 2 MiB page).
  explicit KeyFilter(std::uint64_t capacity) : capacity_(std::max<std::uint64_t>(capacity, 1)) {
    const std::size_t bytes = (capacity_ * BitsPerKey / 8 + kHugePage - 1) / kHugePage * kHugePage;
    words_ = allocate_huge<std::uint64_t>(bytes / 8);
    std::fill_n(words_.get(), bytes / 8, 0);
    blocks_ = bytes / kBlockBytes;
  }

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t size() const { return size_; }
  std::size_t memory() const { return blocks_ * kBlockBytes; }

  void add(std::uint64_t key) {
    std::uint64_t* block = block_of(key);
    std::uint64_t g = mix64(key) * kMix;  // all of the key's bits (a narrow key's low 24 are 0)
    for (int i = 0; i < Probes; ++i, g >>= 9) block[(g & 511) >> 6] |= 1ull << (g & 63);
    ++size_;
  }
  bool may_contain(std::uint64_t key) const {
    if (blocks_ == 0) return true;
    const std::uint64_t* block = block_of(key);
    std::uint64_t g = mix64(key) * kMix;
    for (int i = 0; i < Probes; ++i, g >>= 9) {
      if (!(block[(g & 511) >> 6] & (1ull << (g & 63)))) return false;
    }
    return true;
  }
  // Asks for the line may_contain(key) reads and add(key) writes (common/prefetch.h: kept even
  // where asking is all a caller does).
  void prefetch(std::uint64_t key) const {
    if (blocks_ != 0) prefetch_line(block_of(key));
  }

 private:
  static constexpr std::size_t kBlockBytes = 64;                // one cache line: 512 bits
  static constexpr std::uint64_t kMix = 0x9E3779B97F4A7C15ull;  // odd: a bijection of the hash

  // The block: the key's place in the key space, so that keys added in ascending order (a
  // run's) fill the table front to back, at the speed of a sequential write.
  std::uint64_t* block_of(std::uint64_t key) const {
    const auto b =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(key) * blocks_) >> 64);
    return words_.get() + b * (kBlockBytes / 8);
  }

  std::uint64_t capacity_ = 0, size_ = 0, blocks_ = 0;
  HugeArray<std::uint64_t> words_;
};

// The two uses above. (The id filter kept 12 bits a key, 1.5 bytes a page more, for ≈ 1 %
// instead of 2.3 % at its full load: store/FORMAT.md.)
using IdFilter = KeyFilter<8, 5>;
using BandFilter = KeyFilter<8, 5>;

}  // namespace neardup
