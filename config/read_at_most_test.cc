// read_at_most: a file read whole, a longer or endless one cut one byte past the limit, and the
// system's reason for one that cannot be read.
#include "config/read_at_most.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace neardup::config_keys {
namespace {

TEST(ConfigReadAtMost, ReadsAFileWholeAndStopsOneBytePastTheLimit) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("read_at_most_" + std::to_string(::getpid())))
          .string();
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(100000, 'x');
  }
  auto whole = read_at_most(path, 100000);
  ASSERT_TRUE(whole) << whole.error();
  EXPECT_EQ(whole->size(), 100000u);
  auto cut = read_at_most(path, 1000);
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->size(), 1001u);  // known to be too long without reading the rest
  std::filesystem::remove(path);
  auto endless = read_at_most("/dev/zero", 70000);
  ASSERT_TRUE(endless);
  EXPECT_EQ(endless->size(), 70001u);
}

TEST(ConfigReadAtMost, AFileThatCannotBeReadGivesTheSystemsReason) {
  auto missing = read_at_most("/nonexistent/neardup.yaml", 10);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(), "No such file or directory");
  auto directory = read_at_most("/", 10);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error(), "Is a directory");
}

}  // namespace
}  // namespace neardup::config_keys
