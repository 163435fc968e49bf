#include "pipeline/denoise/notices.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/denoise/html_outline.h"

namespace neardup::denoise_internal {
namespace {

// Phrases that reserve rights or forbid copying, in lower case, matched ignoring ASCII case.
// Words that may start a sentence are left out where the rest of the phrase is specific
// enough ("права защищены" of "Все права защищены"); Russian "перепечатка" is listed in both
// cases because only ASCII is case-folded.
constexpr auto kNoticePhrases = std::to_array<std::string_view>({
    // English
    "all rights reserved",
    "may not be published",
    "may not be reproduced",
    "may not be republished",
    "may not be copied",
    "subject to copyright",
    "disclaimer:",
    // German, French, Spanish, Portuguese, Italian
    "rechte vorbehalten",
    "droits réservés",
    "derechos reservados",
    "direitos reservados",
    "diritti riservati",
    "riproduzione riservata",
    // Polish, Russian
    "prawa zastrzeżone",
    "права защищены",
    "перепечатк",
    "Перепечатк",
    // Chinese (simplified and traditional), Japanese
    "版权所有",
    "版權所有",
    "未经授权",
    "未經授權",
    "不得转载",
    "不得轉載",
    "禁止转载",
    "禁止轉載",
    "均为转载",
    "均為轉載",
    "转载请注明",
    "轉載請註明",
    "免责声明",
    "免責聲明",
    "無断転載",
    "無断複製",
    "免責事項",
});

constexpr auto kCreditMarks = std::to_array<std::string_view>({"©", "copyright"});

// A list of phrases searched for in one pass over a text (every phrase is two bytes or more): a
// position is looked at only when its next two bytes begin some phrase (a bit of `starts_`),
// and then only the phrases that begin with them are compared (`by_pair_`, sorted by those two
// bytes).
class PhraseSet {
 public:
  explicit PhraseSet(std::span<const std::string_view> phrases) {
    for (std::string_view phrase : phrases) {
      starts_.set(pair_at(phrase, 0));
      by_pair_.emplace_back(pair_at(phrase, 0), phrase);
    }
    std::ranges::sort(by_pair_);
  }

  bool found_in(std::string_view text) const {
    for (std::size_t i = 0; i + 1 < text.size(); ++i) {
      const std::size_t pair = pair_at(text, i);
      if (!starts_[pair]) continue;
      const std::string_view rest = text.substr(i);
      for (auto it = std::ranges::lower_bound(by_pair_, pair, {}, &Entry::first);
           it != by_pair_.end() && it->first == pair; ++it) {
        if (rest.starts_with(it->second)) return true;
      }
    }
    return false;
  }

 private:
  using Entry = std::pair<std::size_t, std::string_view>;
  static std::size_t pair_at(std::string_view text, std::size_t i) {
    return static_cast<unsigned char>(text[i]) << 8 | static_cast<unsigned char>(text[i + 1]);
  }

  std::vector<Entry> by_pair_;
  std::bitset<1 << 16> starts_;
};

std::size_t code_points(std::string_view text) {
  return static_cast<std::size_t>(std::ranges::count_if(
      text, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

void drop_notices(std::vector<std::string>& paragraphs) {
  static const PhraseSet notices(kNoticePhrases), credits(kCreditMarks);
  std::size_t total = 0;
  for (const std::string& p : paragraphs) total += code_points(p);
  std::vector<std::uint8_t> drop(paragraphs.size(), 0);
  std::size_t end = paragraphs.size();  // a notice past the middle ends the text
  std::size_t before = 0;               // code points of the paragraphs before paragraph i
  std::string lower;
  for (std::size_t i = 0; i < paragraphs.size(); ++i) {
    const std::size_t length = code_points(paragraphs[i]);
    if (length <= kNoticeChars) {
      lower_into(paragraphs[i], lower);
      if (notices.found_in(lower)) {
        drop[i] = 1;
        if (2 * before >= total) {
          end = i;
          break;
        }
      } else if (credits.found_in(lower)) {
        drop[i] = 1;
      }
    }
    before += length;
  }
  const auto kept_count =
      std::count(drop.begin(), drop.begin() + static_cast<std::ptrdiff_t>(end), 0);
  if (kept_count == 0 || static_cast<std::size_t>(kept_count) == paragraphs.size()) return;
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < end; ++i) {
    if (!drop[i]) kept.push_back(std::move(paragraphs[i]));
  }
  paragraphs = std::move(kept);
}

}  // namespace neardup::denoise_internal
