// Two pages' signatures compared by the index's rule, without an index: near-duplicates when
// the SimHash distance is within dedup.max_distance or, when minhash.enabled, the sketches share
// an LSH band at an estimated Jaccard similarity of dedup.min_similarity or above
// (common/sketch.h). `neardup compare` and the Python package answer with it.
#pragma once

#include <optional>
#include <string_view>

#include "config/config.h"
#include "pipeline/pipeline.h"

namespace neardup {

struct Comparison {
  bool comparable = false;  // false when either page was skipped: then nothing below is set
  int distance = 0;         // Hamming distance of the fingerprints
  std::optional<double> similarity;  // estimated Jaccard similarity; set when minhash.enabled
  bool shares_band = false;
  bool by_simhash = false, by_minhash = false;  // which rule found them near-duplicates

  bool near_duplicate() const { return by_simhash || by_minhash; }
  // "simhash", "minhash", "both", or "" when not near-duplicates (as a verdict's method).
  std::string_view method() const;
};

// Compares two results of fingerprint_page() computed under `config`.
Comparison compare_pages(const PageFingerprint& a, const PageFingerprint& b, const Config& config);

}  // namespace neardup
