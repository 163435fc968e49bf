// Elias–Fano coding of a record's sorted keys (Elias 1974, Fano 1971; as used for posting
// lists by Vigna, "Quasi-succinct indices", WSDM 2013).
//
// n sorted values x_0 = 0 <= x_1 <= ... <= x_{n-1} = range (a record's keys less its first) are
// split at `low` bits: the low parts are n fields of `low` bits; the high parts h_i = x_i >> low
// are written in unary, entry i as a 1 at bit h_i + i of the high part, so that the zeros before
// an entry's 1 are its high part and the ones before it its index. The high part is
// n + (range >> low) bits. With low = log2(range / n) an entry costs about low + 2 bits: a band
// key of a large run 15 bits where its fixed-width field takes 27 (store/FORMAT.md).
//
// A search for the first value >= x skips x >> low zeros, starting from a known entry (the
// record's fences are the high-part bits of evenly spaced entries: store/run.h), forward from
// one before it or back from one after it, whichever is nearer; a scan then reads each entry's
// low field and steps to the next 1. Fields are read with one unaligned 8-byte load
// each, so a region must be followed by at least 8 readable bytes (a record ends in 8 zero
// bytes).
#pragma once

#include <bit>
#include <cstdint>

#include "common/coding.h"
#include "store/near_scan.h"

namespace neardup::elias_fano {

// Bits of the low and high parts of n values spanning [0, range] split at `low` bits.
inline std::uint64_t size_bits(std::uint64_t n, std::uint64_t range, unsigned low) {
  return n * low + n + (range >> low);
}

// The split that makes them smallest: log2(range / n), or one more (at most 56, so that a low
// field fits one 8-byte load).
inline unsigned low_bits_for(std::uint64_t n, std::uint64_t range) {
  if (n == 0 || range / n == 0) return 0;
  const unsigned floor = static_cast<unsigned>(std::bit_width(range / n)) - 1;
  if (floor >= 56) return 56;
  return size_bits(n, range, floor + 1) < size_bits(n, range, floor) ? floor + 1 : floor;
}

// An entry: its index and the bit of its 1 in the high part.
struct Position {
  std::uint64_t index = 0;
  std::uint64_t bit = 0;
  std::uint64_t high() const { return bit - index; }  // the zeros before it
};

// Read access to the coded values. Contract: the regions hold a coding of at least one value
// written as above (entry 0 at bit 0) whose high part has `high_bits` bits, each region
// followed by 8 readable bytes; positions passed in are entries of it. A search that would
// pass the high part's end (a damaged record) returns a position whose index is kEnd, and a scan
// stops there, so that no read goes past the record.
class Reader {
 public:
  static constexpr std::uint64_t kEnd = UINT64_MAX;

  Reader(const char* low_region, const char* high_region, unsigned low, std::uint64_t high_bits)
      : low_(low_region), high_(high_region), low_bits_(low), high_bits_(high_bits) {}

  std::uint64_t value(Position p) const { return (p.high() << low_bits_) | low(p.index); }

  // The first entry whose high part is >= high, counted on from `from`: entry 0, or an entry
  // whose high part is below `high`. Contract: some entry has a high part >= high.
  // The zeros are counted a 64-bit word of the high part at a time (words from the region's
  // start, so one load a word), and the last one is found within its word by nth_one().
  Position seek_high(std::uint64_t high, Position from) const {
    std::uint64_t need = high - from.high();  // zeros still to pass
    if (need == 0) return at_next_one(from);
    if (from.bit >= high_bits_) return end();
    std::uint64_t word = from.bit / 64;
    std::uint64_t zeros = ~word_at(word) & (~std::uint64_t{0} << (from.bit % 64));
    while (true) {
      const auto count = static_cast<std::uint64_t>(std::popcount(zeros));
      if (count >= need) break;
      need -= count;
      if (++word * 64 >= high_bits_) return end();
      zeros = ~word_at(word);
    }
    const std::uint64_t bit = word * 64 + nth_one(zeros, static_cast<unsigned>(need - 1)) + 1;
    // `high` zeros lie before `bit`: the entry there or after is the one, index bit - high.
    return at_next_one(Position{.index = bit - high, .bit = bit});
  }

