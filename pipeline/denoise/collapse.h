// collapse: how visible text is written down, run by run, for extraction.
//
// Whitespace is ' ', '\t', '\n', '\r', '\f' and U+00A0 (the no-break space, C2 A0 in UTF-8); a
// run of it becomes one ' ', and a run that follows whitespace already written is dropped. The
// outline (html_outline.h) writes every text node this way and counts its characters and
// commas; paragraphs are joined from its runs the same way. This touches every visible byte, so
// beside the portable loop there is one that takes 64 bytes a step (AVX-512 BW and VBMI2,
// common/cpu.h), taken at run time; both give the same bytes and counts. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace neardup::denoise_internal {

struct Collapsed {
  bool space;            // the text written so far ends in whitespace (or nothing was written yet)
  std::uint32_t chars;   // characters appended: bytes that do not continue a UTF-8 sequence
  std::uint32_t commas;  // ',', U+FF0C, U+3001 and U+060C appended (whole within text)
};

// Appends text to out with whitespace collapsed. `space` says whether what precedes text (in
// out or before it) ends in whitespace, so that a leading whitespace run is dropped; the
// result's `space` is the same for what follows. A no-break space is two bytes of text only when
// both are in it: a C2 at the end of text, or an A0 at its start, is an ordinary byte.
Collapsed append_collapsed(std::string_view text, std::string& out, bool space);

// Appends text to out, collapsing whitespace, never starting out with a space.
inline void append_collapsed(std::string_view text, std::string& out) {
  append_collapsed(text, out, out.empty() || out.back() == ' ');
}

namespace collapse_internal {

// The portable loop, which append_collapsed must equal.
Collapsed append_collapsed_portable(std::string_view text, std::string& out, bool space);

}  // namespace collapse_internal

}  // namespace neardup::denoise_internal
