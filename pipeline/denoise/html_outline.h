// html_outline: a compact, read-only view of an HTML page, built for main-text extraction.
//
// libxml2's HTML parser runs in SAX mode (no xmlDoc is built): its events are recorded as a
// flat pre-order array of elements and the visible text as runs into one buffer, whitespace
// already collapsed. Text inside invisible elements (script, style, noscript, template, svg,
// iframe, title, hidden elements, ...) is never recorded. The elements carry only what the
// extractor needs: tag, parent, subtree extent, and class/id verdicts computed while the
// attributes are at hand, so no attribute string outlives the parse.
// Pure: each call owns its parser context; safe on any number of threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/denoise/collapse.h"

namespace neardup::denoise_internal {

// The tags the extractor tells apart; everything else is kOther.
enum class HtmlTag : std::uint8_t {
  kOther,
  kA,
  kAddress,
  kArticle,
  kAside,
  kAudio,
  kBlockquote,
  kBody,
  kBr,
  kButton,
  kCanvas,
  kCaption,
  kCenter,
  kCode,
  kDd,
  kDetails,
  kDialog,
  kDiv,
  kDl,
  kDt,
  kEmbed,
  kFieldset,
  kFigcaption,
  kFigure,
  kFooter,
  kForm,
  kH1,
  kH2,
  kH3,
  kH4,
  kH5,
  kH6,
  kHead,
  kHeader,
  kHr,
  kHtml,
  kIframe,
  kImg,
  kInput,
  kLi,
  kMain,
  kMenu,
  kMeta,
  kNav,
  kNoscript,
  kObject,
  kOl,
  kOption,
  kP,
  kPre,
  kScript,
  kSection,
  kSelect,
  kStyle,
  kSummary,
  kSvg,
  kTable,
  kTbody,
  kTd,
  kTemplate,
  kTextarea,
  kTfoot,
  kTh,
  kThead,
  kTitle,
  kTr,
  kUl,
  kVideo,
};

// OutlineElement::flags bits.
enum ElementFlag : std::uint16_t {
  kBoilerplateTag = 1 << 0,  // nav, header, footer, aside, form, button, select, dialog, menu
  kUnlikelyClass = 1 << 1,   // class/id/role names a non-content block (menu, comment, share...)
  kBylineClass = 1 << 2,     // class/id/rel/itemprop names an author line
  kHasBlockChild = 1 << 3,   // some child element is block-level
  kInvisible = 1 << 4,       // the element or an ancestor is not rendered
  kInCode = 1 << 5,          // has a code or pre ancestor (class names there are not chrome)
  kInFigure = 1 << 6,        // has a figure ancestor
  kCaptionClass = 1 << 7,    // class/id names a caption or a photo credit
};

struct OutlineElement {
  HtmlTag tag = HtmlTag::kOther;
  std::int8_t class_weight = 0;  // readability's class/id weight: -50..50
  std::uint16_t flags = 0;       // ElementFlag bits
  std::int32_t parent = -1;      // -1 for a root
  std::int32_t end = 0;          // one past the last descendant (pre-order index)
  std::uint32_t run_begin = 0;   // the runs of the subtree are [run_begin, run_end)
  std::uint32_t run_end = 0;
  std::uint32_t class_hash = 0;   // hash of the class attribute, 0 when absent
  std::uint16_t child_count = 0;  // element children, saturating
};

// A piece of visible text: text[begin, end). Consecutive runs with the same block form one
// paragraph; a block-level tag or <br> between two runs gives them different blocks.
struct TextRun {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::int32_t element = -1;  // innermost element; -1 past the max_nodes limit
  std::int32_t owner = -1;    // nearest block-level ancestor-or-self; -1 past max_nodes
  std::uint32_t block = 0;
  std::uint32_t chars = 0;   // code points
  std::uint16_t commas = 0;  // , ， ، 、
  bool in_link = false;      // inside an <a>
};

struct Outline {
  std::vector<OutlineElement> elements;  // pre-order
  std::vector<TextRun> runs;             // document order
  std::string text;                      // the runs' bytes
  std::string title;                     // first <title>, whitespace-normalised
  std::string og_title;                  // <meta property="og:title">
  std::string first_h1;                  // text of the first visible <h1>
  bool over_max_nodes = false;  // elements past max_nodes were not recorded (runs still were)
  bool timed_out = false;       // parsing stopped at the deadline; text is partial
};

// The attributes the outline reads, lower-case (besides every attribute of <meta>: og:title).
// The prescan leaves the others out; an attribute read here must be added to the list.
inline constexpr std::string_view kOutlineAttributes[] = {
    "id", "class", "rel", "role", "style", "hidden", "itemprop", "aria-hidden"};

// Parses UTF-8 HTML (any declared charset is ignored). Records at most max_nodes elements;
// stops parsing at the deadline. Never fails: malformed HTML is repaired by libxml2's
// recovery rules, and an empty input gives an empty outline. The input goes through
// prescan_html first (html_prescan.h); `prescan` false parses it as it is (to compare).
Outline parse_outline(std::string_view utf8_html, std::uint32_t max_nodes,
                      std::chrono::steady_clock::time_point deadline, bool prescan = true);

// Appends the paragraphs formed by runs[begin, end) for which keep(run) is true: runs of one
// block are concatenated, whitespace collapsed and trimmed; empty paragraphs are skipped.
template <typename Keep>
void append_paragraphs(const Outline& outline, std::size_t begin, std::size_t end, Keep keep,
                       std::vector<std::string>& paragraphs);

// Copies s into out (reused, so no allocation per call) with ASCII letters lower-cased.
void lower_into(std::string_view s, std::string& out);

// Removes one trailing space, if any.
inline void trim_trailing_space(std::string& s) {
  if (!s.empty() && s.back() == ' ') s.pop_back();
}

template <typename Keep>
void append_paragraphs(const Outline& outline, std::size_t begin, std::size_t end, Keep keep,
                       std::vector<std::string>& paragraphs) {
  std::string current;
  std::uint32_t block = 0;
  bool open = false;
  auto flush = [&] {
    trim_trailing_space(current);
    if (!current.empty()) paragraphs.push_back(std::move(current));
    current.clear();
  };
  for (std::size_t i = begin; i < end; ++i) {
    const TextRun& run = outline.runs[i];
    if (!keep(run)) continue;
    if (open && run.block != block) flush();
    open = true;
    block = run.block;
    append_collapsed(std::string_view(outline.text).substr(run.begin, run.end - run.begin),
                     current);
  }
  flush();
}

}  // namespace neardup::denoise_internal
