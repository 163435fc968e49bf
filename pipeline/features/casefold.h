// casefold: NFKC_Casefold (nfkc_cf), the normalisation features applies to every text before it
// is split into words, without ICU for the texts that need none of it beyond lowering ASCII
// letters.
//
// Text made only of ASCII, CJK unified ideographs (U+4E00-9FFF), hiragana (U+3041-3096),
// katakana (U+30A1-30FA) and the ideographic comma and full stop (U+3001, U+3002) comes out of
// nfkc_cf with its ASCII letters lowered and nothing else changed: none of these characters
// has a compatibility or case mapping of its own, is ignorable, or composes with a neighbour.
// That is most English, Chinese and Japanese text once typography.h has folded its quotes and
// dashes. Pure.
#pragma once

#include <unicode/unistr.h>

#include <string_view>

namespace neardup::features_internal {

// When every character of text is one of those above: writes nfkc_cf(text) to out and returns
// true. Otherwise returns false having written nothing (ICU's normaliser is then needed).
bool simple_casefold(std::u16string_view text, icu::UnicodeString& out);

}  // namespace neardup::features_internal
