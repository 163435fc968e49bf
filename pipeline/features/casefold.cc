#include "pipeline/features/casefold.h"

#include <algorithm>

namespace neardup::features_internal {
namespace {

bool is_simple(char16_t c) {
  return c < 0x80 || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3041 && c <= 0x3096) ||
         (c >= 0x30A1 && c <= 0x30FA) || c == 0x3001 || c == 0x3002;
}

}  // namespace

bool simple_casefold(std::u16string_view text, icu::UnicodeString& out) {
  if (!std::all_of(text.begin(), text.end(), is_simple)) return false;
  const auto length = static_cast<int32_t>(text.size());
  if (length == 0) {
    out.remove();
    return true;
  }
  char16_t* buffer = out.getBuffer(length);
  if (buffer == nullptr) return false;  // out of memory: ICU's path reports it
  std::transform(text.begin(), text.end(), buffer, [](char16_t c) {
    return c >= u'A' && c <= u'Z' ? static_cast<char16_t>(c + (u'a' - u'A')) : c;
  });
  out.releaseBuffer(length);
  return true;
}

}  // namespace neardup::features_internal
