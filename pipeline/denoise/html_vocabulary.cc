#include "pipeline/denoise/html_vocabulary.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "common/ascii.h"

namespace neardup::denoise_internal {
namespace {

// Sorted by name for binary search.
constexpr std::array kTags = std::to_array<TagInfo>({
    {"a", HtmlTag::kA, 0},
    {"address", HtmlTag::kAddress, kBlock},
    {"article", HtmlTag::kArticle, kBlock},
    {"aside", HtmlTag::kAside, kBlock | kBoilerplate},
    {"audio", HtmlTag::kAudio, kHidden},
    {"blockquote", HtmlTag::kBlockquote, kBlock},
    {"body", HtmlTag::kBody, kBlock},
    {"br", HtmlTag::kBr, kBreak},
    {"button", HtmlTag::kButton, kBoilerplate},
    {"canvas", HtmlTag::kCanvas, kHidden},
    {"caption", HtmlTag::kCaption, kBlock},
    {"center", HtmlTag::kCenter, kBlock},
    {"code", HtmlTag::kCode, 0},
    {"dd", HtmlTag::kDd, kBlock},
    {"details", HtmlTag::kDetails, kBlock},
    {"dialog", HtmlTag::kDialog, kBlock | kBoilerplate},
    {"div", HtmlTag::kDiv, kBlock},
    {"dl", HtmlTag::kDl, kBlock},
    {"dt", HtmlTag::kDt, kBlock},
    {"embed", HtmlTag::kEmbed, kHidden},
    {"fieldset", HtmlTag::kFieldset, kBlock},
    {"figcaption", HtmlTag::kFigcaption, kBlock},
    {"figure", HtmlTag::kFigure, kBlock},
    {"footer", HtmlTag::kFooter, kBlock | kBoilerplate},
    {"form", HtmlTag::kForm, kBlock | kBoilerplate},
    {"h1", HtmlTag::kH1, kBlock},
    {"h2", HtmlTag::kH2, kBlock},
    {"h3", HtmlTag::kH3, kBlock},
    {"h4", HtmlTag::kH4, kBlock},
    {"h5", HtmlTag::kH5, kBlock},
    {"h6", HtmlTag::kH6, kBlock},
    {"head", HtmlTag::kHead, kBlock},
    {"header", HtmlTag::kHeader, kBlock | kBoilerplate},
    {"hgroup", HtmlTag::kOther, kBlock},
    {"hr", HtmlTag::kHr, kBreak},
    {"html", HtmlTag::kHtml, kBlock},
    {"iframe", HtmlTag::kIframe, kHidden},
    {"img", HtmlTag::kImg, 0},
    {"input", HtmlTag::kInput, kHidden},
    {"legend", HtmlTag::kOther, kBlock},
    {"li", HtmlTag::kLi, kBlock},
    {"main", HtmlTag::kMain, kBlock},
    {"menu", HtmlTag::kMenu, kBlock | kBoilerplate},
    {"meta", HtmlTag::kMeta, kHidden},
    {"nav", HtmlTag::kNav, kBlock | kBoilerplate},
    {"noscript", HtmlTag::kNoscript, kBlock | kHidden},
    {"object", HtmlTag::kObject, kHidden},
    {"ol", HtmlTag::kOl, kBlock},
    {"option", HtmlTag::kOption, kBlock},
    {"p", HtmlTag::kP, kBlock},
    {"picture", HtmlTag::kOther, 0},
    {"pre", HtmlTag::kPre, kBlock},
    {"script", HtmlTag::kScript, kHidden},
    {"section", HtmlTag::kSection, kBlock},
    {"select", HtmlTag::kSelect, kBlock | kBoilerplate},
    {"style", HtmlTag::kStyle, kHidden},
    {"summary", HtmlTag::kSummary, kBlock},
    {"svg", HtmlTag::kSvg, kHidden},
    {"table", HtmlTag::kTable, kBlock},
    {"tbody", HtmlTag::kTbody, kBlock},
    {"td", HtmlTag::kTd, kBlock},
    {"template", HtmlTag::kTemplate, kHidden},
    {"textarea", HtmlTag::kTextarea, kHidden},
    {"tfoot", HtmlTag::kTfoot, kBlock},
    {"th", HtmlTag::kTh, kBlock},
    {"thead", HtmlTag::kThead, kBlock},
    {"title", HtmlTag::kTitle, kBlock | kHidden},
    {"tr", HtmlTag::kTr, kBlock},
    {"ul", HtmlTag::kUl, kBlock},
    {"video", HtmlTag::kVideo, kHidden},
});

static_assert(std::ranges::is_sorted(kTags, {}, &TagInfo::name));

struct NamePattern {
  std::string_view text;
  std::uint8_t bits;
};

constexpr std::array kNamePatterns = std::to_array<NamePattern>({
    {"-ad-", kNameUnlikely | kNameNegative},
    {"ad-break", kNameUnlikely},
    {"agegate", kNameUnlikely},
    {"ai2html", kNameUnlikely},
    {"and", kNameMaybe},
    {"article", kNameMaybe | kNamePositive},
    {"author", kNameByline},
    {"banner", kNameUnlikely | kNameNegative},
    {"blog", kNamePositive},
    {"body", kNameMaybe | kNamePositive},
    {"breadcrumb", kNameUnlikely},
    {"byline", kNameByline},
    {"caption", kNameCaption},
    {"column", kNameMaybe},
    {"combx", kNameUnlikely | kNameNegative},
    {"com-", kNameNegative},
    {"comment", kNameUnlikely | kNameNegative},
    {"community", kNameUnlikely},
    {"consent", kNameUnlikely},
    {"contact", kNameNegative},
    {"content", kNameMaybe | kNamePositive},
    {"cookie", kNameUnlikely},
    {"cover-wrap", kNameUnlikely},
    {"credit", kNameCaption},
    {"dateline", kNameByline},
    {"disqus", kNameUnlikely},
    {"entry", kNamePositive},
    {"extra", kNameUnlikely},
    {"footer", kNameUnlikely | kNameNegative},
    {"gdpr", kNameUnlikely | kNameNegative},
    {"h-entry", kNamePositive},
    {"header", kNameUnlikely},
    {"hidden", kNameNegative},
    {"legends", kNameUnlikely},
    {"main", kNameMaybe | kNamePositive},
    {"masthead", kNameNegative},
    {"mathjax", kNameMaybe},
    {"media", kNameNegative},
    {"menu", kNameUnlikely},
    {"meta", kNameNegative},
    {"newsletter", kNameUnlikely},
    {"outbrain", kNameNegative},
    {"page", kNamePositive},
    {"pagination", kNameUnlikely | kNamePositive},
    {"popup", kNameUnlikely},
    {"post", kNamePositive},
    {"promo", kNameUnlikely | kNameNegative},
    {"related", kNameUnlikely | kNameNegative},
    {"remark", kNameUnlikely},
    {"replies", kNameUnlikely},
    {"rss", kNameUnlikely},
    {"scroll", kNameNegative},
    {"shadow", kNameMaybe},
    {"share", kNameUnlikely | kNameNegative},
    {"sharing", kNameUnlikely},
    {"shopping", kNameNegative},
    {"shoutbox", kNameUnlikely | kNameNegative},
    {"sidebar", kNameUnlikely | kNameNegative},
    {"skyscraper", kNameUnlikely | kNameNegative},
    {"social", kNameUnlikely},
    {"sponsor", kNameUnlikely | kNameNegative},
    {"story", kNamePositive},
    {"subscribe", kNameUnlikely},
    {"supplemental", kNameUnlikely},
    {"tags", kNameNegative},
    {"text", kNamePositive},
    {"widget", kNameNegative},
    {"writtenby", kNameByline},
    {"yom-remote", kNameUnlikely},
});

// The patterns ordered by their first two bytes, and kPairFirst[c1 * 128 + c2]: the index of
// the first of them whose first two bytes are (c1, c2) or after, so that the patterns that can
// start at a position are one table lookup away (most pairs of letters start none).
constexpr auto kPatternsByPair = [] {
  auto sorted = kNamePatterns;
  std::ranges::sort(sorted, {}, [](const NamePattern& p) { return p.text.substr(0, 2); });
  return sorted;
}();
static_assert(std::ranges::all_of(kNamePatterns, [](const NamePattern& p) {
  return p.text.size() >= 3 && static_cast<unsigned char>(p.text[0]) < 128 &&
         static_cast<unsigned char>(p.text[1]) < 128;
}));
constexpr auto kPairFirst = [] {
  std::array<std::uint8_t, 128 * 128 + 1> first{};
  std::size_t k = 0;
  for (std::size_t pair = 0; pair < first.size(); ++pair) {
    while (k < kPatternsByPair.size() &&
           static_cast<std::size_t>(kPatternsByPair[k].text[0]) * 128 +
                   static_cast<std::size_t>(kPatternsByPair[k].text[1]) <
               pair) {
      ++k;
    }
    first[pair] = static_cast<std::uint8_t>(k);
  }
  return first;
}();
static_assert(kNamePatterns.size() < 256);

}  // namespace

TagInfo lookup_tag(std::string_view name) {
  auto it = std::ranges::lower_bound(kTags, name, {}, &TagInfo::name);
  if (it != kTags.end() && it->name == name) return *it;
  return {name, HtmlTag::kOther, 0};
}

// Short words such as "ad" would match far too much as substrings ("head", "shadow").
bool has_token(std::string_view s, std::initializer_list<std::string_view> words) {
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '-' || s[i] == '_')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '-' && s[j] != '_') ++j;
    std::string_view token = s.substr(i, j - i);
    if (!token.empty() && std::ranges::find(words, token) != words.end()) return true;
    i = j;
  }
  return false;
}

