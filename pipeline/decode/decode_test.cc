#include "pipeline/decode/decode.h"

#include <gtest/gtest.h>

namespace neardup {
TEST(Decode, EmptyBodyIsSkipped) {
  EXPECT_FALSE(decode("", "", DecodeConfig{}).has_value());
}
}  // namespace neardup
