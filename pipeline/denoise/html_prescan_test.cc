#include "pipeline/denoise/html_prescan.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pipeline/denoise/html_outline.h"

namespace neardup::denoise_internal {
namespace {

std::string prescanned(std::string_view html) {
  std::string out;
  return std::string(prescan_html(html, out));
}

TEST(Prescan, DropsScriptAndStyleBodiesAndKeepsTheTags) {
  EXPECT_EQ(prescanned("<p>a</p><script type=\"x\">var s = '<p>no</p>';</script><p>b</p>"),
            "<p>a</p><script type=\"x\"></script><p>b</p>");
  EXPECT_EQ(prescanned("<STYLE>p { color: red }</Style>x"), "<STYLE></Style>x");
  // A body ends at the first "</script", whatever follows it, as in libxml2.
  EXPECT_EQ(prescanned("<script>a</scriptx>b</script>c"), "<script></scriptx>b</script>c");
  // Unclosed: runs to the end.
  EXPECT_EQ(prescanned("<p>a<script>var x = 1;"), "<p>a<script>");
  // A '>' inside a quoted attribute does not end the tag.
  EXPECT_EQ(prescanned("<script data-x=\"a>b\">code</script>t"),
            "<script data-x=\"a>b\"></script>t");
}

TEST(Prescan, LeavesEverythingElseAsItIs) {
  for (std::string_view html :
       {"", "plain text", "<p class=x>a &amp; b</p>", "<!-- <script> -->visible",
        "<scripts>not a script</scripts>", "a < b > c", "</script>stray end tag",
        "<p unterminated=\"quote>text", "<div\n>x</div>", "<!doctype html><html>"}) {
    std::string out = "previous";
    std::string_view result = prescan_html(html, out);
    EXPECT_EQ(result, html);
    EXPECT_EQ(result.data(), html.data()) << "copied although nothing was dropped: " << html;
  }
}

TEST(Prescan, KeepsTheFirstAttributesOfAnElementWithTooMany) {
  std::string tag = "<div";
  for (std::size_t i = 0; i < kMaxAttributes + 50; ++i) tag += " a" + std::to_string(i) + "=1";
  std::string expected = "<div";
  for (std::size_t i = 0; i < kMaxAttributes; ++i) expected += " a" + std::to_string(i) + "=1";
  EXPECT_EQ(prescanned(tag + ">text</div>"), expected + " >text</div>");
}

TEST(Prescan, AMillionAttributesParseInLinearTime) {
  std::string html = "<div";
  for (int i = 0; i < 1'000'000; ++i) html += " a" + std::to_string(i) + "=1";
  html += ">some text</div>";
  const auto start = std::chrono::steady_clock::now();
  Outline outline = parse_outline(html, 200'000, start + std::chrono::seconds(60));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(outline.text, "some text");
  EXPECT_LT(elapsed, std::chrono::seconds(5));  // unprescanned: minutes
}

TEST(Prescan, TheSamplePagesGiveTheSameOutline) {
  int pages = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(NEARDUP_SOURCE_DIR) + "/samples/pages")) {
    std::ifstream file(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << file.rdbuf();
    const std::string html = buffer.str();
    const auto far = std::chrono::steady_clock::now() + std::chrono::hours(1);
    Outline with = parse_outline(html, 200'000, far, true);
    Outline without = parse_outline(html, 200'000, far, false);
    EXPECT_EQ(with.text, without.text) << entry.path();
    EXPECT_EQ(with.title, without.title) << entry.path();
    EXPECT_EQ(with.elements.size(), without.elements.size()) << entry.path();
    ++pages;
  }
  EXPECT_GT(pages, 0);
}

}  // namespace
}  // namespace neardup::denoise_internal
