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

TEST(Pipeline, StageTimesAreFilledForTheStagesAPageReaches) {
  std::string body = "<html><body><article>";
  for (int i = 0; i < 40; ++i) body += "<p>word" + std::to_string(i) + " more text here.</p>";
  body += "</article></body></html>";
  StageTimes times;
  auto r = fingerprint_page(body, "text/html", Config{}, {.times = &times});
  ASSERT_FALSE(r.skip.has_value());
  EXPECT_TRUE(times.decode && times.denoise && times.features && times.fingerprint);

  StageTimes skipped;
  auto s = fingerprint_page("<p>Hello world.</p>", "text/html", Config{}, {.times = &skipped});
  ASSERT_TRUE(s.skip.has_value());
  EXPECT_TRUE(skipped.decode && skipped.denoise && skipped.features);
  EXPECT_FALSE(skipped.fingerprint.has_value());

  StageTimes empty;
  fingerprint_page("", "", Config{}, {.times = &empty});
  EXPECT_FALSE(empty.decode.has_value());
}

}  // namespace neardup
