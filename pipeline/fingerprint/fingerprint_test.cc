#include "pipeline/fingerprint/fingerprint.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

namespace neardup {

TEST(Fingerprint, SingleFeatureFingerprintIsItsHash) {
  std::vector<Feature> features{{0x9f3a0c1d22e4b807ull, 1.0}};
  EXPECT_EQ(simhash(features), 0x9f3a0c1d22e4b807ull);
}

TEST(Fingerprint, HeavierFeatureWinsEveryContestedBit) {
  std::vector<Feature> features{{0xFFFF0000FFFF0000ull, 3.0}, {0x0000FFFF0000FFFFull, 1.0}};
  EXPECT_EQ(simhash(features), 0xFFFF0000FFFF0000ull);
}

TEST(Fingerprint, TiedVoteLeavesBitZero) {
  std::vector<Feature> features{{0xFFull, 1.0}, {0x00ull, 1.0}};
  EXPECT_EQ(simhash(features), 0u);
}

// The plain per-bit vote (with a branch per bit), as simhash() computed it before it was made
// branch-free: the two must agree on every input.
std::uint64_t reference_simhash(const std::vector<Feature>& features) {
  std::array<double, 64> votes{};
  for (const Feature& f : features) {
    for (int bit = 0; bit < 64; ++bit) votes[bit] += ((f.hash >> bit) & 1) ? f.weight : -f.weight;
  }
  std::uint64_t fingerprint = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (votes[bit] > 0) fingerprint |= std::uint64_t{1} << bit;
  }
  return fingerprint;
}

TEST(Fingerprint, BranchFreeVoteEqualsThePlainVote) {
  std::mt19937_64 rng(7);
  for (int page = 0; page < 2000; ++page) {
    std::vector<Feature> features(rng() % 400);
    for (Feature& f : features) {
      f.hash = rng();
      // tf, log_tf and binary weights: small integers, logs, ones; ties included.
      switch (rng() % 3) {
        case 0: f.weight = static_cast<double>(1 + rng() % 5); break;
        case 1: f.weight = 1 + std::log(static_cast<double>(1 + rng() % 9)); break;
        default: f.weight = 1; break;
      }
    }
    ASSERT_EQ(simhash(features), reference_simhash(features)) << "page " << page;
  }
}

TEST(Fingerprint, EmptyFeaturesGiveZero) { EXPECT_EQ(simhash({}), 0u); }

// Whichever loop simhash_votes takes here (the AVX-512 one on a CPU that has it) sums the votes
// bit for bit as the portable loop does, for weights whose sums round (shares of paragraphs,
// tf counts, tiny and huge) and for votes that cancel out.
TEST(Fingerprint, VotesEqualThePortableLoopBitForBit) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> share(0.0, 1.0);
  for (std::size_t count : {0u, 1u, 2u, 7u, 100u, 5000u}) {
    std::vector<Feature> features;
    for (std::size_t i = 0; i < count; ++i) {
      const double weight = i % 5 == 0   ? static_cast<double>(1 + rng() % 4)
                            : i % 5 == 1 ? share(rng) * 1e-12
                            : i % 5 == 2 ? share(rng) * 1e12
                                         : share(rng) / 24;
      features.push_back({rng(), weight});
    }
    // A feature and its complement: votes that cancel to exactly zero.
    features.push_back({0x0123456789abcdefull, 0.375});
    features.push_back({~0x0123456789abcdefull, 0.375});
    const auto fast = fingerprint_internal::simhash_votes(features);
    const auto portable = fingerprint_internal::simhash_votes_portable(features);
    for (int bit = 0; bit < 64; ++bit) {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(fast[bit]),
                std::bit_cast<std::uint64_t>(portable[bit]))
          << count << " features, bit " << bit;
    }
  }
}

TEST(Fingerprint, HammingDistanceCountsDifferingBits) {
  EXPECT_EQ(hamming_distance(0, 0), 0);
  EXPECT_EQ(hamming_distance(0, ~0ull), 64);
  EXPECT_EQ(hamming_distance(0b1011, 0b0001), 2);
}

TEST(Fingerprint, HexRoundTripsAndRejectsMalformed) {
  EXPECT_EQ(fingerprint_hex(0x9f3a0c1d22e4b807ull), "9f3a0c1d22e4b807");
  EXPECT_EQ(fingerprint_hex(1), "0000000000000001");
  EXPECT_EQ(parse_fingerprint_hex("9f3a0c1d22e4b807"), 0x9f3a0c1d22e4b807ull);
  EXPECT_FALSE(parse_fingerprint_hex("9f3a").has_value());
  EXPECT_FALSE(parse_fingerprint_hex("9f3a0c1d22e4b80z").has_value());
}

}  // namespace neardup
