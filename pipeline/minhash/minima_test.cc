#include "pipeline/minhash/minima.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "common/mix.h"

namespace neardup::minhash_internal {
namespace {

std::vector<std::uint64_t> random_words(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint64_t> words(n);
  for (auto& w : words) w = rng();
  return words;
}

// Whichever loop fold_minima takes here (the AVX-512 one on a CPU that has it) gives the
// portable loop's minima, for sketch lengths that are and are not whole blocks of eight and for
// minima that start anywhere (a second call continues the first).
TEST(FoldMinima, EqualsThePortableLoop) {
  std::mt19937_64 rng(42);
  for (std::size_t hashes : {1u, 7u, 8u, 13u, 64u, 128u, 131u, 256u}) {
    for (std::size_t count : {0u, 1u, 5u, 1000u}) {
      const auto salts = random_words(rng, hashes);
      const auto shingles = random_words(rng, count);
      std::vector<std::uint64_t> fast(hashes, std::numeric_limits<std::uint64_t>::max());
      std::vector<std::uint64_t> portable = fast;
      fold_minima(shingles, salts, fast);
      fold_minima_portable(shingles, salts, portable);
      ASSERT_EQ(fast, portable) << hashes << " hashes, " << count << " shingles";
      const auto more = random_words(rng, 17);
      fold_minima(more, salts, fast);
      fold_minima_portable(more, salts, portable);
      ASSERT_EQ(fast, portable) << hashes << " hashes, continued";
    }
  }
}

TEST(FoldMinima, IsTheMinimumOfMix64OfShingleXorSalt) {
  const std::vector<std::uint64_t> salts = {
      0, 1, 0xffffffffffffffffull, 0x8000000000000000ull, 5, 6, 7, 8, 9};
  const std::vector<std::uint64_t> shingles = {3, 0x123456789abcdefull, 0};
  std::vector<std::uint64_t> minima(salts.size(), std::numeric_limits<std::uint64_t>::max());
  fold_minima(shingles, salts, minima);
  for (std::size_t j = 0; j < salts.size(); ++j) {
    std::uint64_t expected = std::numeric_limits<std::uint64_t>::max();
    for (std::uint64_t s : shingles) expected = std::min(expected, mix64(s ^ salts[j]));
    EXPECT_EQ(minima[j], expected) << j;
  }
}

}  // namespace
}  // namespace neardup::minhash_internal
