#include "pipeline/denoise/html_prescan.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
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
  EXPECT_EQ(prescanned("<p>a</p><script id=\"x\">var s = '<p>no</p>';</script><p>b</p>"),
            "<p>a</p><script id=\"x\"></script><p>b</p>");
  EXPECT_EQ(prescanned("<STYLE>p { color: red }</Style>x"), "<STYLE></Style>x");
  // A body ends at the first "</script", whatever follows it, as in libxml2.
  EXPECT_EQ(prescanned("<script>a</scriptx>b</script>c"), "<script></scriptx>b</script>c");
  // Unclosed: runs to the end.
  EXPECT_EQ(prescanned("<p>a<script>var x = 1;"), "<p>a<script>");
  // A '>' inside a quoted attribute does not end the tag.
  EXPECT_EQ(prescanned("<script class=\"a>b\">code</script>t"), "<script class=\"a>b\"></script>t");
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
  // <meta> keeps every attribute below the cap (libxml2 reads its charset).
  std::string tag = "<meta";
  for (std::size_t i = 0; i < kMaxAttributes + 50; ++i) tag += " a" + std::to_string(i) + "=1";
  std::string expected = "<meta";
  for (std::size_t i = 0; i < kMaxAttributes; ++i) expected += " a" + std::to_string(i) + "=1";
  EXPECT_EQ(prescanned(tag + ">text"), expected + " >text");
}

TEST(Prescan, DropsTheAttributesTheOutlineNeverReads) {
  EXPECT_EQ(prescanned("<a href=\"/x\" CLASS=nav data-track='{\"a\":1}' hidden onclick=go()>t</a>"),
            "<a  CLASS=nav  hidden >t</a>");
  EXPECT_EQ(prescanned("<div id=a role=main style=\"x\" rel=author itemprop=author "
                       "aria-hidden=true title=t>x</div>"),
            "<div id=a role=main style=\"x\" rel=author itemprop=author aria-hidden=true >x</div>");
  EXPECT_EQ(prescanned("<meta charset=utf-8 content=x>"), "<meta charset=utf-8 content=x>");
}

TEST(Prescan, KeepsAttributesLibxml2WouldReadDifferently) {
  for (std::string_view html : {
           "<div class=\"a\"/title=x>t</div>",  // after '/': libxml2 skips "/title=x" as junk
           "<div\ftitle=\"a hidden\">t</div>",  // after '\f': junk up to the blank
           "<div ti\"tle=x>t</div>",            // not a name libxml2 reads whole
           "<div title=\"a\fb\">t</div>",       // '\f' inside
           "<div title=\"open>t</div>",         // quote never closed
           "<div title=x",                      // tag never closed
       }) {
    std::string out;
    EXPECT_EQ(prescan_html(html, out), html) << html;
  }
}

TEST(Prescan, StopsLeavingAttributesOutAfterMarkupLibxml2MayReadOtherwise) {
  // A well-formed doctype and end tags, even with junk up to their '>', keep it going.
  EXPECT_EQ(prescanned("<!DOCTYPE html><p title=a>x</p junk=\"1\"><p title=b>y"),
            "<!DOCTYPE html><p >x</p junk=\"1\"><p >y");
  // A '<p ...>' inside an end tag's junk is not a tag for libxml2, and is left alone.
  EXPECT_EQ(prescanned("</div x <p title=\"a>b\" class=c>t"), "</div x <p title=\"a>b\" class=c>t");
  for (std::string_view before :
       {"<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0//EN\">", "<?xml version=1?>", "<!x>",
        "<!-->", "<!-- a --!> b -->", "<div x\"y>"}) {
    const std::string html = std::string(before) + "<p title=a>x";
    EXPECT_EQ(prescanned(html), html) << before;
  }
}

