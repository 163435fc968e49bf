#include "common/edit_distance.h"

#include <gtest/gtest.h>

namespace neardup {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("version", "version"), 0u);
  EXPECT_EQ(edit_distance("verison", "version"), 1u);  // swap
  EXPECT_EQ(edit_distance("stroe", "store"), 1u);
  EXPECT_EQ(edit_distance("dedpu", "dedup"), 1u);
  EXPECT_EQ(edit_distance("dedu", "dedup"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace neardup
