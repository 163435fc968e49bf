// Elias–Fano coding of sorted values: every value read back in order, and a search for each
// high part from every earlier entry lands on the first entry at or past it, across gaps longer
// than a load and with no low bits at all.
#include "store/elias_fano.h"

#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <string>
#include <vector>

namespace neardup::elias_fano {
namespace {

struct Coded {
  std::string bytes;
  std::size_t high_at = 0;
  unsigned low = 0;
  std::uint64_t high_bits = 0;
  Reader reader() const { return Reader(bytes.data(), bytes.data() + high_at, low, high_bits); }
};

// The values (sorted, the first 0) coded as store/run.cc codes a record's keys.
Coded code(const std::vector<std::uint64_t>& values, unsigned low) {
  const std::uint64_t n = values.size(), range = values.back();
  Coded c;
  c.low = low;
  c.high_at = (n * low + 7) / 8;
  c.high_bits = size_bits(n, range, low) - n * low;
  c.bytes.assign(c.high_at + (size_bits(n, range, low) - n * low + 7) / 8 + 8, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    for (unsigned b = 0; b < low; ++b) {
      const std::uint64_t bit = i * low + b;
      if ((values[i] >> b) & 1)
        c.bytes[bit / 8] = static_cast<char>(c.bytes[bit / 8] | (1 << (bit % 8)));
    }
    const std::uint64_t bit = (values[i] >> low) + i;
    char& byte = c.bytes[c.high_at + bit / 8];
    byte = static_cast<char>(byte | (1 << (bit % 8)));
  }
  return c;
}

// 2,000 sorted values from 0 (repeats, small steps, and gaps of hundreds of empty high parts),
// coded, and each entry's position: its 1 is at its high part plus its index.
struct Sample {
  std::vector<std::uint64_t> values;
  Coded coded;
  std::vector<Position> at;
};

Sample sample_of(std::mt19937_64& rng, unsigned low) {
  Sample s;
  s.values.push_back(0);
  for (int i = 1; i < 2000; ++i) {
    const int kind = static_cast<int>(rng() % 10);
    const std::uint64_t step = kind < 3   ? 0
                               : kind < 9 ? rng() % (std::uint64_t{4} << low)
                                          : (rng() % 500) << low;
    s.values.push_back(s.values.back() + step);
  }
  s.coded = code(s.values, low);
  for (std::size_t i = 0; i < s.values.size(); ++i) s.at.push_back({i, (s.values[i] >> low) + i});
  return s;
}

TEST(EliasFano, TheSplitMakesTheCodingSmallest) {
  EXPECT_EQ(low_bits_for(1, 0), 0u);
  EXPECT_EQ(low_bits_for(100, 50), 0u);
  for (std::uint64_t n : {2u, 100u, 14000u}) {
    for (std::uint64_t range : {n, 7 * n, std::uint64_t{1} << 26, std::uint64_t{1} << 40}) {
      const unsigned best = low_bits_for(n, range);
      for (unsigned low = 0; low <= 56; ++low) {
        EXPECT_LE(size_bits(n, range, best), size_bits(n, range, low)) << n << " " << range;
      }
    }
  }
}

TEST(EliasFano, ValuesReadInOrderAndEverySearchLandsOnTheFirstAtOrPast) {
  std::mt19937_64 rng(11);
  for (unsigned low : {0u, 3u, 13u}) {
    const Sample sample = sample_of(rng, low);
    const std::vector<std::uint64_t>& values = sample.values;
    const std::vector<Position>& at = sample.at;
    const Reader reader = sample.coded.reader();
    std::size_t visited = 0;
    reader.for_each_value(values.size(), [&](std::uint64_t i, std::uint64_t value) {
      ASSERT_EQ(i, visited);
      EXPECT_EQ(value, values[i]) << low << " " << i;
      EXPECT_EQ(reader.value(at[i]), values[i]) << low << " " << i;
      ++visited;
    });
    EXPECT_EQ(visited, values.size());
    // A scan from any entry reads on from it, and stops where its callback says or at n.
    for (int scan = 0; scan < 200; ++scan) {
      const std::size_t from = rng() % values.size();
      const std::size_t n = from + rng() % (values.size() - from) + 1;
      const std::size_t stop = from + rng() % (n - from + 5);  // may lie past n
      std::size_t next = from;
      reader.scan(at[from], n, [&](std::uint64_t i, std::uint64_t value) {
        EXPECT_EQ(i, next);
        EXPECT_EQ(value, values[i]) << low << " " << i;
        ++next;
        return i < stop;
      });
      EXPECT_EQ(next, std::min(n, stop + 1)) << from << " " << n << " " << stop;
    }
    for (int probe = 0; probe < 3000; ++probe) {
      const std::uint64_t high = rng() % ((values.back() >> low) + 1);
      std::size_t want = 0;
      while ((values[want] >> low) < high) ++want;
      // From entry 0 and from the last entry below it.
      EXPECT_EQ(reader.seek_high(high, Position{}).index, want);
      if (want > 0 && high > 0) {
        const Position from = at[static_cast<std::size_t>(rng() % want)];
        const Position got = reader.seek_high(high, from);
        EXPECT_EQ(got.index, want);
        EXPECT_EQ(got.bit, at[want].bit);
      }
      // Back from the entry itself and from a later one.
      if (high > 0) {
        const std::size_t to = want + rng() % (values.size() - want);
        for (std::size_t from_entry : {want, to}) {
          const Position back = reader.seek_high_back(high, at[from_entry]);
          EXPECT_EQ(back.index, want) << low << " " << high << " " << from_entry;
          EXPECT_EQ(back.bit, at[want].bit);
        }
      }
    }
  }
}

// A scan near a query calls back exactly the entries whose low bits, added to the base, lie
// within k of the query's, with their values, and stops where the callback says; advance() lands
// on any later entry. Low parts of up to 28 bits are read two at a time, wider ones one by one.
TEST(EliasFano, AScanNearAQueryPassesOnExactlyTheEntriesWithinKOfItsLowBits) {
  std::mt19937_64 rng(5);
  for (unsigned low : {0u, 13u, 21u, 28u, 29u, 40u}) {
    const Sample sample = sample_of(rng, low);
    const std::vector<std::uint64_t>& values = sample.values;
    const std::vector<Position>& at = sample.at;
    const Reader reader = sample.coded.reader();
    const std::uint64_t mask = (std::uint64_t{1} << low) - 1;
    for (int scan = 0; scan < 300; ++scan) {
      const std::size_t from = rng() % values.size();
      const std::size_t end = from + rng() % (values.size() - from + 1);
      const std::size_t to = from + rng() % (values.size() - from);
      EXPECT_EQ(reader.advance(at[from], to).bit, at[to].bit) << low << " " << from << " " << to;
      const std::uint64_t base = rng(), k = rng() % 5;
      // A query near some entry's low bits, so that a few pass.
      const std::uint64_t query = (base + values[to]) ^ (std::uint64_t{1} << (rng() % 64));
      std::vector<std::uint64_t> want;
      for (std::size_t i = from; i < end; ++i) {
        if (std::popcount(((base + (values[i] & mask)) ^ query) & mask) <= static_cast<int>(k)) {
          want.push_back(i);
        }
      }
      std::vector<std::uint64_t> got;
      reader.scan_near(at[from], end, base, query, static_cast<int>(k),
                       [&](std::uint64_t i, std::uint64_t value) {
                         EXPECT_EQ(value, values[i]) << low << " " << i;
                         got.push_back(i);
                         return true;
                       });
      EXPECT_EQ(got, want) << low << " " << from << " " << end;
      if (low == 0) {
        EXPECT_EQ(got.size(), end - from);  // no low bits: every entry passes
      }
      // A callback that ends the scan at its n-th entry (n >= 1) is given no more.
      if (want.empty()) continue;
      const std::size_t n = 1 + rng() % want.size();
      got.clear();
      reader.scan_near(at[from], end, base, query, static_cast<int>(k),
                       [&](std::uint64_t i, std::uint64_t) {
                         got.push_back(i);
                         return got.size() < n;
                       });
      EXPECT_EQ(got, std::vector<std::uint64_t>(want.begin(), want.begin() + n)) << low;
    }
  }
}

// A damaged high part (its bits all 0, or all 1) never sends a search or a scan past it.
TEST(EliasFano, ADamagedHighPartEndsTheSearchAtItsEnd) {
  std::vector<std::uint64_t> values{0};
  for (int i = 1; i < 500; ++i) values.push_back(values.back() + 37);
  for (char fill : {'\0', '\xff'}) {
    Coded coded = code(values, 4);
    const std::size_t high_bytes = (coded.high_bits + 7) / 8;
    std::fill_n(coded.bytes.begin() + static_cast<std::ptrdiff_t>(coded.high_at), high_bytes, fill);
    const Reader reader = coded.reader();
    std::size_t visited = 0;
    reader.for_each_value(values.size(), [&](std::uint64_t, std::uint64_t) { ++visited; });
    EXPECT_EQ(visited, fill == '\0' ? 0u : std::min<std::size_t>(coded.high_bits, values.size()));
    const Position sought = reader.seek_high(values.back() >> 4, Position{});
    if (fill == '\0') {
      EXPECT_EQ(sought.index, Reader::kEnd);
    }
    EXPECT_LE(sought.bit, coded.high_bits);
    // Back from the last entry's place: all zeros hold no entry, all ones too many.
    const Position last{values.size() - 1, (values.back() >> 4) + values.size() - 1};
    const Position back = reader.seek_high_back(values[values.size() / 2] >> 4, last);
    if (fill == '\0') {
      EXPECT_EQ(back.index, Reader::kEnd);
    }
    EXPECT_LE(back.bit, coded.high_bits);
  }
}

}  // namespace
}  // namespace neardup::elias_fano
