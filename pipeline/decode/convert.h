// Byte -> UTF-8 conversion through ICU, with converters cached per thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace neardup::decode_internal {

struct Converted {
  std::string text;        // valid UTF-8
  std::size_t errors = 0;  // invalid or unmapped sequences, each written as U+FFFD
};

// Converts bytes from the charset of ICU converter `converter` to UTF-8. Invalid and unmapped
// sequences become U+FFFD (ICU's own default would write U+001A for some code pages). A BOM in
// the bytes is kept as U+FEFF: callers strip it. Returns nullopt only when ICU cannot open the
// converter. "iso-2022-kr" is converted as windows-949 after undoing its SO/SI shifts: ICU's own
// ISO-2022-KR converter maps KS X 1001 A1A4 to U+30FB, where EUC-KR decoders give U+00B7.
// Runs of ASCII bytes are copied past ICU where the charset leaves them unchanged (stateless
// single- and multi-byte charsets); `in_one_pass` hands ICU every byte instead, which gives the
// same text and errors (to compare).
std::optional<Converted> convert_to_utf8(std::string_view bytes, const std::string& converter,
                                         bool in_one_pass = false);

// True when ICU can open `converter` (the result is cached per thread).
bool converter_available(const std::string& converter);

}  // namespace neardup::decode_internal
