#include "pipeline/denoise/html_outline.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <utility>

#include "common/ascii.h"
#include "pipeline/denoise/html_prescan.h"

namespace neardup::denoise_internal {
namespace {

// Per-tag properties.
enum TagTrait : std::uint8_t {
  kBlock = 1 << 0,        // starts and ends a paragraph; owns the text inside it
  kBreak = 1 << 1,        // ends a paragraph but owns nothing (<br>, <hr>)
  kHidden = 1 << 2,       // never rendered as text
  kBoilerplate = 1 << 3,  // page chrome rather than content
};

struct TagInfo {
  std::string_view name;
  HtmlTag tag;
  std::uint8_t traits;
};

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

TagInfo lookup_tag(std::string_view name) {
  auto it = std::ranges::lower_bound(kTags, name, {}, &TagInfo::name);
  if (it != kTags.end() && it->name == name) return *it;
  return {name, HtmlTag::kOther, 0};
}

std::string_view as_view(const xmlChar* s) {
  return s == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s));
}

// Class and id vocabularies after Mozilla's Readability.js (REGEXPS.unlikelyCandidates,
// okMaybeItsACandidate, positive, negative, byline), extended with a few common chrome names.
// Each pattern is a case-insensitive substring; one pass over the name finds them all.
enum NameBit : std::uint8_t {
  kNameUnlikely = 1,  // chrome: menus, comments, share bars, related links...
  kNameMaybe = 2,     // overrides kNameUnlikely: the name also says "content"
  kNameNegative = 4,  // weight -25
  kNamePositive = 8,  // weight +25
  kNameByline = 16,
  kNameCaption = 32,  // a caption or photo credit, whatever else the name says
};

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

// True when a whitespace-, '-' or '_'-separated token of s equals one of the words. Short
// words such as "ad" would match far too much as substrings ("head", "shadow").
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

// The NameBit set of a lower-cased class or id value.
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

// The ElementFlag bits a class or id with these NameBits sets.
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

// True for a CSS declaration list that hides the element (display:none, visibility:hidden).
bool style_hides(std::string_view style, std::string& scratch) {
  scratch.clear();
  for (char c : style) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    scratch += ascii_lower(c);
  }
  return scratch.find("display:none") != scratch.npos ||
         scratch.find("visibility:hidden") != scratch.npos;
}

std::uint32_t fnv1a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h == 0 ? 1 : h;
}

class OutlineBuilder {
 public:
  OutlineBuilder(std::uint32_t max_nodes, std::chrono::steady_clock::time_point deadline)
      : max_nodes_(max_nodes), deadline_(deadline) {}

  void parse(std::string_view html);
  Outline take() && { return std::move(out_); }

 private:
  // One open element. Counters below are derived from these bits so that end tags undo
  // exactly what start tags did.
  struct Open {
    std::int32_t element;  // -1 when not recorded (past max_nodes)
    std::int32_t owner;    // block owner for text directly inside
    std::uint8_t bits;
  };
  enum OpenBit : std::uint8_t {
    kOpenInvisible = 1,
    kOpenLink = 2,
    kOpenTitle = 4,
    kOpenH1 = 8,
    kOpenBlock = 16,
    kOpenCode = 32,
    kOpenFigure = 64,
  };

  static void on_start(void* ctx, const xmlChar* name, const xmlChar** attrs) {
    static_cast<OutlineBuilder*>(ctx)->start(name, attrs);
  }
  static void on_end(void* ctx, const xmlChar*) { static_cast<OutlineBuilder*>(ctx)->end(); }
  static void on_text(void* ctx, const xmlChar* ch, int len) {
    static_cast<OutlineBuilder*>(ctx)->characters(
        std::string_view(reinterpret_cast<const char*>(ch), static_cast<std::size_t>(len)));
  }
  static void on_ignored(void*, const xmlChar*, int) {}

