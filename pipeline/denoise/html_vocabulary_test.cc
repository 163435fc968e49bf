// The outline's vocabulary alone: tag traits, class and id verdicts, hiding styles.
#include "pipeline/denoise/html_vocabulary.h"

#include <gtest/gtest.h>

namespace neardup::denoise_internal {
namespace {

TEST(HtmlVocabulary, TagsHaveTheirTraitsAndUnknownTagsNone) {
  EXPECT_EQ(lookup_tag("p").tag, HtmlTag::kP);
  EXPECT_EQ(lookup_tag("p").traits, kBlock);
  EXPECT_EQ(lookup_tag("br").traits, kBreak);
  EXPECT_TRUE(lookup_tag("script").traits & kHidden);
  EXPECT_EQ(lookup_tag("nav").traits, kBlock | kBoilerplate);
  EXPECT_EQ(lookup_tag("blink").tag, HtmlTag::kOther);
  EXPECT_EQ(lookup_tag("blink").traits, 0);
  EXPECT_EQ(lookup_tag("P").tag, HtmlTag::kOther);  // names are looked up lower-case
}

TEST(HtmlVocabulary, ClassNamesAreReadAsSubstringsAndShortWordsAsTokens) {
  EXPECT_TRUE(is_unlikely(name_bits("left-sidebar")));
  EXPECT_TRUE(is_unlikely(name_bits("comments")));
  // "content" saves a name that also says chrome.
  EXPECT_FALSE(is_unlikely(name_bits("sidebar-content")));
  EXPECT_EQ(name_weight(name_bits("article-body")), 25);
  EXPECT_EQ(name_weight(name_bits("footer")), -25);
  EXPECT_EQ(name_weight(name_bits("plain")), 0);
  EXPECT_EQ(name_flags(name_bits("byline")), kBylineClass);
  EXPECT_EQ(name_flags(name_bits("photo-credit")), kCaptionClass);
  // Short words match whole tokens only: "ad" is not in "head" or "shadow".
  EXPECT_TRUE(is_unlikely(name_bits("top ad")));
  EXPECT_TRUE(is_unlikely(name_bits("ad_slot")));
  EXPECT_FALSE(is_unlikely(name_bits("masthead")));
  EXPECT_FALSE(is_unlikely(name_bits("shadow")));
  EXPECT_TRUE(has_token("a-b_c d", {"c"}));
  EXPECT_FALSE(has_token("abc", {"b"}));
  EXPECT_FALSE(has_token("", {""}));
}

TEST(HtmlVocabulary, AStyleHidesWithDisplayNoneOrVisibilityHiddenWhateverItsSpacing) {
  std::string scratch;
  EXPECT_TRUE(style_hides("display: none", scratch));
  EXPECT_TRUE(style_hides("color:red;VISIBILITY :\tHidden", scratch));
  EXPECT_FALSE(style_hides("display:block", scratch));
  EXPECT_FALSE(style_hides("", scratch));
}

}  // namespace
}  // namespace neardup::denoise_internal
