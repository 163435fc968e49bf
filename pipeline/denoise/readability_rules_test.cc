// The scoring rules alone: tag priors, scored owners, loose-text wrappers, subtree sums.
#include "pipeline/denoise/readability_rules.h"

#include <gtest/gtest.h>

namespace neardup::denoise_internal {
namespace {

TEST(ReadabilityRules, TagPriorsFollowReadability) {
  EXPECT_EQ(tag_prior(HtmlTag::kDiv), 5);
  EXPECT_EQ(tag_prior(HtmlTag::kBlockquote), 3);
  EXPECT_EQ(tag_prior(HtmlTag::kUl), -3);
  EXPECT_EQ(tag_prior(HtmlTag::kForm), -3);
  EXPECT_EQ(tag_prior(HtmlTag::kTh), -5);
  EXPECT_EQ(tag_prior(HtmlTag::kH3), -5);
  EXPECT_EQ(tag_prior(HtmlTag::kP), 0);
  EXPECT_EQ(tag_prior(HtmlTag::kOther), 0);
}

TEST(ReadabilityRules, ListItemsHeadlinesAndCaptionsAreNotScoredParagraphsAre) {
  EXPECT_TRUE(scores_text(HtmlTag::kP));
  EXPECT_TRUE(scores_text(HtmlTag::kDiv));
  EXPECT_TRUE(scores_text(HtmlTag::kH2));
  EXPECT_FALSE(scores_text(HtmlTag::kLi));
  EXPECT_FALSE(scores_text(HtmlTag::kH1));
  EXPECT_FALSE(scores_text(HtmlTag::kFigcaption));
  EXPECT_FALSE(scores_text(HtmlTag::kTitle));
}

TEST(ReadabilityRules, OnlyAContainerWithABlockChildWrapsItsLooseText) {
  OutlineElement div{};
  div.tag = HtmlTag::kDiv;
  EXPECT_FALSE(wraps_loose_text(div));  // no block child
  div.flags = kHasBlockChild;
  EXPECT_TRUE(wraps_loose_text(div));
  OutlineElement p = div;
  p.tag = HtmlTag::kP;
  EXPECT_FALSE(wraps_loose_text(p));
  OutlineElement h2 = div;
  h2.tag = HtmlTag::kH2;
  EXPECT_FALSE(wraps_loose_text(h2));
}

TEST(ReadabilityRules, StatsAddAndSubtractFieldByFieldAndHeadingsOfLinksAreLinked) {
  Stats a{.chars = 100, .link_chars = 30, .commas = 2, .p = 1};
  Stats b{.chars = 50, .link_chars = 50, .li = 3};
  Stats sum = a;
  sum.add(b);
  EXPECT_EQ(sum.chars, 150);
  EXPECT_EQ(sum.link_chars, 80);
  EXPECT_EQ(sum.li, 3);
  EXPECT_DOUBLE_EQ(sum.link_density(), 80.0 / 150.0);
  sum.subtract(b);
  EXPECT_EQ(sum.chars, a.chars);
  EXPECT_EQ(sum.link_chars, a.link_chars);
  EXPECT_EQ(sum.li, 0);
  EXPECT_DOUBLE_EQ(Stats{}.link_density(), 0.0);
  EXPECT_TRUE(is_linked(Stats{.chars = 20, .link_chars = 18}));
  EXPECT_FALSE(is_linked(Stats{.chars = 20, .link_chars = 17}));
  EXPECT_FALSE(is_linked(Stats{}));
  EXPECT_TRUE(is_heading(HtmlTag::kH1));
  EXPECT_FALSE(is_heading(HtmlTag::kHeader));
}

}  // namespace
}  // namespace neardup::denoise_internal
