#include "pipeline/denoise/denoise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace neardup {
namespace {

// Article prose long enough to score as paragraphs.
constexpr std::string_view kParagraph1 =
    "The city council voted on Tuesday to expand the river park, adding four hectares of "
    "wetland, a boardwalk and a small visitor centre, after two years of public hearings.";
constexpr std::string_view kParagraph2 =
    "Supporters said the wetland would absorb spring floods, protect nesting birds and give "
    "schools a place for field trips, while critics questioned the cost of the boardwalk.";
constexpr std::string_view kParagraph3 =
    "Construction is expected to begin in May, and the council said the first section of the "
    "boardwalk, near the old mill, should open to walkers before the end of the summer.";

std::string article_paragraphs() {
  return "<p>" + std::string(kParagraph1) + "</p>\n<p>" + std::string(kParagraph2) + "</p>\n<p>" +
         std::string(kParagraph3) + "</p>\n";
}

std::string nav_links(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += "<li><a href=\"/section/" + std::to_string(i) + "\">Section number " +
           std::to_string(i) + "</a></li>";
  }
  return out;
}

// A news page: navigation, a teaser feed, the article, a comment thread and a footer.
std::string noisy_page() {
  return "<!DOCTYPE html><html><head><title>River park grows - Daily Example</title>"
         "<style>p { color: red; }</style><script>var tracking = 'script text';</script>"
         "</head><body>"
         "<header><div class=\"logo\">Daily Example</div></header>"
         "<nav><ul>" +
         nav_links(20) +
         "</ul></nav>"
         "<div class=\"layout\">"
         "<div class=\"sidebar\"><h3>Most read</h3><ul>" +
         nav_links(10) +
         "</ul><p>Teaser: the mayor, the budget, the stadium and other stories, all in one "
         "place, every morning, with analysis and opinion from our writers.</p></div>"
         "<article><h1>River park grows</h1>"
         "<div class=\"byline\">By A. Writer | 3 May</div>" +
         article_paragraphs() +
         "</article>"
         "<section class=\"comments\"><h3>Comments</h3>"
         "<div class=\"comment\"><p>I walk there every day, and honestly, the new boardwalk "
         "will be great, but please keep the dogs on a leash, thanks.</p></div>"
         "<div class=\"comment\"><p>What a waste of money, they should fix the potholes, the "
         "schools, the buses and the library roof first, honestly.</p></div></section>"
         "</div>"
         "<footer><p>Copyright Daily Example. All rights reserved. Terms, privacy, cookies, "
         "and contact information for our newsroom and advertising team.</p></footer>"
         "</body></html>";
}

std::string joined(const MainText& m) { return joined_text(m); }

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Denoise, JoinedTextSeparatesParagraphsWithNewlines) {
  MainText m;
  m.paragraphs = {"a", "b"};
  EXPECT_EQ(joined_text(m), "a\nb");
}

TEST(Denoise, DropsNavigationAndKeepsArticleParagraphs) {
  MainText m = denoise(noisy_page(), "text/html", DenoiseConfig{});
  EXPECT_FALSE(m.fell_back) << m.fallback_reason;
  ASSERT_EQ(m.paragraphs.size(), 3u) << joined(m);
  EXPECT_EQ(m.paragraphs[0], kParagraph1);
  EXPECT_EQ(m.paragraphs[1], kParagraph2);
  EXPECT_EQ(m.paragraphs[2], kParagraph3);
  const std::string text = joined(m);
  EXPECT_FALSE(contains(text, "Section number"));
  EXPECT_FALSE(contains(text, "Teaser"));
  EXPECT_FALSE(contains(text, "boardwalk will be great"));
  EXPECT_FALSE(contains(text, "Copyright"));
  EXPECT_FALSE(contains(text, "By A. Writer"));
}

TEST(Denoise, TakesTitleFromTitleElementAndDoesNotPrependIt) {
  MainText m = denoise(noisy_page(), "", DenoiseConfig{});
  EXPECT_EQ(m.title, "River park grows - Daily Example");
  ASSERT_FALSE(m.paragraphs.empty());
  EXPECT_EQ(m.paragraphs.front(), kParagraph1);
  EXPECT_FALSE(contains(joined(m), "River park grows"));
}

