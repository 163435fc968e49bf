// notices: rights notices and credit lines in a page's main text.
//
// A paragraph of at most kNoticeChars code points is
// - a notice when it reserves rights, forbids copying or disclaims the text: "All rights
//   reserved", "may not be published", "subject to copyright", "Disclaimer:", "未經授權，不得轉載",
//   "均为转载", "免责声明", "Все права защищены", "Wszelkie prawa zastrzeżone" and their kin in
//   English, German, French, Spanish, Portuguese, Italian, Polish, Russian, Chinese and
//   Japanese;
// - a credit when it carries "©" or the word "copyright" ("Image copyright Getty Images",
//   "© Fairfax NZ News").
// Both are dropped: they say nothing about the article, and sites print their own, so two
// copies of one story differ by them while two stories of one site share them. A notice past
// the middle of the text also ends the article: what follows it is the site's (reprint and
// correction contacts, comment-widget instructions). Longer paragraphs are prose, whatever
// words they use.
// Pure: safe on any number of threads.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace neardup::denoise_internal {

inline constexpr std::size_t kNoticeChars = 300;

// Removes the notices and credits from paragraphs (the main text, in document order) and
// everything after a notice in the second half of the text. Leaves paragraphs as they are when
// that would remove all of them.
void drop_notices(std::vector<std::string>& paragraphs);

}  // namespace neardup::denoise_internal
