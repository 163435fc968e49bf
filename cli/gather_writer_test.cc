#include "cli/gather_writer.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace neardup::cli {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(GatherWriter, WritesEveryPieceInOrderPastOneWritevsWorth) {
  const std::string path = ::testing::TempDir() + "/gather_" + std::to_string(::getpid());
  auto out = GatherWriter::open(path);
  ASSERT_TRUE(out) << out.error();
  // More pieces than one writev takes, of varied sizes, some empty (not written).
  std::vector<std::string> pieces;
  std::string expected;
  for (int i = 0; i < 3 * IOV_MAX + 7; ++i) {
    pieces.push_back(std::string(static_cast<std::size_t>(i % 97), static_cast<char>('a' + i % 26)));
  }
  for (const std::string& piece : pieces) {
    (*out)->add(piece);
    expected += piece;
  }
  ASSERT_TRUE((*out)->flush()) << (*out)->error();
  (*out)->add("tail\n");
  ASSERT_TRUE((*out)->flush());
  out->reset();
  EXPECT_EQ(read_all(path), expected + "tail\n");
  ::unlink(path.c_str());
}

TEST(GatherWriter, AFullDeviceIsAnErrorNamingTheFile) {
  auto out = GatherWriter::open("/dev/full");
  ASSERT_TRUE(out) << out.error();
  (*out)->add("x");
  EXPECT_FALSE((*out)->flush());
  EXPECT_NE((*out)->error().find("/dev/full: write error: No space left on device"), std::string::npos)
      << (*out)->error();
  (*out)->add("y");
  EXPECT_FALSE((*out)->flush());  // stays failed
}

TEST(GatherWriter, AFileThatCannotBeCreatedIsAnError) {
  auto out = GatherWriter::open("/nonexistent-dir/out.jsonl");
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().find("/nonexistent-dir/out.jsonl: cannot open for writing"), std::string::npos);
}

}  // namespace
}  // namespace neardup::cli
