#include "pipeline/features/features.h"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>
// Inlined: a shingle or token hash is a short input, where the call costs as much as the hash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <unordered_set>

#include "common/cjk.h"
#include "pipeline/features/ascii_words.h"
#include "pipeline/features/casefold.h"
#include "pipeline/features/shingle_order.h"
#include "pipeline/features/stop_words.h"
#include "pipeline/features/typography.h"

namespace neardup {
namespace {

// ICU's word break and normalisation data are compiled into libicudata; failing to load them
// means a broken installation, not bad input, so there is no page-level error to report.
[[noreturn]] void icu_unusable(const char* what, UErrorCode status) {
  std::fprintf(stderr, "neardup features: ICU %s failed: %s\n", what, u_errorName(status));
  std::abort();
}

const icu::Normalizer2& nfkc_casefold() {
  static const icu::Normalizer2* const normalizer = [] {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* n = icu::Normalizer2::getNFKCCasefoldInstance(status);
    if (U_FAILURE(status)) icu_unusable("nfkc_cf normaliser", status);
    return n;
  }();
  return *normalizer;
}

// Building a word iterator loads rules and dictionaries (about a millisecond); cloning a
// prototype is cheaper, and each thread clones once.
std::unique_ptr<icu::BreakIterator> clone_word_breaker() {
  static const icu::BreakIterator* const prototype = [] {
    UErrorCode status = U_ZERO_ERROR;
    icu::BreakIterator* b = icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status);
    if (U_FAILURE(status)) icu_unusable("word break iterator", status);
    return b;
  }();
  return std::unique_ptr<icu::BreakIterator>(prototype->clone());
}

// Per-thread state reused across calls, so a call allocates only its result. The break
// iterator refers to `normalized`, hence both live (and die) together.
struct Scratch {
  std::unique_ptr<icu::BreakIterator> breaker = clone_word_breaker();
  icu::UnicodeString utf16;
  icu::UnicodeString normalized;
  std::string token;
  std::string run_utf8;
  std::vector<int32_t> run_starts;
  std::vector<features_internal::WeightedHash> shingles;
  features_internal::ShingleOrderScratch shingle_order;
  std::unordered_set<std::uint64_t> seen_paragraphs;  // token-sequence hashes
};

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The longest prefix of text of at most max_bytes bytes that does not end inside a UTF-8
// sequence.
std::string_view clip_utf8(std::string_view text, std::uint64_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  while (end > 0 && U8_IS_TRAIL(static_cast<std::uint8_t>(text[end]))) --end;
  return text.substr(0, end);
}

void append_utf8(const char16_t* s, int32_t length, std::string& out) {
  // At most three UTF-8 bytes a UTF-16 unit (four for the two units of a surrogate pair).
  out.resize_and_overwrite(static_cast<std::size_t>(length) * 3, [&](char* bytes, std::size_t) {
    int32_t n = 0;
    for (int32_t i = 0; i < length;) {
      UChar32 c;
      U16_NEXT(s, i, length, c);
      if (c < 0x80) {
        bytes[n++] = static_cast<char>(c);
      } else {
        U8_APPEND_UNSAFE(bytes, n, c);
      }
    }
    return static_cast<std::size_t>(n);
  });
}

// ICU reports letter-digit mixtures ending in a digit ("covid19", "mp3") as numbers too; those
// name things and stay tokens.
bool has_letter(const char16_t* s, int32_t length) {
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U16_NEXT(s, i, length, c);
    if (u_isalpha(c)) return true;
  }
  return false;
}

// Han and kana (the scripts features.cjk tokenises as character bigrams). Everything below
// U+2E80, where the CJK blocks begin, and the ideographs and kana most text is made of are
// answered without a property lookup.
bool is_han_or_kana(UChar32 c) {
  if (c < 0x2E80) return false;
  if (is_common_han_or_kana(static_cast<char32_t>(c))) return true;
  if (c == 0x30FC) return true;  // the prolonged sound mark ー, Common script, written in kana
  UErrorCode status = U_ZERO_ERROR;
  const UScriptCode script = uscript_getScript(c, &status);
  return script == USCRIPT_HAN || script == USCRIPT_HIRAGANA || script == USCRIPT_KATAKANA ||
         script == USCRIPT_KATAKANA_OR_HIRAGANA;
}

