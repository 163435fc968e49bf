// cjk.h: the code points that make up most Chinese and Japanese text, recognised by range
// instead of an ICU property lookup (which costs a trie walk per character, and a CJK page
// holds thousands of characters). Header-only.
#pragma once

namespace neardup {

// The CJK Unified Ideographs block (U+4E00-9FFF), the hiragana letters (U+3041-3096) and the
// katakana letters (U+30A1-30FA): each is a letter (general category Lo) whose script is Han,
// Hiragana or Katakana (common/cjk_test.cc checks every one against the ICU the project links).
// Not every such letter is in them: the extension blocks, compatibility ideographs, iteration
// marks and digraphs are left to callers' ICU lookups.
inline bool is_common_han_or_kana(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3041 && c <= 0x3096) ||
         (c >= 0x30A1 && c <= 0x30FA);
}

}  // namespace neardup
