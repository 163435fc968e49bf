// Charset detection: uchardet's guess, and a measure of how implausible a decoding looks, used
// to decide between a declared charset and the detector's candidate.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace neardup::decode_internal {

// uchardet's answer for the sample ("WINDOWS-1251", "UHC", "ASCII", ...; "" when it has none).
std::string detect_with_uchardet(std::string_view sample);

// Signs of a wrong charset in decoded UTF-8 text, per non-ASCII input byte (so that two decodings
// of the same bytes compare): U+FFFD (weighted 4), C0/C1 controls, private-use and unassigned
// code points; and inside words, a lower-case letter followed by an upper-case one, a change of
// script (Han and kana mix freely), two adjacent non-ASCII Latin letters, a non-ASCII symbol
// between letters, and (weighted 0.2) an upper-case letter after an upper-case one. Correct text
// scores near 0; mojibake such as KOI8-R read as windows-1251 ("пРИВЕТ"), windows-1251 read as
// windows-1252 ("Ïðèâåò") or Big5 read as GBK scores far higher.
double implausibility(std::string_view utf8_text, std::size_t non_ascii_bytes);

}  // namespace neardup::decode_internal