  void start(const xmlChar* name, const xmlChar** attrs);
  void end();
  TagInfo tag_of(const xmlChar* name);
  void characters(std::string_view text);
  void break_block() {
    ++block_;
    last_space_ = true;
  }
  std::uint16_t classify(const xmlChar** attrs, std::int8_t& weight, std::uint32_t& class_hash,
                         bool& hidden);

  Outline out_;
  std::vector<Open> stack_;
  std::uint32_t max_nodes_;
  std::chrono::steady_clock::time_point deadline_;
  xmlParserCtxtPtr ctxt_ = nullptr;
  bool stopped_ = false;
  int invisible_ = 0, links_ = 0, title_ = 0, h1_ = 0, code_ = 0, figure_ = 0;
  bool title_seen_ = false, h1_seen_ = false;
  std::uint32_t block_ = 0;
  bool last_space_ = true;
  std::string scratch_, scratch2_;
  // lookup_tag's answers by the name's address: libxml2 hands a start tag's name from its
  // dictionary (or a string literal, for the tags it implies), so a name keeps its address for
  // the whole parse. The name is compared too: an address that held another name is a miss.
  struct CachedTag {
    const xmlChar* name = nullptr;
    TagInfo info;
  };
  std::array<CachedTag, 64> tag_cache_{};
};

void OutlineBuilder::parse(std::string_view html) {
  // xmlInitParser is idempotent but not safe to race in old libxml2; a function-local static
  // runs it exactly once.
  static const bool initialised = (xmlInitParser(), true);
  (void)initialised;
  if (html.empty()) return;
  if (html.size() > static_cast<std::size_t>(INT_MAX)) html = html.substr(0, INT_MAX);

  ctxt_ = htmlNewParserCtxt();
  if (ctxt_ == nullptr) return;
  // Our own SAX handler, copied over the context's: no xmlDoc is ever built. Error callbacks
  // stay null, which (with NOERROR/NOWARNING) keeps libxml2 quiet for this context only.
  xmlSAXHandler sax;
  std::memset(&sax, 0, sizeof sax);
  sax.startElement = &OutlineBuilder::on_start;
  sax.endElement = &OutlineBuilder::on_end;
  sax.characters = &OutlineBuilder::on_text;
  sax.ignorableWhitespace = &OutlineBuilder::on_text;  // spaces between inline tags separate words
  sax.cdataBlock = &OutlineBuilder::on_ignored;        // script and style bodies
  *ctxt_->sax = sax;
  ctxt_->userData = this;
  out_.text.reserve(html.size() / 4);
  out_.elements.reserve(std::min<std::size_t>(html.size() / 48, max_nodes_) + 16);
  out_.runs.reserve(html.size() / 64 + 16);
  // Forcing UTF-8 (and IGNORE_ENC) keeps a stale <meta charset> from re-decoding the text.
  constexpr int kOptions = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                           HTML_PARSE_NONET | HTML_PARSE_IGNORE_ENC;
  htmlDocPtr doc = htmlCtxtReadMemory(ctxt_, html.data(), static_cast<int>(html.size()), nullptr,
                                      "UTF-8", kOptions);
  if (doc != nullptr) xmlFreeDoc(doc);  // not expected with this handler
  htmlFreeParserCtxt(ctxt_);
  ctxt_ = nullptr;
  while (!stack_.empty()) end();
  // Elements left open by a stopped parse.
  for (auto& e : out_.elements) {
    if (e.end == 0) e.end = static_cast<std::int32_t>(out_.elements.size());
  }
}

