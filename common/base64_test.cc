#include "common/base64.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace neardup {

TEST(Base64, RoundTripsEveryLengthModuloThree) {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    auto decoded = base64_decode(base64_encode(s));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, s);
  }
}

TEST(Base64, DecodesKnownVectorIgnoringWhitespace) {
  auto decoded = base64_decode("aGVs\nbG8=");
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(*decoded, "hello");
}

TEST(Base64, RejectsBadCharacterNamingPosition) {
  auto decoded = base64_decode("aGV*bG8=");
  ASSERT_FALSE(decoded.has_value());
  EXPECT_NE(decoded.error().find("position 3"), std::string::npos);
}

TEST(Base64, RejectsTruncatedInput) { EXPECT_FALSE(base64_decode("a").has_value()); }

// One character at a time, as base64_decode did before its fast paths (four characters, and 64
// on a CPU with AVX-512 VBMI): they must agree on every input, valid or not.
std::expected<std::string, std::string> reference_decode(std::string_view input) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  std::size_t padding = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const char c = input[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    const std::size_t value = alphabet.find(c);
    if (value == std::string::npos || padding > 0) {
      return std::unexpected("invalid base64 character at position " + std::to_string(i));
    }
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  if (bits >= 6 || padding > 2) return std::unexpected("truncated base64 input");
  return out;
}

TEST(Base64, FastPathAgreesWithOneCharacterAtATime) {
  std::mt19937 rng(11);
  const std::string noise = "AZaz09+/= \n*-\x80\xC3";
  for (int round = 0; round < 20000; ++round) {
    std::string bytes(rng() % (round % 2 ? 40 : 400), '\0');
    for (char& b : bytes) b = static_cast<char>(rng());
    std::string text = base64_encode(bytes);
    for (int edits = rng() % 3; edits > 0 && !text.empty(); --edits) {
      text.insert(text.begin() + static_cast<long>(rng() % text.size()), noise[rng() % noise.size()]);
    }
    if (rng() % 4 == 0 && !text.empty()) text.pop_back();
    EXPECT_EQ(base64_decode(text), reference_decode(text)) << text;
  }
}

}  // namespace neardup
