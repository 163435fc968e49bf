// text_runs: where a run of ASCII, or of kanji and kana, ends in UTF-8 text. A decoded page is
// mostly such runs (markup, and the words of a Chinese or Japanese page), and the plausibility
// check (detect.h) learns nothing inside one (ASCII after ASCII; letters of one script, neither
// upper nor lower case), so it skips them whole, 64 or 48 bytes a step where the CPU has
// AVX-512's byte instructions (common/cpu.h, cpu_has_avx512_bytes).
#pragma once

#include <cstdint>

namespace neardup::decode_internal {

// The end of the run of ASCII bytes starting at text[i]. Requires 0 <= i <= length.
int32_t skip_ascii(const uint8_t* text, int32_t i, int32_t length);

// The same, eight bytes a step: what skip_ascii must equal.
int32_t skip_ascii_portable(const uint8_t* text, int32_t i, int32_t length);

// The end of the run of kanji and kana (common/cjk.h's is_common_han_or_kana) starting at
// text[i]: the first index at or after i where a character of the run does not start. Only
// three-byte UTF-8 sequences are read (no other encoding of these code points is valid), so a
// truncated or overlong sequence ends the run. Requires 0 <= i <= length.
int32_t skip_kanji_and_kana(const uint8_t* text, int32_t i, int32_t length);

// The same, a character a step: the definition the vectorised loop is tested against.
int32_t skip_kanji_and_kana_portable(const uint8_t* text, int32_t i, int32_t length);

}  // namespace neardup::decode_internal
