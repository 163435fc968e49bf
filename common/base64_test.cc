#include "common/base64.h"

#include <gtest/gtest.h>

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

}  // namespace neardup
