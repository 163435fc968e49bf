#include "cli/progress.h"

#include <gtest/gtest.h>

namespace neardup::cli {
namespace {

TEST(ProgressLine, WithATotalSaysThePercentageTheRateAndTheTimeLeft) {
  EXPECT_EQ(Progress::line("pages", 420, 1000, 8412, 4.0),
            " 42%  8,412 pages  2,103 pages/s  0:06 left");
  EXPECT_EQ(Progress::line("pages", 1, 3600, 10, 1.0), "  0%  10 pages  10 pages/s  59:59 left");
  EXPECT_EQ(Progress::line("clusters", 1, 7201, 1, 1.0),
            "  0%  1 clusters  1 clusters/s  2:00:00 left");
}

TEST(ProgressLine, WithoutATotalOrBeforeAnyOfItIsDoneSaysOnlyTheCountAndRate) {
  EXPECT_EQ(Progress::line("pages", 500, 0, 1234567, 2.0), "1,234,567 pages  617,283 pages/s");
  EXPECT_EQ(Progress::line("pages", 0, 1000, 0, 0.0), "0 pages");
  // A total that turned out too small (a file that grew) shows no percentage rather than 120 %.
  EXPECT_EQ(Progress::line("pages", 1200, 1000, 5, 1.0), "5 pages  5 pages/s");
}

}  // namespace
}  // namespace neardup::cli