  // The same entry, counted back from `to`: an entry whose high part is >= high (a search from
  // the entry after it that is nearer than any before it: RunProbe). Contract: high > 0.
  Position seek_high_back(std::uint64_t high, Position to) const {
    if (to.bit == 0 || to.bit > high_bits_ || to.high() < high) return end();
    // The high-th zero lies before to.bit, with this many zeros from it up to to.bit.
    std::uint64_t need = to.high() - high + 1;
    std::uint64_t word = (to.bit - 1) / 64;
    const std::uint64_t bits = to.bit - word * 64;  // of the first word, below to.bit: 1 to 64
    std::uint64_t zeros = ~word_at(word) & (~std::uint64_t{0} >> (64 - bits));
    std::uint64_t count = static_cast<std::uint64_t>(std::popcount(zeros));
    while (count < need) {
      need -= count;
      if (word == 0) return end();
      zeros = ~word_at(--word);
      count = static_cast<std::uint64_t>(std::popcount(zeros));
    }
    const std::uint64_t bit = word * 64 + nth_one(zeros, static_cast<unsigned>(count - need)) + 1;
    return at_next_one(Position{.index = bit - high, .bit = bit});
  }

  // Calls fn(index, value) for the entries from p on, in order, while fn returns true and the
  // index is below n, reading the high part 56 bits at a time, so that a step to the next entry
  // waits only on bits already loaded (a scan of a range, or of a whole record from Position{}).
  // Stops early when the high part ends (a damaged record).
  template <typename Fn>
  void scan(Position p, std::uint64_t n, Fn&& fn) const {
    const std::uint64_t mask = (std::uint64_t{1} << low_bits_) - 1;  // low_bits_ <= 56
    std::uint64_t index = p.index, low_bit = p.index * low_bits_;
    for (std::uint64_t at = p.bit; index < n && at < high_bits_; at += 56) {
      std::uint64_t ones = bits56(at) & kMask56;
      if (high_bits_ - at < 56) ones &= (std::uint64_t{1} << (high_bits_ - at)) - 1;
      for (; ones != 0 && index < n; ones &= ones - 1, ++index, low_bit += low_bits_) {
        const std::uint64_t high = at + static_cast<std::uint64_t>(std::countr_zero(ones)) - index;
        const std::uint64_t low =
            (coding::decode_fixed64(low_ + low_bit / 8) >> (low_bit % 8)) & mask;
        if (!fn(index, (high << low_bits_) | low)) return;
      }
    }
  }
  // Calls fn(index, value) for the entries p.index <= i < end whose low part l leaves
  // (base + l) within k bits of `query` over the low parts' bits, in order, while fn returns
  // true. With base the record's first key, base + value is an entry's key, and the low bits of
  // base + l are that key's: an entry passed over differs from `query` in more than k of them.
  // Only the low parts are read for the others; the high part is counted on from p for the ones
  // passed to fn. Contract: p is entry p.index's position (or has index kEnd: nothing is read),
  // and end is at most the entries.
  // The low parts are searched by next_near (store/near_scan.h: eight at a time where the CPU
  // allows).
  template <typename Fn>
  void scan_near(Position p, std::uint64_t end, std::uint64_t base, std::uint64_t query, int k,
                 Fn&& fn) const {
    const LowParts parts{low_, low_bits_};
    for (std::uint64_t i = next_near(parts, p.index, end, base, query, k); i < end;
         i = next_near(parts, i + 1, end, base, query, k)) {
      p = advance(p, i);
      if (p.index == kEnd || !fn(i, (p.high() << low_bits_) | low(i))) return;
    }
  }

