// features: main text -> weighted features (docs/README.md).
//
// The text (at most features.max_text_bytes of it) is converted to UTF-16 once, its typography
// folded (typography.h: curly apostrophes and quotes, dashes, UTF-8 read as windows-1252),
// normalised with ICU's "nfkc_cf" (NFKC and full case folding in one pass: "ＨＥＬＬＯ Straße"
// -> "hello strasse"; no-break and zero-width spaces, the ellipsis), and split with ICU's word
// break iterator, which segments Thai, Lao, Khmer and Burmese through its dictionaries. Runs of
// Han and kana (Chinese and Japanese) become overlapping character bigrams ("北京大学" -> 北京,
// 京大, 大学; a lone character is a token of its own) under features.cjk "bigrams", the
// default; under "words" the break iterator splits them with its dictionaries too (measured:
// pipeline/features/MEASUREMENTS.md, "Han and kana as character bigrams"). A line of plain
// ASCII is split without ICU, exactly as ICU would (ascii_words.h, checked against it).
// Tokens whose break rule status is UBRK_WORD_NONE (spaces, punctuation,
// symbols, emoji) are dropped, and so are numbers without a letter (UBRK_WORD_NUMBER: dates,
// times, counters and prices differ between captures of one page; "covid19" stays); letters,
// kana and ideographs stay. With features.stop_words, tokens in the built-in stop-word lists
// (stop_words.h) are dropped; character bigrams are not words and are kept.
//
// The text is read as paragraphs separated by '\n' (denoise's output); a paragraph whose
// tokens repeat an earlier paragraph's exactly is skipped. Each feature is a shingle of
// features.ngram consecutive tokens of one paragraph; a paragraph with fewer tokens than that
// yields one shorter shingle of all its tokens, so short texts still have features.
// Short paragraphs are mostly what differs between copies of one page (datelines, bylines,
// captions, teaser and link lines), so each shingle occurrence carries a share
// min(1, tokens in its paragraph / 24); see pipeline/features/MEASUREMENTS.md.
// What is hashed, exactly (seed = fingerprint.seed, XXH3 = XXH3_64bits_withSeed):
//   token_hash(t)             = XXH3(UTF-8 bytes of the normalised token t, seed)
//   feature_hash(t1 .. tk)    = XXH3(token_hash(t1) .. token_hash(tk) as k little-endian
//                                    64-bit words, 8k bytes, seed)
// Weights: with count = occurrences of the shingle in the text, tf = count, log_tf =
// 1 + ln(count), binary = 1, each multiplied by the mean share of those occurrences (so under
// tf the weight is the sum of the shares).
//
// Pure: no I/O and no shared mutable state. Each thread keeps its own ICU break iterator and
// scratch buffers (thread_local), built on first use, so any number of threads may call at once.
// The buffers keep the capacity of the longest text seen (about 4 bytes per text byte).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace neardup {

struct Feature {
  std::uint64_t hash;  // feature_hash of the shingle, as defined above
  double weight;       // > 0
};

// Splits text into normalised word tokens (UTF-8), punctuation, spaces and numbers dropped, in text
// order. Honours config.max_text_bytes and config.stop_words; ignores ngram and weighting.
// Invalid UTF-8 sequences become U+FFFD (a symbol, hence dropped).
std::vector<std::string> tokenize(std::string_view text, const FeaturesConfig& config);

// The word tokens of a text as token_hash values (above), in text order, and where its
// paragraphs end: the one tokenisation both signatures are built from (the SimHash features
// here, the MinHash shingles in pipeline/minhash/).
struct TokenHashes {
  std::vector<std::uint64_t> hashes;
  std::vector<std::size_t> paragraph_ends;  // one past the last token of each paragraph
  // The place of each of those paragraphs among all of the text's ('\n'-separated) ones, 0-based:
  // a paragraph without tokens has no end above.
  std::vector<std::size_t> paragraph_lines;
};

// Tokenises text (as tokenize() does) and hashes each token with seed.
TokenHashes hash_tokens(std::string_view text, const FeaturesConfig& config, std::uint64_t seed);

// The distinct weighted n-gram features of tokenised text, sorted by hash (so that a SimHash
// over them sums in the same order on every run). Empty when there are no tokens. An unknown
// config.ngram 0 counts as 1 (the loader rejects it).
std::vector<Feature> features_of(const TokenHashes& tokens, const FeaturesConfig& config,
                                 std::uint64_t seed);

// features_of(hash_tokens(text, config, seed), config, seed).
std::vector<Feature> extract_features(std::string_view text, const FeaturesConfig& config,
                                      std::uint64_t seed);

}  // namespace neardup