// Calls keep(word, size) for each word of chars[0, length) as ICU's break iterator splits it,
// numbers dropped. chars holds no line break.
template <typename Keep>
void visit_icu_words(const char16_t* chars, int32_t length, Scratch& scratch, Keep& keep) {
  if (length == 0) return;
  UErrorCode status = U_ZERO_ERROR;
  UText text = UTEXT_INITIALIZER;
  utext_openUChars(&text, chars, length, &status);
  icu::BreakIterator& breaker = *scratch.breaker;
  breaker.setText(&text, status);  // the iterator keeps a shallow clone
  if (U_FAILURE(status)) icu_unusable("word break iterator text", status);
  for (int32_t start = breaker.first(), end = breaker.next(); end != icu::BreakIterator::DONE;
       start = end, end = breaker.next()) {
    // Rule status ranges: NONE [0,100) spaces/punctuation/symbols, NUMBER [100,200), then
    // LETTER, KANA and IDEO. Dictionary-segmented CJK and Thai words report LETTER or IDEO.
    const int32_t rule = breaker.getRuleStatus();
    if (rule < UBRK_WORD_NONE_LIMIT) continue;
    if (rule < UBRK_WORD_NUMBER_LIMIT && !has_letter(chars + start, end - start)) continue;
    keep(chars + start, end - start);
  }
  utext_close(&text);
}

// Calls visit(token_utf8, paragraph) for each word of chars[0, length) as the break iterator
// splits it, numbers and (when asked) stop words dropped; counts line breaks into paragraph.
// Line breaks always break words (UAX #29's WB3a and WB3b), so lines are split apart: a line of
// ASCII goes through features_internal::ascii_words, any other through ICU's break iterator.
template <typename Visit>
void visit_words(const char16_t* chars, int32_t length, const FeaturesConfig& config,
                 Scratch& scratch, std::size_t& paragraph, Visit& visit) {
  auto keep = [&](const char16_t* word, int32_t size) {
    append_utf8(word, size, scratch.token);
    if (config.stop_words && is_stop_word(scratch.token)) return;
    visit(std::string_view(scratch.token), paragraph);
  };
  for (int32_t begin = 0; begin < length;) {
    const int32_t end =
        static_cast<int32_t>(std::find(chars + begin, chars + length, u'\n') - chars);
    const bool ascii = features_internal::ascii_words(
        chars + begin, end - begin, [&](int32_t start, int32_t stop) {
          if (has_letter(chars + begin + start, stop - start))
            keep(chars + begin + start, stop - start);
        });
    if (!ascii) visit_icu_words(chars + begin, end - begin, scratch, keep);
    if (end < length) ++paragraph;
    begin = end + 1;
  }
}

