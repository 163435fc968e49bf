// main_content: picks the main text of an Outline by content scoring.
//
// The scoring follows Mozilla's Readability.js (itself after Arc90's readability): every
// paragraph of 25+ characters scores 1 + its commas + one point per 100 characters (max 3);
// the score goes to its container in full, to the grandparent by half and further up by
// 1/(3 * level). Containers start from a tag prior and a class/id weight, are scaled by
// (1 - link density), the best one wins, and siblings that score well or read like prose
// join it. Inside the result, lists, tables and divs that look like link farms, forms or
// media boxes are removed bottom-up ("clean conditionally"). When that yields under 150
// characters the page is retried with fewer heuristics, keeping the longest result.
// Departures from Readability.js, each measured on AEB and the synthetic templates: class/id
// chrome is stripped inside layout tables too, author lines up to 250 characters are dropped,
// figure captions, elements named as captions or photo credits and <h1> headlines are not body
// text. Cleaning also removes teasers for other pages (a card or list whose headings are links
// with at most 200 characters of blurb each; an item of at most 400 characters that links
// elsewhere and is cut off with an ellipsis, before an optional "more" link) and then the
// headings left without a section (no kept text follows them inside the block that holds them
// and the text before them).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/denoise/html_outline.h"

namespace neardup::denoise_internal {

enum class MainContentError {
  kNoMainBlock,  // no paragraph scored anywhere, or the chosen block had no text
  kDeadline,     // the deadline passed during scoring
};

// The main paragraphs of the outline, in document order. outline must be complete (not
// over_max_nodes). Returns nullopt and sets error when no block qualifies or the deadline
// passes.
std::optional<std::vector<std::string>> find_main_content(
    const Outline& outline, std::chrono::steady_clock::time_point deadline,
    MainContentError& error);

// Every visible paragraph of the outline, in document order.
std::vector<std::string> all_visible_paragraphs(const Outline& outline);

}  // namespace neardup::denoise_internal