  // The position of entry `index`, counted on from `from`, an entry at or before it. Contract:
  // index is below the entries; a damaged record whose bits run out gives kEnd.
  Position advance(Position from, std::uint64_t index) const {
    if (index == from.index) return from;
    std::uint64_t need = index - from.index;  // ones after from's
    const std::uint64_t bit = from.bit + 1;
    if (bit >= high_bits_) return end();
    std::uint64_t word = bit / 64;
    std::uint64_t ones = word_at(word) & (~std::uint64_t{0} << (bit % 64));
    while (true) {
      const auto count = static_cast<std::uint64_t>(std::popcount(ones));
      if (count >= need) break;
      need -= count;
      if (++word * 64 >= high_bits_) return end();
      ones = word_at(word);
    }
    const std::uint64_t at = word * 64 + nth_one(ones, static_cast<unsigned>(need - 1));
    return at < high_bits_ ? Position{.index = index, .bit = at} : end();
  }

  // scan() of the first n entries, for every one of them.
  template <typename Fn>
  void for_each_value(std::uint64_t n, Fn&& fn) const {
    scan(Position{}, n, [&](std::uint64_t index, std::uint64_t value) {
      fn(index, value);
      return true;
    });
  }

  // The high part's byte where a search from `from` starts (for prefetching).
  const char* high_address(Position from) const { return high_ + from.bit / 8; }
  const char* low_address(std::uint64_t index) const { return low_ + index * low_bits_ / 8; }

 private:
  static constexpr std::uint64_t kMask56 = (std::uint64_t{1} << 56) - 1;

  // 56 bits of the high part from `bit` on.
  std::uint64_t bits56(std::uint64_t bit) const {
    return coding::decode_fixed64(high_ + bit / 8) >> (bit % 8);
  }
  // The high part's 64-bit word `word` (bits 64·word on). Contract: word·64 < high_bits_ (so
  // the load ends within the 8 readable bytes after the region).
  std::uint64_t word_at(std::uint64_t word) const {
    return coding::decode_fixed64(high_ + word * 8);
  }
  // The position of x's one of rank r (r = 0: its lowest). Contract: x has more than r ones.
  // The ones before each byte are summed in the bytes of one word; the byte is the first whose
  // sum passes r, and a few ones are cleared within it.
  static unsigned nth_one(std::uint64_t x, unsigned r) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
    std::uint64_t s = x - ((x >> 1) & 0x5555555555555555ull);
    s = (s & 0x3333333333333333ull) + ((s >> 2) & 0x3333333333333333ull);
    s = (s + (s >> 4)) & 0x0F0F0F0F0F0F0F0Full;  // each byte's ones
    const std::uint64_t through = s * kOnes;     // byte i: the ones of bytes 0..i (at most 64)
    // The bytes whose running sum is above r have their high bit set here.
    const std::uint64_t above = ((through | kHighs) - kOnes * (r + 1)) & kHighs;
    const auto byte = static_cast<unsigned>(std::countr_zero(above)) / 8;
    const unsigned before =
        byte == 0 ? 0 : static_cast<unsigned>((through >> (8 * byte - 8)) & 0xFF);
    std::uint64_t in_byte = (x >> (8 * byte)) & 0xFF;
    for (unsigned k = before; k < r; ++k) in_byte &= in_byte - 1;
    return 8 * byte + static_cast<unsigned>(std::countr_zero(in_byte));
  }
  Position end() const { return Position{.index = kEnd, .bit = high_bits_}; }
  // The first 1 at or after p.bit, which is entry p.index's.
  Position at_next_one(Position p) const {
    if (p.bit >= high_bits_) return end();
    std::uint64_t ones = bits56(p.bit) & kMask56;
    while (ones == 0) {
      p.bit += 56;
      if (p.bit >= high_bits_) return end();
      ones = bits56(p.bit) & kMask56;
    }
    p.bit += static_cast<std::uint64_t>(std::countr_zero(ones));
    return p.bit < high_bits_ ? p : end();
  }
  std::uint64_t low(std::uint64_t index) const {
    if (low_bits_ == 0) return 0;
    const std::uint64_t bit = index * low_bits_;
    return (coding::decode_fixed64(low_ + bit / 8) >> (bit % 8)) &
           ((std::uint64_t{1} << low_bits_) - 1);
  }

  const char* low_;
  const char* high_;
  unsigned low_bits_;
  std::uint64_t high_bits_;
};

}  // namespace neardup::elias_fano