TEST(Denoise, TitleFallsBackToOpenGraphThenHeading) {
  const std::string body = "<body><h1>  The   headline </h1>" + article_paragraphs() + "</body>";
  EXPECT_EQ(denoise("<html><head><meta property=\"og:title\" content=\"OG &amp; title\">"
                    "</head>" +
                        body + "</html>",
                    "", DenoiseConfig{})
                .title,
            "OG & title");
  EXPECT_EQ(denoise("<html>" + body + "</html>", "", DenoiseConfig{}).title, "The headline");
}

TEST(Denoise, DropsLinkHeavyListInsideTheArticle) {
  const std::string page = "<html><body><div class=\"story\">" + article_paragraphs() + "<ul>" +
                           nav_links(12) + "</ul></div></body></html>";
  MainText m = denoise(page, "", DenoiseConfig{});
  const std::string text = joined(m);
  EXPECT_TRUE(contains(text, kParagraph2));
  EXPECT_FALSE(contains(text, "Section number")) << text;
}

TEST(Denoise, DropsHiddenElements) {
  const std::string page =
      "<html><body><div>" + article_paragraphs() +
      "<p hidden>Hidden attribute text that is long enough to be scored as a paragraph.</p>"
      "<p aria-hidden=\"true\">Aria hidden text that is long enough to be scored, too.</p>"
      "<div style=\"color: red; DISPLAY : none\">Display none text, long enough to score.</div>"
      "<p style=\"visibility:hidden\">Visibility hidden text, long enough to be scored.</p>"
      "</div></body></html>";
  DenoiseConfig all_text;
  all_text.mode = DenoiseMode::kAllText;
  for (const DenoiseConfig& config : {DenoiseConfig{}, all_text}) {
    const std::string text = joined(denoise(page, "", config));
    EXPECT_TRUE(contains(text, kParagraph1)) << name_of(config.mode);
    EXPECT_FALSE(contains(text, "Hidden attribute")) << name_of(config.mode);
    EXPECT_FALSE(contains(text, "Aria hidden")) << name_of(config.mode);
    EXPECT_FALSE(contains(text, "Display none")) << name_of(config.mode);
    EXPECT_FALSE(contains(text, "Visibility hidden")) << name_of(config.mode);
  }
}

TEST(Denoise, DropsScriptStyleNoscriptAndTemplate) {
  const std::string page = "<html><head><style>.x{}</style></head><body><div>" +
                           article_paragraphs() +
                           "<script>document.write('script words here');</script>"
                           "<noscript>Please enable JavaScript words</noscript>"
                           "<template><p>template words here</p></template>"
                           "<style>body { font-family: style words }</style></div></body></html>";
  DenoiseConfig all_text;
  all_text.mode = DenoiseMode::kAllText;
  for (const DenoiseConfig& config : {DenoiseConfig{}, all_text}) {
    const std::string text = joined(denoise(page, "", config));
    EXPECT_TRUE(contains(text, kParagraph3)) << name_of(config.mode);
    for (std::string_view noise : {"script words", "JavaScript", "template words", "style words"}) {
      EXPECT_FALSE(contains(text, noise)) << name_of(config.mode) << ": " << noise;
    }
  }
}

TEST(Denoise, BlockBoundariesSeparateWords) {
  DenoiseConfig all_text;
  all_text.mode = DenoiseMode::kAllText;
  MainText m = denoise(
      "<div>foo</div><div>bar</div><p>baz</p><p>qux<br>quux</p>"
      "<ul><li>one</li><li>two</li></ul><span>in</span><b>line</b>",
      "", all_text);
  EXPECT_EQ(joined(m), "foo\nbar\nbaz\nqux\nquux\none\ntwo\ninline");
}

