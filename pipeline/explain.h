// What two main texts share, for a person checking a verdict (`neardup compare --explain`): the
// paragraphs both hold, and the longest runs of words they share, each with where it stands in
// either text. Words are the signatures' own tokens (features.h: normalised, case-folded,
// punctuation and numbers dropped), so "shared" means what the signatures saw as shared, not
// byte equality.
//
//   Explanation e = explain_texts(a.text, b.text, config.features, {});
//   for (const SharedRun& run : e.runs) ...   // longest first
//
// Pure: no I/O and no shared state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace neardup {

// Where a stretch of words starts in one text: its paragraph (0-based, paragraphs are the
// text's '\n'-separated lines) and its first word, counted over the whole text (0-based).
struct TextPosition {
  std::size_t paragraph = 0;
  std::size_t word = 0;
};

// A paragraph of A whose words are exactly those of a paragraph of B.
struct SharedParagraph {
  TextPosition a, b;
  std::size_t words = 0;
  std::string text;  // A's paragraph as written, cut to ExplainOptions::preview_bytes
};

// A maximal run of consecutive words found in both texts (it may cross paragraphs).
struct SharedRun {
  TextPosition a, b;
  std::size_t words = 0;
  std::string text;  // the run's words, space-separated, cut to ExplainOptions::preview_bytes
};

struct ExplainOptions {
  std::size_t min_run_words = 8;      // shorter common runs are chance, not copying
  std::size_t min_paragraph_words = 3;  // shorter paragraphs ("Share", "Read more") are chrome
  std::size_t max_items = 10;         // of each list: the longest ones
  std::size_t preview_bytes = 96;     // of each text, cut at a UTF-8 character boundary
};

struct Explanation {
  std::size_t words_a = 0, words_b = 0;
  // Words of each text inside the runs below (all of them, not only the listed ones): the share
  // of A found in B is covered_a / words_a — near 1 for a copy or an excerpt of B.
  std::size_t covered_a = 0, covered_b = 0;
  std::size_t paragraphs_shared = 0;         // all of them; `paragraphs` lists max_items
  std::vector<SharedParagraph> paragraphs;   // longest first, ties in A's order
  std::vector<SharedRun> runs;               // longest first, ties in A's order; never overlapping
};

// Compares two main texts (paragraphs separated by '\n') under the tokenisation of `features`.
Explanation explain_texts(std::string_view a, std::string_view b, const FeaturesConfig& features,
                          const ExplainOptions& options);

}  // namespace neardup
