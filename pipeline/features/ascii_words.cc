#include "pipeline/features/ascii_words.h"

#include <array>

namespace neardup::features_internal {

bool ascii_words(const char16_t* chars, int32_t length,
                 const std::function<void(int32_t, int32_t)>& word) {
  enum : std::uint8_t { kOther, kLetter, kDigit, kMidNumLet, kMidNum, kUnhandled };
  static constexpr std::array<std::uint8_t, 128> kClass = [] {
    std::array<std::uint8_t, 128> c{};  // kOther
    for (int i = 'a'; i <= 'z'; ++i) c[i] = kLetter;
    for (int i = 'A'; i <= 'Z'; ++i) c[i] = kLetter;
    for (int i = '0'; i <= '9'; ++i) c[i] = kDigit;
    c['.'] = c['\''] = kMidNumLet;  // MidNumLet and Single_Quote
    c[','] = c[';'] = kMidNum;
    // ExtendNumLet; '@', which ICU's root rules make a letter of its own; a line break (lines
    // end before one).
    c['_'] = c['@'] = c['\n'] = kUnhandled;
    return c;
  }();
  for (int32_t i = 0; i < length; ++i) {
    if (chars[i] >= 0x80 || kClass[chars[i]] == kUnhandled) return false;
  }
  auto class_at = [&](int32_t i) { return i < length ? kClass[chars[i]] : std::uint8_t{kOther}; };
  for (int32_t i = 0; i < length;) {
    std::uint8_t c = kClass[chars[i]];
    if (c != kLetter && c != kDigit) {
      ++i;
      continue;
    }
    const int32_t start = i;
    for (++i; i < length; ++i) {
      const std::uint8_t next = kClass[chars[i]];
      if (next == kLetter || next == kDigit) {  // WB5, WB8, WB9, WB10
        c = next;
        continue;
      }
      // A middle character joins two letters (MidNumLet: WB6, WB7) or two digits (WB11, WB12).
      const bool joins = (next == kMidNumLet || next == kMidNum) && class_at(i + 1) == c &&
                         (c == kDigit || next == kMidNumLet);
      if (!joins) break;
      ++i;  // the middle character; the loop steps onto the letter or digit after it
    }
    word(start, i);
  }
  return true;
}

}  // namespace neardup::features_internal