// Reads only the attributes in kOutlineAttributes (html_outline.h): the prescan drops the rest.
std::uint16_t OutlineBuilder::classify(const xmlChar** attrs, std::int8_t& weight,
                                       std::uint32_t& class_hash, bool& hidden) {
  std::uint16_t flags = 0;
  int w = 0;
  if (attrs == nullptr) return 0;
  for (const xmlChar** a = attrs; a[0] != nullptr; a += 2) {
    std::string_view name = as_view(a[0]);
    std::string_view value = as_view(a[1]);
    switch (name.size()) {
      case 2:
        if (name == "id") {
          lower_into(value, scratch_);
          const std::uint8_t bits = name_bits(scratch_);
          flags |= name_flags(bits);
          w += name_weight(bits);
        }
        break;
      case 3:
        if (name == "rel" && value == "author") flags |= kBylineClass;
        break;
      case 4:
        if (name == "role") {
          lower_into(value, scratch_);
          if (scratch_ == "menu" || scratch_ == "menubar" || scratch_ == "complementary" ||
              scratch_ == "navigation" || scratch_ == "alert" || scratch_ == "alertdialog" ||
              scratch_ == "dialog") {
            flags |= kUnlikelyClass;
          }
        }
        break;
      case 5:
        if (name == "class") {
          lower_into(value, scratch_);
          const std::uint8_t bits = name_bits(scratch_);
          flags |= name_flags(bits);
          w += name_weight(bits);
          class_hash = value.empty() ? 0 : fnv1a(value);
        } else if (name == "style") {
          if (style_hides(value, scratch2_)) hidden = true;
        }
        break;
      case 6:
        if (name == "hidden") hidden = true;
        break;
      case 8:
        if (name == "itemprop" && value.find("author") != value.npos) flags |= kBylineClass;
        break;
      case 11:
        if (name == "aria-hidden" && value == "true") hidden = true;
        break;
      default:
        break;
    }
  }
  weight = static_cast<std::int8_t>(w);
  return flags;
}

TagInfo OutlineBuilder::tag_of(const xmlChar* name) {
  CachedTag& cached = tag_cache_[(reinterpret_cast<std::uintptr_t>(name) >> 3) % tag_cache_.size()];
  const std::string_view view = as_view(name);
  if (cached.name != name || cached.info.name != view) cached = {name, lookup_tag(view)};
  return cached.info;
}

void OutlineBuilder::start(const xmlChar* name, const xmlChar** attrs) {
  if (stopped_) return;
  const TagInfo info = tag_of(name);
  const HtmlTag tag = info.tag;
  Open open{-1, stack_.empty() ? -1 : stack_.back().owner, 0};
  bool hidden = (info.traits & kHidden) != 0;

  if (tag == HtmlTag::kMeta && attrs != nullptr && out_.og_title.empty()) {
    std::string_view property, content;
    for (const xmlChar** a = attrs; a[0] != nullptr; a += 2) {
      std::string_view an = as_view(a[0]);
      if (an == "property" || an == "name") property = as_view(a[1]);
      if (an == "content") content = as_view(a[1]);
    }
    if (property == "og:title") append_collapsed(content, out_.og_title);
    trim_trailing_space(out_.og_title);
  }

  std::int8_t weight = 0;
  std::uint32_t class_hash = 0;
  std::uint16_t flags = classify(attrs, weight, class_hash, hidden);

  if (tag == HtmlTag::kTitle && !title_seen_ && invisible_ == 0) {
    title_seen_ = true;
    open.bits |= kOpenTitle;
    ++title_;
  }
  if (hidden) {
    open.bits |= kOpenInvisible;
    ++invisible_;
  }
  if (invisible_ > 0) flags |= kInvisible;
  if (code_ > 0) flags |= kInCode;
  if (figure_ > 0) flags |= kInFigure;
  if (info.traits & kBoilerplate) flags |= kBoilerplateTag;

  if (out_.elements.size() < max_nodes_) {
    const auto index = static_cast<std::int32_t>(out_.elements.size());
    OutlineElement& e = out_.elements.emplace_back();
    e.tag = tag;
    e.class_weight = weight;
    e.flags = flags;
    e.parent = stack_.empty() ? -1 : stack_.back().element;
    e.run_begin = static_cast<std::uint32_t>(out_.runs.size());
    e.class_hash = class_hash;
    if (e.parent >= 0) {
      OutlineElement& parent = out_.elements[static_cast<std::size_t>(e.parent)];
      if (parent.child_count < UINT16_MAX) ++parent.child_count;
      if (info.traits & kBlock) parent.flags |= kHasBlockChild;
    }
    open.element = index;
    if (info.traits & kBlock) open.owner = index;
    // The clock is read every 1024 elements: cheap, and fine-grained enough for a deadline in
    // milliseconds.
    if ((index & 1023) == 1023 && std::chrono::steady_clock::now() > deadline_) {
      out_.timed_out = true;
      stopped_ = true;
      xmlStopParser(ctxt_);
    }
  } else {
    out_.over_max_nodes = true;
    open.owner = -1;
  }

  if (tag == HtmlTag::kA) {
    open.bits |= kOpenLink;
    ++links_;
  }
  if (tag == HtmlTag::kH1 && !h1_seen_ && invisible_ == 0) {
    h1_seen_ = true;
    open.bits |= kOpenH1;
    ++h1_;
  }
  if (tag == HtmlTag::kCode || tag == HtmlTag::kPre) {
    open.bits |= kOpenCode;
    ++code_;
  }
  if (tag == HtmlTag::kFigure) {
    open.bits |= kOpenFigure;
    ++figure_;
  }
  if (info.traits & (kBlock | kBreak)) {
    open.bits |= kOpenBlock;
    break_block();
  }
  stack_.push_back(open);
}