std::uint8_t name_bits(std::string_view n) {
  std::uint8_t bits = 0;
  const auto* s = reinterpret_cast<const unsigned char*>(n.data());
  for (std::size_t i = 0; i + 3 <= n.size(); ++i) {  // every pattern has three bytes or more
    if ((s[i] | s[i + 1]) >= 128) continue;
    const std::size_t pair = std::size_t{s[i]} * 128 + s[i + 1];
    for (std::size_t k = kPairFirst[pair]; k < kPairFirst[pair + 1]; ++k) {
      const std::string_view p = kPatternsByPair[k].text;
      if (p.size() <= n.size() - i && std::memcmp(s + i + 2, p.data() + 2, p.size() - 2) == 0) {
        bits |= kPatternsByPair[k].bits;
      }
    }
  }
  if (has_token(n, {"ad", "ads", "advert", "advertisement", "nav", "navbar", "navigation", "teaser",
                    "teasers", "tags", "toolbar"})) {
    bits |= kNameUnlikely;
  }
  return bits;
}

bool is_unlikely(std::uint8_t bits) { return (bits & kNameUnlikely) && !(bits & kNameMaybe); }

std::uint16_t name_flags(std::uint8_t bits) {
  std::uint16_t flags = 0;
  if (is_unlikely(bits)) flags |= kUnlikelyClass;
  if (bits & kNameByline) flags |= kBylineClass;
  if (bits & kNameCaption) flags |= kCaptionClass;
  return flags;
}

int name_weight(std::uint8_t bits) {
  return ((bits & kNamePositive) ? 25 : 0) - ((bits & kNameNegative) ? 25 : 0);
}

bool style_hides(std::string_view style, std::string& scratch) {
  scratch.clear();
  for (char c : style) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    scratch += ascii_lower(c);
  }
  return scratch.find("display:none") != scratch.npos ||
         scratch.find("visibility:hidden") != scratch.npos;
}

}  // namespace neardup::denoise_internal
