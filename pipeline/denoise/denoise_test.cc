#include "pipeline/denoise/denoise.h"

#include <gtest/gtest.h>

namespace neardup {
TEST(Denoise, JoinedTextSeparatesParagraphsWithNewlines) {
  MainText m;
  m.paragraphs = {"a", "b"};
  EXPECT_EQ(joined_text(m), "a\nb");
}
}  // namespace neardup
