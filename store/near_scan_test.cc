// next_near's forms against brute force, at every low part width and from any entry.
#include "store/near_scan.h"

#include <gtest/gtest.h>

#include <bit>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace neardup {
namespace {

// n low parts of w bits packed as Elias–Fano records pack them, with 8 bytes of slack.
std::string packed(const std::vector<std::uint64_t>& lows, unsigned w) {
  std::string bytes((lows.size() * w + 7) / 8 + 8, '\0');
  for (std::size_t i = 0; i < lows.size(); ++i) {
    for (unsigned b = 0; b < w; ++b) {
      if ((lows[i] >> b) & 1) {
        const std::size_t bit = i * w + b;
        bytes[bit / 8] = static_cast<char>(bytes[bit / 8] | (1 << (bit % 8)));
      }
    }
  }
  return bytes;
}

// Every form there is here: the scalar one, the AVX-512 one where the CPU has it, and the one
// chosen.
std::vector<std::pair<std::string, NextNearFn>> forms() {
  std::vector<std::pair<std::string, NextNearFn>> all{{"scalar", next_near_scalar},
                                                      {"chosen", next_near}};
  if (NextNearFn avx512 = next_near_avx512()) all.emplace_back("avx512", avx512);
  return all;
}

TEST(NextNear, EveryFormFindsTheFirstEntryWithinKAsBruteForceDoes) {
  std::mt19937_64 rng(47);
  std::size_t found = 0;
  for (unsigned w : {0u, 1u, 7u, 12u, 13u, 20u, 21u, 28u, 29u, 40u, 56u}) {
    const std::uint64_t mask = (std::uint64_t{1} << w) - 1;
    for (int round = 0; round < 40; ++round) {
      const std::size_t n = rng() % 300;
      const std::uint64_t query = rng(), base = rng();
      std::vector<std::uint64_t> lows(n);
      for (std::uint64_t& low : lows) {
        low = rng() & mask;
        // Some near the query: its low bits less the base, a bit or two flipped.
        if (rng() % 8 == 0) low = ((query ^ (std::uint64_t{1} << (rng() % 64))) - base) & mask;
      }
      const std::string bytes = packed(lows, w);
      const LowParts parts{bytes.data(), w};
      for (int k : {-1, 0, 1, 3}) {
        const std::size_t from = n == 0 ? 0 : rng() % (n + 1);
        const std::size_t end = from + rng() % (n - from + 1);
        std::uint64_t want = end;
        for (std::size_t i = from; i < end; ++i) {
          if (std::popcount(((base + lows[i]) ^ query) & mask) <= k) {
            want = i;
            break;
          }
        }
        found += want < end;
        for (const auto& [name, form] : forms()) {
          EXPECT_EQ(form(parts, from, end, base, query, k), want)
              << name << " w " << w << " k " << k << " from " << from << " end " << end;
        }
      }
    }
  }
  EXPECT_GT(found, 200u);  // the entries near the query were found, not only "none"
  // From past the end (a scan from a damaged record's end position): none, nothing read.
  for (const auto& [name, form] : forms()) {
    EXPECT_EQ(form(LowParts{nullptr, 21}, ~std::uint64_t{0}, 100, 0, 0, 3), 100u) << name;
  }
}

// The form chosen is the AVX-512 one wherever the CPU has it.
TEST(NextNear, TheAvx512FormIsChosenWhereTheCpuHasIt) {
  EXPECT_EQ(next_near_name(), next_near_avx512() != nullptr ? "avx512" : "scalar");
  std::cout << "next_near: " << next_near_name() << "\n";
}

}  // namespace
}  // namespace neardup
