// Built-in stop words for features.stop_words (docs/configuration.md).
//
// Small lists of the most frequent function words of English, German, French, Spanish,
// Portuguese, Polish, Russian, Chinese and Japanese, already in nfkc_cf form (lower case,
// "ß" as "ss"), i.e. as tokens come out of the word break iterator. The lists are merged into
// one set rather than chosen by a language guess: a page's tokens are checked against all of
// them. The few cross-language homographs ("die", "was", "on", "a") are then dropped in every
// language, which costs little because a stop word carries almost no signal in any of them.
#pragma once

#include <span>
#include <string_view>

namespace neardup {

// True if token (normalised UTF-8) is in the built-in stop-word set.
bool is_stop_word(std::string_view token);

// Every built-in stop word, in list order (for tests and documentation).
std::span<const std::string_view> builtin_stop_words();

}  // namespace neardup