// Normalises the clipped text into scratch.normalized and calls visit(token_utf8, paragraph)
// for each token, numbers and (when asked) stop words already dropped. paragraph counts the
// line breaks before the token. Under features.cjk "bigrams", each run of Han and kana gives
// its overlapping pairs of characters (one character alone: itself), to which stop words do
// not apply, and the break iterator splits only the text between runs.
template <typename Visit>
void for_each_token(std::string_view text, const FeaturesConfig& config, Scratch& scratch,
                    Visit visit) {
  // ICU lengths are int32_t; the config loader caps max_text_bytes well below this anyway.
  constexpr std::uint64_t kIcuMaxBytes = std::uint64_t{1} << 30;
  text = clip_utf8(text, std::min(config.max_text_bytes, kIcuMaxBytes));
  if (text.empty()) return;

  UErrorCode status = U_ZERO_ERROR;
  const auto text_length = static_cast<int32_t>(text.size());
  // UTF-16 never needs more code units than UTF-8 has bytes.
  char16_t* buffer = scratch.utf16.getBuffer(text_length);
  int32_t utf16_length = 0;
  u_strFromUTF8WithSub(buffer, text_length, &utf16_length, text.data(), text_length, 0xFFFD,
                       nullptr, &status);
  if (U_SUCCESS(status)) {
    const std::size_t folded =
        fold_typography(std::span(buffer, static_cast<std::size_t>(utf16_length)));
    utf16_length = static_cast<int32_t>(folded);
  }
  scratch.utf16.releaseBuffer(U_SUCCESS(status) ? utf16_length : 0);
  if (U_FAILURE(status)) icu_unusable("UTF-8 conversion", status);

  if (!features_internal::simple_casefold(
          std::u16string_view(scratch.utf16.getBuffer(),
                              static_cast<std::size_t>(scratch.utf16.length())),
          scratch.normalized)) {
    nfkc_casefold().normalize(scratch.utf16, scratch.normalized, status);
    if (U_FAILURE(status)) icu_unusable("nfkc_cf normalisation", status);
  }

  const char16_t* chars = scratch.normalized.getBuffer();
  const int32_t length = scratch.normalized.length();
  std::size_t paragraph = 0;
  if (config.cjk == CjkTokens::kWords) {
    visit_words(chars, length, config, scratch, paragraph, visit);
    return;
  }
  // A run of Han and kana in UTF-8, each character converted once, and where each character
  // begins in it, then its end: the run's bigrams are views of two characters' bytes.
  std::string& run_utf8 = scratch.run_utf8;
  std::vector<int32_t>& starts = scratch.run_starts;
  for (int32_t i = 0; i < length;) {
    int32_t run = i;  // where the next Han or kana run begins
    for (int32_t next = run; run < length; run = next) {
      UChar32 c;
      U16_NEXT(chars, next, length, c);
      if (is_han_or_kana(c)) break;
    }
    if (run > i) visit_words(chars + i, run - i, config, scratch, paragraph, visit);
    starts.clear();
    int32_t end = run;
    for (int32_t next = end; end < length; end = next) {
      UChar32 c;
      U16_NEXT(chars, next, length, c);
      if (!is_han_or_kana(c)) break;
    }
    if (end > run) {
      // At most three UTF-8 bytes a UTF-16 unit (four for the two units of a surrogate pair).
      run_utf8.resize_and_overwrite(static_cast<std::size_t>(end - run) * 3,
                                    [&](char* bytes, std::size_t) {
                                      int32_t n = 0;
                                      for (int32_t k = run; k < end;) {
                                        starts.push_back(n);
                                        UChar32 c;
                                        U16_NEXT(chars, k, end, c);
                                        U8_APPEND_UNSAFE(bytes, n, c);
                                      }
                                      return static_cast<std::size_t>(n);
                                    });
      const std::size_t characters = starts.size();
      starts.push_back(static_cast<int32_t>(run_utf8.size()));
      const std::size_t width = characters >= 2 ? 2 : 1;
      const std::string_view utf8 = run_utf8;
      for (std::size_t a = 0; a + width <= characters; ++a) {
        const auto from = static_cast<std::size_t>(starts[a]);
        const auto to = static_cast<std::size_t>(starts[a + width]);
        visit(utf8.substr(from, to - from), paragraph);  // not a word: no stop words
      }
    }
    i = end;
  }
}

// A shingle from a paragraph of t tokens counts min(1, t / kFullWeightParagraphTokens) of a
// shingle from running prose. Measured: 16, 24, 32 all help; 24 is in the middle
// (pipeline/features/MEASUREMENTS.md).
constexpr double kFullWeightParagraphTokens = 24;

