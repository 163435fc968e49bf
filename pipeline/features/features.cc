#include "pipeline/features/features.h"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/ubrk.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "pipeline/features/stop_words.h"

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
  std::vector<std::uint64_t> token_hashes;
  std::vector<std::uint64_t> feature_hashes;
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
  out.clear();
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U16_NEXT(s, i, length, c);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      char bytes[U8_MAX_LENGTH];
      int32_t n = 0;
      U8_APPEND_UNSAFE(bytes, n, c);
      out.append(bytes, static_cast<std::size_t>(n));
    }
  }
}

// Normalises the clipped text into scratch.normalized and calls visit(token_utf8) for each
// word token, stop words already dropped when asked.
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
  scratch.utf16.releaseBuffer(U_SUCCESS(status) ? utf16_length : 0);
  if (U_FAILURE(status)) icu_unusable("UTF-8 conversion", status);

  nfkc_casefold().normalize(scratch.utf16, scratch.normalized, status);
  if (U_FAILURE(status)) icu_unusable("nfkc_cf normalisation", status);

  const char16_t* chars = scratch.normalized.getBuffer();
  icu::BreakIterator& breaker = *scratch.breaker;
  breaker.setText(scratch.normalized);
  for (int32_t start = breaker.first(), end = breaker.next(); end != icu::BreakIterator::DONE;
       start = end, end = breaker.next()) {
    // Rule status ranges: NONE [0,100) spaces/punctuation/symbols; NUMBER, LETTER, KANA and
    // IDEO above. Dictionary-segmented CJK and Thai words report LETTER or IDEO.
    if (breaker.getRuleStatus() < UBRK_WORD_NONE_LIMIT) continue;
    append_utf8(chars + start, end - start, scratch.token);
    if (config.stop_words && is_stop_word(scratch.token)) continue;
    visit(std::string_view(scratch.token));
  }
}

double weight_of(std::size_t count, Weighting weighting) {
  switch (weighting) {
    case Weighting::kTf:
      return static_cast<double>(count);
    case Weighting::kLogTf:
      return 1.0 + std::log(static_cast<double>(count));
    case Weighting::kBinary:
      return 1.0;
  }
  return static_cast<double>(count);
}

}  // namespace

std::optional<Weighting> parse_weighting(std::string_view name) {
  if (name == "tf") return Weighting::kTf;
  if (name == "log_tf") return Weighting::kLogTf;
  if (name == "binary") return Weighting::kBinary;
  return std::nullopt;
}

std::vector<std::string> tokenize(std::string_view text, const FeaturesConfig& config) {
  std::vector<std::string> tokens;
  for_each_token(text, config, thread_scratch(),
                 [&](std::string_view token) { tokens.emplace_back(token); });
  return tokens;
}

std::vector<Feature> extract_features(std::string_view text, const FeaturesConfig& config,
                                      std::uint64_t seed) {
  Scratch& scratch = thread_scratch();
  std::vector<std::uint64_t>& tokens = scratch.token_hashes;
  tokens.clear();
  for_each_token(text, config, scratch, [&](std::string_view token) {
    std::uint64_t h = XXH3_64bits_withSeed(token.data(), token.size(), seed);
    // The shingle hash reads the token hashes as little-endian bytes on every machine.
    if constexpr (std::endian::native == std::endian::big) h = std::byteswap(h);
    tokens.push_back(h);
  });
  if (tokens.empty()) return {};

  const std::size_t n =
      std::min<std::size_t>(std::max<std::uint32_t>(config.ngram, 1), tokens.size());
  std::vector<std::uint64_t>& hashes = scratch.feature_hashes;
  hashes.clear();
  for (std::size_t i = 0; i + n <= tokens.size(); ++i) {
    hashes.push_back(XXH3_64bits_withSeed(&tokens[i], n * sizeof(std::uint64_t), seed));
  }

  // Sorting groups equal shingles for counting and fixes the output order.
  std::sort(hashes.begin(), hashes.end());
  const Weighting weighting = parse_weighting(config.weighting).value_or(Weighting::kTf);
  std::vector<Feature> features;
  for (std::size_t i = 0; i < hashes.size();) {
    std::size_t j = i + 1;
    while (j < hashes.size() && hashes[j] == hashes[i]) ++j;
    features.push_back({hashes[i], weight_of(j - i, weighting)});
    i = j;
  }
  return features;
}

}  // namespace neardup
