#include "cli/human_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace neardup::cli {
namespace {

TEST(LookupText, NamesThePagesThatFirstPublishedItsParagraphs) {
  const nlohmann::json tag = {{"status", "unique"},
                              {"paragraphs", {{"seen", 2}, {"total", 5}, {"first", {"p1", "p2"}}}}};
  const std::string text = lookup_text("a.html", tag);
  EXPECT_THAT(text, ::testing::StartsWith("a.html: "));
  EXPECT_THAT(text, ::testing::HasSubstr("2 of 5 published before, first in p1 p2"));
}

TEST(LookupText, SaysNoFirstPagesWhenNoneAreKnown) {
  const nlohmann::json tag = {{"status", "unique"}, {"paragraphs", {{"seen", 0}, {"total", 3}}}};
  const std::string text = lookup_text("b.html", tag);
  EXPECT_THAT(text, ::testing::HasSubstr("0 of 3 published before"));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("first in")));
}

}  // namespace
}  // namespace neardup::cli