TEST(Denoise, CollapsesWhitespaceAndDecodesEntities) {
  DenoiseConfig all_text;
  all_text.mode = DenoiseMode::kAllText;
  MainText m = denoise(
      "<p>  don&#39;t \n\t stop&nbsp;&nbsp;me &amp; &lt;you&gt; &eacute;t&#xE9; "
      "&mdash; &#8220;x&#8221;  </p>",
      "", all_text);
  ASSERT_EQ(m.paragraphs.size(), 1u);
  EXPECT_EQ(m.paragraphs[0], "don't stop me & <you> été — “x”");
}

TEST(Denoise, IgnoresDeclaredLegacyCharsetOverUtf8Text) {
  DenoiseConfig all_text;
  all_text.mode = DenoiseMode::kAllText;
  MainText m = denoise(
      "<html><head><meta charset=\"iso-8859-1\"></head><body><p>café 東京</p></body></html>", "",
      all_text);
  EXPECT_EQ(joined(m), "café 東京");
}

TEST(Denoise, PlainTextPassesThroughAsLines) {
  MainText m = denoise("first line <b>not a tag</b>\n\n  second   line \r\nthird\n",
                       "Text/Plain; charset=utf-8", DenoiseConfig{});
  EXPECT_FALSE(m.fell_back);
  EXPECT_EQ(m.title, "");
  ASSERT_EQ(m.paragraphs.size(), 3u);
  EXPECT_EQ(m.paragraphs[0], "first line <b>not a tag</b>");
  EXPECT_EQ(m.paragraphs[1], "second line");
  EXPECT_EQ(m.paragraphs[2], "third");
}

TEST(Denoise, EmptyInputGivesNoText) {
  for (std::string_view input : {"", "   \n ", "<html><body></body></html>"}) {
    MainText m = denoise(input, "", DenoiseConfig{});
    EXPECT_TRUE(m.paragraphs.empty()) << input;
    EXPECT_EQ(m.title, "");
  }
}

TEST(Denoise, AllTextModeKeepsBoilerplateButSaysSo) {
  DenoiseConfig all_text;
  all_text.mode = DenoiseMode::kAllText;
  MainText m = denoise(noisy_page(), "", all_text);
  EXPECT_TRUE(m.fell_back);
  EXPECT_EQ(m.fallback_reason, "mode");
  const std::string text = joined(m);
  EXPECT_TRUE(contains(text, "Section number 3"));
  EXPECT_TRUE(contains(text, kParagraph2));
  EXPECT_FALSE(contains(text, "script text"));
}

TEST(Denoise, PageWithoutProseFallsBackToVisibleText) {
  MainText m = denoise("<html><body><div>Short.</div><div>Also short.</div></body></html>", "",
                       DenoiseConfig{});
  EXPECT_TRUE(m.fell_back);
  EXPECT_EQ(m.fallback_reason, "no_main_block");
  EXPECT_EQ(joined(m), "Short.\nAlso short.");
}

TEST(Denoise, HugeNestedInputFallsBackPastMaxNodes) {
  // About 20 MB of nested divs, far past the default node cap.
  std::string page = "<html><body>";
  const int depth = 2'000'000;
  page.reserve(static_cast<std::size_t>(depth) * 11 + 200);
  for (int i = 0; i < depth; ++i) page += "<div>";
  page += "deep text";
  for (int i = 0; i < depth; ++i) page += "</div>";
  page += "</body></html>";
  DenoiseConfig config;
  config.max_millis = 60'000;  // the node cap, not the clock, must trigger
  MainText m = denoise(page, "", config);
  EXPECT_TRUE(m.fell_back);
  EXPECT_EQ(m.fallback_reason, "max_nodes");
  EXPECT_EQ(joined(m), "deep text");
}

TEST(Denoise, NodeCapCountsElements) {
  DenoiseConfig config;
  config.max_nodes = 5;
  MainText m = denoise(noisy_page(), "", config);
  EXPECT_TRUE(m.fell_back);
  EXPECT_EQ(m.fallback_reason, "max_nodes");
  EXPECT_TRUE(contains(joined(m), kParagraph1));
}

