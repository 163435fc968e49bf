// A sorted run's filter, in memory: "certainly absent" from one cache line, so that a probe skips
// a run that holds nothing under its key. Two kinds, chosen per run by the column (column.h):
//
// - a blocked Bloom filter (BandFilter, key_filter.h) at 8 bits a key: a band run's, over its
//   stored keys, and a small table run's, over its keys' prefixes; a few percent of what is
//   absent gets through.
// - an exact bitmap of a table's prefixes, one bit for each of the 2^prefix_bits (a key's top
//   prefix_bits bits, what a table probe's range shares): a large table run's, chosen once it is
//   no larger than the Bloom filter would be, i.e. for a run of at least 2^prefix_bits / 8
//   entries at 8 bits a key. Nothing absent gets through, and its size does not grow with the
//   run: 2^prefix_bits / entries bits a key, 4 MiB for a table of 25 bits.
//
// Contract: every key add()ed is reported by may_contain() (no false negatives). A filter is never
// written to disk: the index rebuilds it from the runs, and a merge adds what it merged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "store/huge_pages.h"
#include "store/key_filter.h"

namespace neardup {

class RunFilter {
 public:
  // A Bloom filter sized for `capacity` keys.
  static std::unique_ptr<RunFilter> bloom(std::uint64_t capacity) {
    auto filter = std::unique_ptr<RunFilter>(new RunFilter);
    filter->bloom_ = BandFilter(capacity);
    return filter;
  }
  // A bitmap of the prefixes of prefix_bits bits, 1 to kMaxBitmapBits.
  static constexpr std::uint32_t kMaxBitmapBits = 40;
  static std::unique_ptr<RunFilter> bitmap(std::uint32_t prefix_bits) {
    auto filter = std::unique_ptr<RunFilter>(new RunFilter);
    filter->shift_ = 64 - prefix_bits;
    const std::size_t words = bitmap_words(prefix_bits);
    filter->words_ = allocate_huge<std::uint64_t>(words);
    std::fill_n(filter->words_.get(), words, 0);
    return filter;
  }
  // Bytes of a bitmap of prefix_bits bits (what bitmap() holds).
  static std::size_t bitmap_bytes(std::uint32_t prefix_bits) {
    return bitmap_words(prefix_bits) * 8;
  }

  bool exact() const { return shift_ != 0; }

  void add(std::uint64_t key) {
    if (!exact()) return bloom_.add(key);
    const std::uint64_t prefix = key >> shift_;
    words_[prefix >> 6] |= std::uint64_t{1} << (prefix & 63);
  }
  bool may_contain(std::uint64_t key) const {
    if (!exact()) return bloom_.may_contain(key);
    const std::uint64_t prefix = key >> shift_;
    return (words_[prefix >> 6] >> (prefix & 63)) & 1;
  }
  void prefetch(std::uint64_t key) const {
    if (!exact()) return bloom_.prefetch(key);
    __builtin_prefetch(&words_[(key >> shift_) >> 6]);
  }
  std::size_t memory() const { return exact() ? bitmap_bytes(64 - shift_) : bloom_.memory(); }

 private:
  RunFilter() = default;
  static std::size_t bitmap_words(std::uint32_t prefix_bits) {
    return std::max<std::size_t>(1, (std::size_t{1} << prefix_bits) / 64);
  }

  BandFilter bloom_;
  std::uint32_t shift_ = 0;  // a bitmap's: 64 - prefix_bits (0: a Bloom filter)
  HugeArray<std::uint64_t> words_;
};

}  // namespace neardup
