#include "pipeline/decode/detect.h"

#include <uchardet/uchardet.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/utf8.h>

#include <memory>

#include "common/cjk.h"
#include "pipeline/decode/text_runs.h"

namespace neardup::decode_internal {
namespace {

struct DetectorDeleter {
  void operator()(uchardet* detector) const { uchardet_delete(detector); }
};

// Pseudo-script for half-width katakana (U+FF61-FF9F): in real Japanese text it stands apart
// from kanji, while EUC-JP bytes read as Shift_JIS produce it mixed with kanji.
constexpr int kHalfwidthKana = USCRIPT_CODE_LIMIT + 1;

// What implausibility needs to know about a code point.
struct CharClass {
  bool suspicious = false;  // private use, unassigned, or a control other than \t \n \f \r
  bool letter = false;      // letters and combining marks
  bool upper = false;
  bool lower = false;
  bool latin_extended = false;  // a non-ASCII Latin letter (U+00C0-024F)
  bool glued_symbol = false;    // see is_glued_symbol
  int script = USCRIPT_COMMON;  // Han for kanji and kana alike: Japanese mixes them in words
};

// Symbols, other numbers and plain punctuation from the alphabetic blocks (¿ ¶ ± ³ ¼ ¦), which
// stand between letters when ISO-8859-2 is read as windows-1252. Excluded: the middle dot,
// which Catalan uses inside words (col·lecció), and general and CJK punctuation, which
// Chinese and Japanese put between ideographs without spaces.
bool is_glued_symbol(UChar32 c) {
  return c >= 0x80 && c < 0x2000 && c != 0xB7 &&
         (U_GET_GC_MASK(c) & (U_GC_S_MASK | U_GC_NO_MASK | U_GC_PO_MASK)) != 0;
}

CharClass classify_ascii(UChar32 c) {
  bool upper = c >= 'A' && c <= 'Z';
  bool lower = c >= 'a' && c <= 'z';
  return {.letter = upper || lower, .upper = upper, .lower = lower, .script = USCRIPT_LATIN};
}

// CJK unified ideographs, hiragana and katakana (common/cjk.h): a letter of script Han (for
// this check) and nothing else.
bool is_kanji_or_kana(UChar32 c) { return is_common_han_or_kana(static_cast<char32_t>(c)); }

CharClass classify(UChar32 c) {
  // The scripts that fill most legacy-charset pages, without ICU property lookups.
  if (is_kanji_or_kana(c)) return {.letter = true, .script = USCRIPT_HAN};
  if (c >= 0xAC00 && c <= 0xD7A3) return {.letter = true, .script = USCRIPT_HANGUL};
  if (c >= 0x410 && c <= 0x44F) {
    return {.letter = true, .upper = c < 0x430, .lower = c >= 0x430, .script = USCRIPT_CYRILLIC};
  }
  CharClass result;
  if (c < 0) {
    result.suspicious = true;
    return result;
  }
  int8_t type = u_charType(c);
  result.suspicious = type == U_PRIVATE_USE_CHAR || type == U_UNASSIGNED ||
                      (type == U_CONTROL_CHAR && c != '\t' && c != '\n' && c != '\f' && c != '\r');
  result.letter = (U_MASK(type) & (U_GC_L_MASK | U_GC_M_MASK)) != 0;
  result.upper = type == U_UPPERCASE_LETTER;
  result.lower = type == U_LOWERCASE_LETTER;
  result.latin_extended = result.letter && c >= 0xC0 && c <= 0x24F;
  result.glued_symbol = is_glued_symbol(c);
  if (c >= 0xFF61 && c <= 0xFF9F) {
    result.script = kHalfwidthKana;
  } else if (result.letter) {
    UErrorCode status = U_ZERO_ERROR;
    UScriptCode script = uscript_getScript(c, &status);
    if (U_FAILURE(status) || script == USCRIPT_INHERITED) script = USCRIPT_COMMON;
    if (script == USCRIPT_HIRAGANA || script == USCRIPT_KATAKANA) script = USCRIPT_HAN;
    result.script = script;
  }
  return result;
}

}  // namespace

std::string detect_with_uchardet(std::string_view sample) {
  // A detector holds about 100 KiB of model state; one per thread, reset between pages.
  thread_local std::unique_ptr<uchardet, DetectorDeleter> detector(uchardet_new());
  if (!detector) return {};
  uchardet_reset(detector.get());
  if (uchardet_handle_data(detector.get(), sample.data(), sample.size()) != 0) return {};
  uchardet_data_end(detector.get());
  const char* charset = uchardet_get_charset(detector.get());
  return charset != nullptr ? charset : "";
}

double implausibility(std::string_view utf8_text, std::size_t non_ascii_bytes) {
  // A sequence the charset cannot decode at all is the strongest sign; the others are patterns
  // that occur in real text too, only rarely.
  constexpr double kUndecodable = 4;
  constexpr double kUnlikely = 1;
  constexpr double kUpperAfterUpper = 0.2;  // all-caps words are real, but not most words
  const auto* text = reinterpret_cast<const uint8_t*>(utf8_text.data());
  const auto length = static_cast<int32_t>(utf8_text.size());
  double events = 0;
  CharClass previous;         // of the previous code point
  CharClass before_previous;  // and of the one before it
  bool previous_ascii = true;
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(text, i, length, c);
    if (c < 0x80 && previous_ascii) {  // ASCII after ASCII: nothing to learn, skip the run
      i = skip_ascii(text, i, length);
      before_previous = i >= 2 ? classify_ascii(text[i - 2]) : previous;
      previous = classify_ascii(text[i - 1]);
      continue;
    }
    if (c == 0xFFFD) events += kUndecodable;
    CharClass current = c < 0x80 ? classify_ascii(c) : classify(c);
    if (current.suspicious) {
      events += kUnlikely;
    } else if (current.letter && previous.letter) {
      if (current.upper && previous.lower) events += kUnlikely;
      if (current.upper && previous.upper) events += kUpperAfterUpper;
      if (current.script != previous.script && current.script != USCRIPT_COMMON &&
          previous.script != USCRIPT_COMMON) {
        events += kUnlikely;
      }
      if (current.latin_extended && previous.latin_extended) events += kUnlikely;
    } else if (current.letter && previous.glued_symbol && before_previous.letter) {
      events += kUnlikely;
    }
    before_previous = previous;
    previous = current;
    previous_ascii = c < 0x80;
    if (is_kanji_or_kana(c)) {
      // Kanji or kana after kanji or kana: no event (letters of one script, neither upper
      // nor lower case), so the rest of the run is skipped.
      const int32_t end = skip_kanji_and_kana(text, i, length);
      if (end > i) before_previous = previous;
      i = end;
    }
  }
  return events / static_cast<double>(non_ascii_bytes == 0 ? 1 : non_ascii_bytes);
}

}  // namespace neardup::decode_internal