TEST(Denoise, DeadlineFallsBackWithMaxMillis) {
  std::string page = "<html><body>";
  for (int i = 0; i < 5000; ++i) page += "<p>paragraph " + std::to_string(i) + "</p>";
  page += "</body></html>";
  DenoiseConfig config;
  config.max_millis = 0;
  MainText m = denoise(page, "", config);
  EXPECT_TRUE(m.fell_back);
  EXPECT_EQ(m.fallback_reason, "max_millis");
  ASSERT_FALSE(m.paragraphs.empty());
  EXPECT_EQ(m.paragraphs.front(), "paragraph 0");
}

TEST(Denoise, MalformedHtmlDoesNotCrash) {
  const std::vector<std::string> inputs = {
      "<div><p>unclosed <b>bold <i>italic</div></span></p></td>",
      "</div></div></body></html><p>after the end</p>",
      "<<<>>><a href=\"x>broken attribute<p>text",
      "<!-- unterminated comment <p>hidden",
      "<script>never closed",
      std::string("\0\xff\xfe<p>\x80 bytes</p>", 17),
      "<table><tr><td>cell<table><td>nested</table></tr>",
  };
  for (const std::string& input : inputs) {
    MainText m = denoise(input, "", DenoiseConfig{});
    for (const std::string& p : m.paragraphs) EXPECT_FALSE(p.empty());
  }
  DenoiseConfig all_text;
  all_text.mode = DenoiseMode::kAllText;
  EXPECT_EQ(joined(denoise(inputs[1], "", all_text)), "after the end");
}

TEST(Denoise, KeepsFormThatWrapsTheWholePage) {
  // ASP.NET pages put everything in one <form>.
  const std::string page = "<html><body><form action=\"/x\"><nav><ul>" + nav_links(5) +
                           "</ul></nav><div class=\"article\">" + article_paragraphs() +
                           "</div></form></body></html>";
  MainText m = denoise(page, "", DenoiseConfig{});
  EXPECT_FALSE(m.fell_back);
  EXPECT_EQ(joined(m), std::string(kParagraph1) + "\n" + std::string(kParagraph2) + "\n" +
                           std::string(kParagraph3));
}

TEST(Denoise, KeepsQuotationInsideArticle) {
  const std::string page =
      "<html><body><div class=\"post\"><p>" + std::string(kParagraph1) +
      "</p><blockquote><p>A quoted paragraph, from another paper, that the article discusses at "
      "some length.</p></blockquote><p>" +
      std::string(kParagraph2) + "</p></div></body></html>";
  const std::string text = joined(denoise(page, "", DenoiseConfig{}));
  EXPECT_TRUE(contains(text, "A quoted paragraph"));
  EXPECT_TRUE(contains(text, kParagraph2));
}

// A teaser for another article: a linked heading and a short blurb.
std::string teaser_card(int i) {
  return "<div class=\"card\"><h3><a href=\"/story/" + std::to_string(i) +
         "\">Another story number " + std::to_string(i) +
         "</a></h3><p>A short summary of another story, long enough to be scored.</p></div>";
}

TEST(Denoise, DropsCaptionsAndPhotoCreditsNamedAsSuch) {
  const std::string page =
      "<html><body><div class=\"story\"><p>" + std::string(kParagraph1) +
      "</p><div class=\"photo\"><img src=\"a.jpg\" alt=\"\"><p class=\"credit\">Jane Doe, "
      "AP</p><span class=\"ppy-extcaption\"><p>The river park at dawn, seen from the old mill, "
      "where the boardwalk will start next May.</p></span></div><p>" +
      std::string(kParagraph2) + "</p><p>" + std::string(kParagraph3) + "</p></div></body></html>";
  const std::string text = joined(denoise(page, "", DenoiseConfig{}));
  EXPECT_EQ(text, std::string(kParagraph1) + "\n" + std::string(kParagraph2) + "\n" +
                      std::string(kParagraph3));
}

TEST(Denoise, KeepsContentWhoseContainerIsNamedLikeACaption) {
  const std::string page =
      "<html><body><div class=\"caption-free\">" + article_paragraphs() + "</div></body></html>";
  EXPECT_TRUE(contains(joined(denoise(page, "", DenoiseConfig{})), kParagraph3));
}

