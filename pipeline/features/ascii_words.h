// The words of a line of ASCII text as ICU's root word-break rules (UAX #29 with CLDR's root
// tailoring) split it, without ICU: most lines of most pages are ASCII once normalised, and
// ICU's rule-driven iterator was the largest single cost of tokenising them.
//
// For the characters such a line holds, the rules come down to: letters and digits run together
// (WB5, WB8-WB10); '.' and '\'' between two letters (WB6, WB7), and '.', '\'', ',' and ';'
// between two digits (WB11, WB12), continue the run; every other character breaks (':' too,
// which the root tailoring takes out of MidLetter). Lines with '_' (ExtendNumLet, whose rules
// this does not follow), '@' (which ICU 72's root rules treat as a letter, alone too) or any
// non-ASCII character are left to ICU. Pure.
#pragma once

#include <cstdint>
#include <functional>

namespace neardup::features_internal {

// Calls word(start, end) for each segment of chars[0, length) that holds a letter or a digit
// (the segments ICU gives a word or number rule status), in order. False, having called
// nothing, when the line holds a character outside ASCII, '_', '@' or a line break.
bool ascii_words(const char16_t* chars, std::int32_t length,
                 const std::function<void(std::int32_t, std::int32_t)>& word);

}  // namespace neardup::features_internal
