#include "pipeline/features/features.h"

#include <gtest/gtest.h>

namespace neardup {
TEST(Features, EmptyTextHasNoFeatures) {
  EXPECT_TRUE(extract_features("", FeaturesConfig{}, 0).empty());
}
}  // namespace neardup