TEST(Denoise, DropsTeaserCardsAndTheirOrphanedHeading) {
  std::string cards;
  for (int i = 0; i < 4; ++i) cards += teaser_card(i);
  const std::string page = "<html><body><div class=\"story\">" + article_paragraphs() +
                           "<div class=\"more\"><h2>More from the city desk</h2>" + cards +
                           "</div></div></body></html>";
  const std::string text = joined(denoise(page, "", DenoiseConfig{}));
  EXPECT_TRUE(contains(text, kParagraph3));
  EXPECT_FALSE(contains(text, "Another story")) << text;
  EXPECT_FALSE(contains(text, "A short summary")) << text;
  EXPECT_FALSE(contains(text, "More from the city desk")) << text;
}

TEST(Denoise, KeepsSubheadingsFollowedByTheirSection) {
  const std::string page = "<html><body><article><p>" + std::string(kParagraph1) +
                           "</p><div class=\"sub\"><h2>What critics say</h2></div><p>" +
                           std::string(kParagraph2) + "</p><h3>When it opens</h3><p>" +
                           std::string(kParagraph3) + "</p></article></body></html>";
  EXPECT_EQ(joined(denoise(page, "", DenoiseConfig{})),
            std::string(kParagraph1) + "\nWhat critics say\n" + std::string(kParagraph2) +
                "\nWhen it opens\n" + std::string(kParagraph3));
}

TEST(Denoise, DropsHeadingsLeftWithoutASection) {
  const std::string page = "<html><body><div class=\"story\">" + article_paragraphs() +
                           "<div class=\"tools\"><h2>User tools</h2><ul>" + nav_links(4) +
                           "</ul></div></div></body></html>";
  const std::string text = joined(denoise(page, "", DenoiseConfig{}));
  EXPECT_TRUE(contains(text, kParagraph3));
  EXPECT_FALSE(contains(text, "User tools")) << text;
}

TEST(Denoise, DropsLinkedItemsCutOffWithAnEllipsis) {
  std::string items;
  for (int i = 0; i < 3; ++i) {
    items += "<li><a href=\"/t/" + std::to_string(i) +
             "\">Topic</a> - The beginning of a summary of another story, cut off in the "
             "middle of a sentence..." +
             (i == 0 ? std::string(" <a href=\"/more\">more</a>") : std::string()) + "</li>";
  }
  const std::string page = "<html><body><div class=\"story\">" + article_paragraphs() + "<ul>" +
                           items + "</ul></div></body></html>";
  const std::string text = joined(denoise(page, "", DenoiseConfig{}));
  EXPECT_TRUE(contains(text, kParagraph3));
  EXPECT_FALSE(contains(text, "summary of another story")) << text;
}

TEST(Denoise, KeepsListItemsThatEndWithAnEllipsisWithoutLinks) {
  const std::string page = "<html><body><div class=\"story\">" + article_paragraphs() +
                           "<ul><li>First, the council will drain the old pond and plant reeds "
                           "along the bank...</li><li>then the boardwalk, and then the visitor "
                           "centre by the mill.</li></ul></div></body></html>";
  EXPECT_TRUE(
      contains(joined(denoise(page, "", DenoiseConfig{})), "plant reeds along the bank..."));
}

TEST(Denoise, DropsRightsNoticesAndTheSiteTextAfterThem) {
  const std::string page =
      "<html><body><div class=\"story\">" + article_paragraphs() +
      "<p>Copyright 2012 The Associated Press. All rights reserved.</p>"
      "<div>For more information about reprints and permissions, visit our help pages; to "
      "report a correction, write to the standards editor.</div></div></body></html>";
  const std::string text = joined(denoise(page, "", DenoiseConfig{}));
  EXPECT_TRUE(text.ends_with(kParagraph3)) << text;
}

TEST(Denoise, ConcurrentCallsGiveIdenticalResults) {
  const std::string page = noisy_page();
  const MainText expected = denoise(page, "", DenoiseConfig{});
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) results[t] = joined(denoise(page, "", DenoiseConfig{}));
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& r : results) EXPECT_EQ(r, joined(expected));
}

}  // namespace
}  // namespace neardup
