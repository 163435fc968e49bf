// The rules main_content scores an outline's elements by, after Mozilla's Readability.js:
// the text sums of a subtree (Stats), a prior by tag, which owners' text is scored, and which
// containers wrap their own loose text. Pure functions, internal to main_content.cc.
#pragma once

#include <cstdint>

#include "pipeline/denoise/html_outline.h"

namespace neardup::denoise_internal {

// Subtree sums over the runs and elements kept by an attempt.
struct Stats {
  std::int32_t chars = 0;
  std::int32_t link_chars = 0;
  std::int32_t heading_chars = 0;
  std::int32_t commas = 0;
  std::int32_t p = 0;
  std::int32_t img = 0;
  std::int32_t li = 0;
  std::int32_t input = 0;
  std::int32_t embed = 0;
  std::int32_t tr = 0;
  std::int32_t data_table_marks = 0;  // th, thead, caption
  std::int32_t linked_headings = 0;   // headings whose text is (almost) all one link

  void add(const Stats& o) { combine(o, 1); }
  void subtract(const Stats& o) { combine(o, -1); }
  double link_density() const {
    return chars == 0 ? 0.0 : static_cast<double>(link_chars) / static_cast<double>(chars);
  }
 private:
  // this += sign * o, field by field: every field is a count that sums over a subtree.
  void combine(const Stats& o, std::int32_t sign) {
    static constexpr std::int32_t Stats::*kFields[] = {
        &Stats::chars, &Stats::link_chars, &Stats::heading_chars, &Stats::commas,
        &Stats::p,     &Stats::img,        &Stats::li,            &Stats::input,
        &Stats::embed, &Stats::tr,         &Stats::data_table_marks, &Stats::linked_headings};
    static_assert(sizeof(kFields) / sizeof(kFields[0]) * sizeof(std::int32_t) == sizeof(Stats),
                  "every field is summed");
    for (auto field : kFields) this->*field += sign * o.*field;
  }
};

inline bool is_heading(HtmlTag t) { return t >= HtmlTag::kH1 && t <= HtmlTag::kH6; }

// A heading whose text is a link (allowing a bullet or a counter beside it) titles a teaser for
// another page; article subheadings are not links.
inline bool is_linked(const Stats& heading) {
  return heading.chars > 0 && 10 * heading.link_chars >= 9 * heading.chars;
}

// Readability.js _initializeNode: a prior by tag.
double tag_prior(HtmlTag t);

// Paragraph-like owners whose text is scored (Readability.js DEFAULT_TAGS_TO_SCORE plus the
// divs it turns into paragraphs). List items and table headers are left out: scoring them
// lifts navigation lists.
bool scores_text(HtmlTag t);

// A container whose own loose text Readability would wrap in <p>s that score the container
// itself rather than its parent.
bool wraps_loose_text(const OutlineElement& e);

}  // namespace neardup::denoise_internal
