#include "pipeline/fingerprint/fingerprint.h"

#include <gtest/gtest.h>

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

TEST(Fingerprint, EmptyFeaturesGiveZero) { EXPECT_EQ(simhash({}), 0u); }

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