void OutlineBuilder::end() {
  if (stack_.empty()) return;
  const Open open = stack_.back();
  stack_.pop_back();
  if (open.bits & kOpenInvisible) --invisible_;
  if (open.bits & kOpenLink) --links_;
  if (open.bits & kOpenTitle) {
    --title_;
    trim_trailing_space(out_.title);
  }
  if (open.bits & kOpenH1) {
    --h1_;
    trim_trailing_space(out_.first_h1);
  }
  if (open.bits & kOpenCode) --code_;
  if (open.bits & kOpenFigure) --figure_;
  if (open.bits & kOpenBlock) break_block();
  if (open.element >= 0) {
    OutlineElement& e = out_.elements[static_cast<std::size_t>(open.element)];
    e.end = static_cast<std::int32_t>(out_.elements.size());
    e.run_end = static_cast<std::uint32_t>(out_.runs.size());
  }
}

void OutlineBuilder::characters(std::string_view text) {
  if (stopped_) return;
  if (title_ > 0) append_collapsed(text, out_.title);
  if (invisible_ > 0) return;
  if (h1_ > 0) append_collapsed(text, out_.first_h1);

  const std::int32_t element = stack_.empty() ? -1 : stack_.back().element;
  const std::int32_t owner = stack_.empty() ? -1 : stack_.back().owner;
  std::string& buf = out_.text;
  const auto begin = static_cast<std::uint32_t>(buf.size());
  const Collapsed written = append_collapsed(text, buf, last_space_);
  last_space_ = written.space;
  const std::uint32_t chars = written.chars;
  const auto commas = static_cast<std::uint16_t>(written.commas);
  const auto end = static_cast<std::uint32_t>(buf.size());
  if (end == begin) return;
  if (!out_.runs.empty()) {
    TextRun& last = out_.runs.back();
    if (last.end == begin && last.element == element && last.block == block_) {
      last.end = end;
      last.chars += chars;
      last.commas = static_cast<std::uint16_t>(std::min<int>(last.commas + commas, UINT16_MAX));
      return;
    }
  }
  out_.runs.push_back(TextRun{begin, end, element, owner, block_, chars, commas, links_ > 0});
}

}  // namespace

void lower_into(std::string_view s, std::string& out) {
  out.assign(s);
  for (char& c : out) c = ascii_lower(c);
}

Outline parse_outline(std::string_view utf8_html, std::uint32_t max_nodes,
                      std::chrono::steady_clock::time_point deadline, bool prescan) {
  OutlineBuilder builder(max_nodes, deadline);
  thread_local std::string scratch;
  builder.parse(prescan ? prescan_html(utf8_html, scratch) : utf8_html);
  return std::move(builder).take();
}

}  // namespace neardup::denoise_internal
