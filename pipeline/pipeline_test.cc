#include "pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <string>

namespace neardup {

TEST(Pipeline, EmptyBodyIsSkippedAsEmptyBody) {
  auto r = fingerprint_page("", "", Config{});
  ASSERT_TRUE(r.skip.has_value());
  EXPECT_EQ(r.skip->reason, "empty_body");
}

TEST(Pipeline, BodyOverLimitIsSkippedAsTooLargeBeforeAnyWork) {
  Config config;
  config.input.max_body_bytes = 10;
  auto r = fingerprint_page(std::string(11, 'a'), "", config);
  ASSERT_TRUE(r.skip.has_value());
  EXPECT_EQ(r.skip->reason, "too_large");
  EXPECT_TRUE(r.charset.empty());
}

TEST(Pipeline, ShortPageIsSkippedAsLowContent) {
  auto r = fingerprint_page("<html><body><p>Hello world.</p></body></html>", "", Config{});
  ASSERT_TRUE(r.skip.has_value());
  EXPECT_EQ(r.skip->reason, "low_content");
  EXPECT_EQ(r.fingerprint, 0u);
}

}  // namespace neardup