double weight_of(std::size_t count, Weighting weighting) {
  switch (weighting) {
    case Weighting::kTf:
    case Weighting::kTfidf:  // times the idf learned at the index (pipeline/learn/finish.h)
      return static_cast<double>(count);
    case Weighting::kLogTf:
      return 1.0 + std::log(static_cast<double>(count));
    case Weighting::kBinary:
      return 1.0;
  }
  return static_cast<double>(count);
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text, const FeaturesConfig& config) {
  std::vector<std::string> tokens;
  for_each_token(text, config, thread_scratch(),
                 [&](std::string_view token, std::size_t) { tokens.emplace_back(token); });
  return tokens;
}

TokenHashes hash_tokens(std::string_view text, const FeaturesConfig& config, std::uint64_t seed) {
  TokenHashes out;
  std::size_t current_paragraph = 0;
  for_each_token(text, config, thread_scratch(), [&](std::string_view token, std::size_t paragraph) {
    if (paragraph != current_paragraph && !out.hashes.empty()) {
      out.paragraph_ends.push_back(out.hashes.size());
      out.paragraph_lines.push_back(current_paragraph);
    }
    current_paragraph = paragraph;
    std::uint64_t h = XXH3_64bits_withSeed(token.data(), token.size(), seed);
    // The shingle hashes read the token hashes as little-endian bytes on every machine.
    if constexpr (std::endian::native == std::endian::big) h = std::byteswap(h);
    out.hashes.push_back(h);
  });
  if (!out.hashes.empty()) {
    out.paragraph_ends.push_back(out.hashes.size());
    out.paragraph_lines.push_back(current_paragraph);
  }
  return out;
}

std::vector<Feature> extract_features(std::string_view text, const FeaturesConfig& config,
                                      std::uint64_t seed) {
  return features_of(hash_tokens(text, config, seed), config, seed);
}

std::vector<Feature> features_of(const TokenHashes& token_hashes, const FeaturesConfig& config,
                                 std::uint64_t seed) {
  const std::vector<std::uint64_t>& tokens = token_hashes.hashes;
  if (tokens.empty()) return {};
  Scratch& scratch = thread_scratch();
  const std::size_t ngram = std::max<std::uint32_t>(config.ngram, 1);
  std::vector<features_internal::WeightedHash>& shingles = scratch.shingles;
  shingles.clear();
  std::unordered_set<std::uint64_t>& seen = scratch.seen_paragraphs;
  seen.clear();
  for (std::size_t begin = 0; std::size_t end : token_hashes.paragraph_ends) {
    const std::size_t length = end - begin;
    // A paragraph printed twice (a caption, a pull quote, a teaser) says nothing new.
    const std::uint64_t paragraph_hash =
        XXH3_64bits_withSeed(&tokens[begin], length * sizeof(std::uint64_t), seed);
    if (!seen.insert(paragraph_hash).second) {
      begin = end;
      continue;
    }
    const std::size_t n = std::min(ngram, length);
    const double share = std::min(1.0, static_cast<double>(length) / kFullWeightParagraphTokens);
    for (std::size_t i = begin; i + n <= end; ++i) {
      shingles.push_back(
          {XXH3_64bits_withSeed(&tokens[i], n * sizeof(std::uint64_t), seed), share});
    }
    begin = end;
  }

  // Equal shingles stand together for counting, in the order std::sort gives them (their
  // shares summed in another order can round differently: shingle_order.h).
  features_internal::order_shingles(shingles, scratch.shingle_order);
  const Weighting weighting = config.weighting;
  std::vector<Feature> features;
  for (std::size_t i = 0; i < shingles.size();) {
    std::size_t j = i + 1;
    double shares = shingles[i].share;
    for (; j < shingles.size() && shingles[j].hash == shingles[i].hash; ++j) {
      shares += shingles[j].share;
    }
    // The mean share scales the count's weight, so under tf each occurrence adds its share.
    const auto count = static_cast<double>(j - i);
    features.push_back({shingles[i].hash, shares / count * weight_of(j - i, weighting)});
    i = j;
  }
  return features;
}

}  // namespace neardup
