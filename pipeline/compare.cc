#include "pipeline/compare.h"

#include <algorithm>

#include "common/sketch.h"
#include "pipeline/fingerprint/fingerprint.h"

namespace neardup {

std::string_view Comparison::method() const {
  if (by_simhash && by_minhash) return "both";
  if (by_simhash) return "simhash";
  return by_minhash ? "minhash" : "";
}

std::string_view Comparison::contained() const {
  if (!a_contained && !b_contained) return "";
  return a_contained && (!b_contained || *a_in_b >= *b_in_a) ? "a_in_b" : "b_in_a";
}

Comparison compare_pages(const PageFingerprint& a, const PageFingerprint& b, const Config& config) {
  Comparison c;
  if (a.skip || b.skip) return c;
  c.comparable = true;
  c.distance = hamming_distance(a.fingerprint, b.fingerprint);
  c.by_simhash = c.distance <= static_cast<int>(config.dedup.max_distance);
  if (config.minhash.enabled) {
    const LshDesign lsh = new_scheme_lsh(config.minhash);
    c.similarity = estimate_jaccard(a.sketch, b.sketch);
    // What the index of a new store finds: bands by wide keys, when both pages carry them.
    c.shares_band =
        shares_any_band(a.sketch, a.sketch_upper, b.sketch, b.sketch_upper, lsh.bands, lsh.rows);
    c.by_minhash = c.shares_band && *c.similarity >= config.dedup.min_similarity;
  }
  if (config.containment.enabled) {
    c.a_in_b = containment(a.passages.anchors, b.passages.anchors);
    c.b_in_a = containment(b.passages.anchors, a.passages.anchors);
    c.a_contained = *c.a_in_b >= config.dedup.min_containment;
    c.b_contained = *c.b_in_a >= config.dedup.min_containment;
    for (const ParagraphHash& p : a.passages.paragraphs) {
      c.paragraphs_shared += std::any_of(b.passages.paragraphs.begin(), b.passages.paragraphs.end(),
                                         [&](const ParagraphHash& q) { return q.hash == p.hash; });
    }
  }
  return c;
}

}  // namespace neardup
