// parse_integer and range_text alone: the integers a configuration value may be written as.
#include "config/integers.h"

#include <gtest/gtest.h>

namespace neardup::config_keys {
namespace {

using Outcome = ParsedInteger::Outcome;

TEST(ConfigIntegers, DecimalAndHexReadAsWritten) {
  EXPECT_EQ(parse_integer("42", false).value, 42u);
  EXPECT_EQ(parse_integer("0x2a", false).value, 42u);
  EXPECT_EQ(parse_integer("0XFFFFFFFFFFFFFFFF", false).value, UINT64_MAX);
  EXPECT_EQ(parse_integer("42", false).outcome, Outcome::kOk);
}

TEST(ConfigIntegers, SizesAndDurationsTakeTheirUnitsOnly) {
  EXPECT_EQ(parse_integer("64MiB", true).value, 64 * kMiB);
  EXPECT_EQ(parse_integer("2 TiB", true).value, 2 * kTiB);
  EXPECT_EQ(parse_integer("2 TiB", false).outcome, Outcome::kNotInteger);       // not a size
  EXPECT_EQ(parse_integer("2  TiB", true).outcome, Outcome::kNotInteger);       // one space at most
  EXPECT_EQ(parse_integer("0x10KiB", true).outcome, Outcome::kNotInteger);      // decimal only
  EXPECT_EQ(parse_integer("5MiB", false, true).outcome, Outcome::kNotInteger);  // not a duration
  EXPECT_EQ(parse_integer("1KB", true).outcome, Outcome::kNotInteger);
}

TEST(ConfigIntegers, NegativeAndTooLargeAreOutOfRangeNotMalformed) {
  EXPECT_EQ(parse_integer("-1", false).outcome, Outcome::kOutOfRange);
  EXPECT_EQ(parse_integer("18446744073709551616", false).outcome, Outcome::kOutOfRange);
  EXPECT_EQ(parse_integer("16777216TiB", true).outcome, Outcome::kOutOfRange);  // 2^64 bytes
  EXPECT_EQ(parse_integer("-x", false).outcome, Outcome::kNotInteger);
  EXPECT_EQ(parse_integer("", false).outcome, Outcome::kNotInteger);
  EXPECT_EQ(parse_integer("seven", false).outcome, Outcome::kNotInteger);
}

TEST(ConfigIntegers, TheRangeIsWrittenAsTheKeyIsWritten) {
  Key count{.path = "pipeline.batch_size", .min = 1, .max = 4096};
  EXPECT_EQ(range_text(count, count.max), "1..4096");
  Key size{.path = "store.map_size", .min = kMiB, .size = true};
  EXPECT_EQ(range_text(size, kNoMax), ">= 1MiB");
}

}  // namespace
}  // namespace neardup::config_keys
