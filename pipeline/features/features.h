// features: main text -> weighted features (DESIGN.md §2).
//
// ICU NFKC + case folding, ICU word break iterator (CJK through ICU's dictionary), punctuation
// and whitespace tokens dropped, optional stop words, token n-grams of features.ngram tokens,
// weighting tf | log_tf | binary. Each n-gram is hashed with xxHash3-64 seeded by
// fingerprint.seed. Pure: safe on any number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace neardup {

struct Feature {
  std::uint64_t hash;  // XXH3_64bits_withSeed of the n-gram's tokens
  double weight;       // > 0
};

// Splits normalised text into word tokens (UTF-8), punctuation and spaces dropped.
std::vector<std::string> tokenize(std::string_view text, const FeaturesConfig& config);

// The distinct weighted n-gram features of text, in no particular order.
std::vector<Feature> extract_features(std::string_view text, const FeaturesConfig& config,
                                      std::uint64_t seed);

}  // namespace neardup