// A generator of tag soup: elements, attributes of every shape, quotes, slashes, form feeds,
// comments, doctypes, processing instructions and end tags with junk.
std::string tag_soup(std::mt19937_64& rng) {
  static constexpr std::string_view kNames[] = {
      "id",   "class", "CLASS",    "hidden",   "title", "data-x", "aria-hidden",
      "role", "style", "href",     "x\"y",     "a",     "_b",     ":c",
      ".d",   "1e",    "on-click", "itemprop", "rel",   "ti@tle"};
  static constexpr std::string_view kValues[] = {
      "nav",    "sidebar", "\"main content\"", "'caption'",    "\"a>b\"",
      "'x\"y'", "true",    "author",           "display:none", "\"unterminated",
      "a/",     "1/",      "{\"a\":1}",        "\"hidden\"",   "comments"};
  static constexpr std::string_view kGaps[] = {" ", "  ", "\t", "\n", "\f", "/", " / ", "\r", ""};
  static constexpr std::string_view kTags[] = {
      "div",     "p",      "a",    "span",   "img",        "DIV", "section",
      "article", "footer", "nav",  "figure", "figcaption", "h1",  "li",
      "ul",      "br",     "meta", "table",  "td",         "b",   "i"};
  static constexpr std::string_view kTexts[] = {"hello world, this is text. ",
                                                "</div junk=\"a>b\">",
                                                "<!DOCTYPE html>",
                                                "<!DOCTYPE html PUBLIC \"-//W3C//DTD\" \"x>y\">",
                                                "<?php x ?>",
                                                "<!x>",
                                                "<!---->",
                                                "<!-->",
                                                "x < 3 ",
                                                "</ p>",
                                                "</3>",
                                                "<!-- c -->",
                                                "</p>",
                                                "\n"};
  auto pick = [&](const auto& list) { return list[rng() % std::size(list)]; };
  std::string html;
  for (int part = 0, parts = 1 + static_cast<int>(rng() % 8); part < parts; ++part) {
    if (rng() % 3 == 0) {
      html += pick(kTexts);
      continue;
    }
    html += "<";
    html += pick(kTags);
    for (int a = 0, attributes = static_cast<int>(rng() % 4); a < attributes; ++a) {
      html += pick(kGaps);
      html += pick(kNames);
      if (const int shape = static_cast<int>(rng() % 4); shape == 1 || shape == 2) {
        html += shape == 1 ? "=" : " = ";
        html += pick(kValues);
      }
    }
    if (rng() % 10 == 0) html += "/";
    if (rng() % 15 != 0) html += ">";
    html += pick(kTexts);
  }
  return html;
}

bool same_outline(const Outline& a, const Outline& b) {
  if (a.text != b.text || a.title != b.title || a.og_title != b.og_title ||
      a.elements.size() != b.elements.size() || a.runs.size() != b.runs.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.elements.size(); ++i) {
    const OutlineElement& x = a.elements[i];
    const OutlineElement& y = b.elements[i];
    if (x.tag != y.tag || x.class_weight != y.class_weight || x.flags != y.flags ||
        x.parent != y.parent || x.end != y.end || x.class_hash != y.class_hash ||
        x.run_begin != y.run_begin || x.run_end != y.run_end || x.child_count != y.child_count) {
      return false;
    }
  }
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    if (a.runs[i].block != b.runs[i].block || a.runs[i].element != b.runs[i].element ||
        a.runs[i].owner != b.runs[i].owner || a.runs[i].in_link != b.runs[i].in_link) {
      return false;
    }
  }
  return true;
}

// 100,000 pages of soup: with attributes left out of every well-formed tag, even after
// malformed ones, a few of them differ (the rule that stops after malformed markup is needed).
TEST(Prescan, TagSoupGivesTheSameOutline) {
  std::mt19937_64 rng(20261126);
  const auto far = std::chrono::steady_clock::now() + std::chrono::hours(1);
  int differing = 0;
  for (int i = 0; i < 100000; ++i) {
    const std::string html = tag_soup(rng);
    if (!same_outline(parse_outline(html, 200'000, far, true),
                      parse_outline(html, 200'000, far, false))) {
      if (++differing <= 3) ADD_FAILURE() << "outline differs with the prescan: " << html;
    }
  }
  EXPECT_EQ(differing, 0);
}

// The outline of tricky markup is the same with and without the prescan.
TEST(Prescan, TrickyAttributesGiveTheSameOutline) {
  const auto far = std::chrono::steady_clock::now() + std::chrono::hours(1);
  for (std::string_view html : {
           "<div title=x hidden>a</div><p>b</p>",
           "<div a/hidden>a</div><p>b</p>",
           "<div \fdata-x=\"a hidden\" class=nav>a</div><p>b</p>",
           "<div x\"y data-k=\"q>w\" class=main>a</div><p>b</p>",
           "<div data-x=1/ class=sidebar>a</div><p>b</p>",
           "<img data-x=a/><p class=caption>b</p>",
           "<div data-x = \"1\" id = \"comments\">a</div><p>b</p>",
           "<div title='it\"s' class=\"it's\">a</div>",
           "<DIV Title=X CLASS=Footer>a</DIV><p>b</p>",
       }) {
    Outline with = parse_outline(html, 200'000, far, true);
    Outline without = parse_outline(html, 200'000, far, false);
    EXPECT_EQ(with.text, without.text) << html;
    ASSERT_EQ(with.elements.size(), without.elements.size()) << html;
    for (std::size_t i = 0; i < with.elements.size(); ++i) {
      const OutlineElement& a = with.elements[i];
      const OutlineElement& b = without.elements[i];
      EXPECT_TRUE(a.tag == b.tag && a.class_weight == b.class_weight && a.flags == b.flags &&
                  a.parent == b.parent && a.end == b.end && a.class_hash == b.class_hash)
          << html << " element " << i;
    }
  }
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
