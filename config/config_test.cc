#include "config/config.h"

#include <gtest/gtest.h>

namespace neardup {
TEST(Config, DefaultsAreValid) { EXPECT_TRUE(parse_config("").has_value()); }
}  // namespace neardup
