// The vocabulary the outline reads a page by: each tag's traits (block, break, hidden,
// boilerplate) and the verdicts on an element's class and id names (unlikely chrome, byline,
// caption, positive or negative weight), and whether a style attribute hides the element.
// Pure tables and functions, internal to the outline (html_outline.cc).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "pipeline/denoise/html_outline.h"

namespace neardup::denoise_internal {

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

// The tag's properties; {name, HtmlTag::kOther, 0} for a tag the table does not hold. `name`
// is lower-case.
TagInfo lookup_tag(std::string_view name);

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

// The NameBit set of a lower-cased class or id value.
std::uint8_t name_bits(std::string_view name);
// Unlikely chrome, and not saved by a name that also says "content".
bool is_unlikely(std::uint8_t bits);
// The ElementFlag bits a class or id with these NameBits sets.
std::uint16_t name_flags(std::uint8_t bits);
// +25 for a positive name, -25 for a negative one (both: 0).
int name_weight(std::uint8_t bits);
// True when a whitespace-, '-' or '_'-separated token of s equals one of the words.
bool has_token(std::string_view s, std::initializer_list<std::string_view> words);
// True for a CSS declaration list that hides the element (display:none, visibility:hidden);
// `scratch` is working space.
bool style_hides(std::string_view style, std::string& scratch);

}  // namespace neardup::denoise_internal
