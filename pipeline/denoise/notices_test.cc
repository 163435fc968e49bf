#include "pipeline/denoise/notices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace neardup::denoise_internal {
namespace {

using ::testing::ElementsAre;

const std::string kProse =
    "The council voted on Tuesday to expand the river park, adding four hectares of wetland, a "
    "boardwalk and a small visitor centre, after two years of public hearings.";

std::vector<std::string> dropped(std::vector<std::string> paragraphs) {
  drop_notices(paragraphs);
  return paragraphs;
}

TEST(Notices, RightsNoticePastTheMiddleEndsTheText) {
  EXPECT_THAT(dropped({kProse, kProse + " Again.",
                       "Copyright 2012 The Associated Press. All rights reserved. This material "
                       "may not be published, broadcast, rewritten or redistributed.",
                       "For more information about reprints & permissions, visit our FAQ.",
                       "To post a comment, log into Facebook."}),
              ElementsAre(kProse, kProse + " Again."));
}

TEST(Notices, RightsNoticeInTheFirstHalfIsDroppedAlone) {
  EXPECT_THAT(dropped({"ALL RIGHTS RESERVED", kProse, kProse + " Again."}),
              ElementsAre(kProse, kProse + " Again."));
}

TEST(Notices, NoticesInOtherLanguagesAreRecognised) {
  for (const std::string notice :
       {"(內容由新浪北京提供。未經授權，不得轉載。)",
        "• 凡注明为其他媒体来源的信息，均为转载自其他媒体，转载并不代表本网赞同其观点。",
        "© 2012 Gazeta. Wszelkie prawa zastrzeżone.", "Все права защищены.",
        "Перепечатка материалов только с разрешения редакции.", "Alle Rechte vorbehalten.",
        "Tous droits réservés.", "本サイトの記事の無断転載を禁じます。",
        "免责声明：本文仅代表作者个人观点，与本网无关。",
        "Disclaimer: the views expressed are the author's own."}) {
    EXPECT_THAT(dropped({kProse, notice, "site text after the notice"}), ElementsAre(kProse))
        << notice;
  }
}

// Phrases that begin with the same two bytes are each compared, whichever sorts first.
TEST(Notices, PhrasesSharingTheirFirstBytesAreEachFound) {
  for (const std::string notice :
       {"It may not be copied.", "It may not be published.", "It may not be reproduced.",
        "It may not be republished.", "\u514D\u8D23\u58F0\u660E", "\u514D\u8CAC\u8072\u660E",
        "\u514D\u8CAC\u4E8B\u9805", "\u4E0D\u5F97\u8F6C\u8F7D", "\u4E0D\u5F97\u8F49\u8F09"}) {
    EXPECT_THAT(dropped({notice, kProse, kProse + " Again."}),
                ElementsAre(kProse, kProse + " Again."))
        << notice;
  }
  EXPECT_THAT(dropped({"It may not be.", kProse, kProse + " Again."}),
              ElementsAre("It may not be.", kProse, kProse + " Again."));
}

TEST(Notices, PhrasesAreFoundAtEitherEndOfAParagraphAndAloneInIt) {
  for (const std::string credit :
       {"©", "copyright", "Copyright by the author", "Photo: copyright", "x©"}) {
    EXPECT_THAT(dropped({kProse, credit, kProse + " Again."}),
                ElementsAre(kProse, kProse + " Again."))
        << credit;
  }
  for (const std::string kept : {"c", "copyrigh", "opyright", "rights reserved"}) {
    EXPECT_THAT(dropped({kProse, kept, kProse + " Again."}),
                ElementsAre(kProse, kept, kProse + " Again."))
        << kept;
  }
}

TEST(Notices, CreditLinesAreDroppedWithoutEndingTheText) {
  EXPECT_THAT(dropped({"Image copyright Getty Images", kProse, "© Fairfax NZ News",
                       "The last paragraph of the story."}),
              ElementsAre(kProse, "The last paragraph of the story."));
}

TEST(Notices, LongParagraphsAreProseWhateverWordsTheyUse) {
  const std::string essay =
      kProse +
      " The label said all rights reserved on every sleeve, and the copyright in the "
      "recordings stayed with the company that paid for the sessions, which is why the "
      "band could not re-release them without permission for twenty years.";
  ASSERT_GT(essay.size(), kNoticeChars);
  EXPECT_THAT(dropped({kProse, essay}), ElementsAre(kProse, essay));
}

TEST(Notices, TextOfNothingButNoticesIsLeftAlone) {
  EXPECT_THAT(dropped({"© Amazon", "All rights reserved."}),
              ElementsAre("© Amazon", "All rights reserved."));
  EXPECT_THAT(dropped({}), ElementsAre());
}

}  // namespace
}  // namespace neardup::denoise_internal
