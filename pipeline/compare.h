// Two pages' signatures compared by the index's rule, without an index: near-duplicates when
// the SimHash distance is within dedup.max_distance or, when minhash.enabled, the sketches share
// an LSH band (of the design a new scheme of the config gets: new_scheme_lsh, config.h) at an
// estimated Jaccard similarity of dedup.min_similarity or above (common/sketch.h); and, when
// containment.enabled, whether either page's text is contained in the other's (at least
// dedup.min_containment of its anchors found there: passages.h). `neardup compare` and the Python
// package answer with it.
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
  // When containment.enabled: the estimated share of A's text found in B and of B's in A
  // (passages.h), and the paragraphs both hold (by hash).
  std::optional<double> a_in_b, b_in_a;
  std::size_t paragraphs_shared = 0;
  // A is contained in B (a_in_b >= dedup.min_containment), and B in A.
  bool a_contained = false, b_contained = false;

  bool near_duplicate() const { return by_simhash || by_minhash; }
  // "simhash", "minhash", "both", or "" when not near-duplicates (as a verdict's method).
  std::string_view method() const;
  // "a_in_b" or "b_in_a" when a text is contained in the other (when both are, the one of the
  // larger share), or "" when neither is.
  std::string_view contained() const;
};

// Compares two results of fingerprint_page() computed under `config`.
Comparison compare_pages(const PageFingerprint& a, const PageFingerprint& b, const Config& config);

}  // namespace neardup
