// The inner loop of a table probe: the next entry of an Elias–Fano record whose low part could
// lie within k bits of a query (store/elias_fano.h, Reader::scan_near). A table's prefix bucket
// holds hundreds of entries a page at tens of millions of pages, and almost all of them are
// passed over here on their low parts alone, so this is where a probe's time grows with the
// store.
//
// Two forms, the same answers: one entry at a time (any x86-64 or other CPU), and eight at a
// time with AVX-512 (the F, BW and VPOPCNTDQ extensions: AMD Zen 4, Intel Ice Lake and later),
// chosen once, at start, from what the CPU reports (NEARDUP_NEAR_SCAN=scalar forces the first).
#pragma once

#include <cstdint>
#include <string_view>

namespace neardup {

// The low parts: entry i's is the w bits (1 <= w <= 56) at bit i * w of `low` (the first bit
// of a byte its least significant), and the bytes from each entry's first byte to 8 past it
// are readable (a record's slack pads its last).
struct LowParts {
  const char* low;
  unsigned w;
};

// The first index i with from <= i < end whose low part l leaves base + l within k bits of
// `query` over the low w bits (popcount(((base + l) ^ query) & (2^w - 1)) <= k); end if none.
// In the form chosen at start.
std::uint64_t next_near(LowParts parts, std::uint64_t from, std::uint64_t end, std::uint64_t base,
                        std::uint64_t query, int k);
// The name of the form in use: "avx512" or "scalar".
std::string_view next_near_name();

// Each form by itself, for tests: the AVX-512 one is null where the CPU or the compiler has
// none.
using NextNearFn = std::uint64_t (*)(LowParts parts, std::uint64_t from, std::uint64_t end,
                                     std::uint64_t base, std::uint64_t query, int k);
std::uint64_t next_near_scalar(LowParts parts, std::uint64_t from, std::uint64_t end,
                               std::uint64_t base, std::uint64_t query, int k);
NextNearFn next_near_avx512();

}  // namespace neardup
