#include "cli/progress.h"

#include <gtest/gtest.h>

namespace neardup::cli {
namespace {

TEST(FormatProgress, WithAKnownSizeStartsWithTheShareAndEndsWithTheTimeLeft) {
  EXPECT_EQ(format_progress({.fraction = 0.375,
                             .counts = "7420 pages  3100 unique",
                             .rate = 812.4,
                             .unit = "pages",
                             .eta_seconds = 21.2}),
            "37%  7420 pages  3100 unique  812 pages/s  ETA 0:21");
}

TEST(FormatProgress, WithoutASizeHasNeitherShareNorTimeLeft) {
  EXPECT_EQ(
      format_progress({.counts = "120 produced  118 delivered", .rate = 60, .unit = "records"}),
      "120 produced  118 delivered  60 records/s");
}

TEST(FormatProgress, NeverSaysMoreThanAllOfTheInput) {
  EXPECT_EQ(format_progress({.fraction = 1.2, .counts = "x", .unit = "pages"}).substr(0, 5),
            "100% ");
}

TEST(FormatDuration, ShowsMinutesAndSecondsThenHours) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(59.6), "1:00");
  EXPECT_EQ(format_duration(725), "12:05");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-5), "0:00");
}

}  // namespace
}  // namespace neardup::cli
