#include "pipeline/compare.h"

#include "common/sketch.h"
#include "pipeline/fingerprint/fingerprint.h"

namespace neardup {

std::string_view Comparison::method() const {
  if (by_simhash && by_minhash) return "both";
  if (by_simhash) return "simhash";
  return by_minhash ? "minhash" : "";
}

Comparison compare_pages(const PageFingerprint& a, const PageFingerprint& b, const Config& config) {
  Comparison c;
  if (a.skip || b.skip) return c;
  c.comparable = true;
  c.distance = hamming_distance(a.fingerprint, b.fingerprint);
  c.by_simhash = c.distance <= static_cast<int>(config.dedup.max_distance);
  if (config.minhash.enabled) {
    const MinHashConfig& m = config.minhash;
    c.similarity = estimate_jaccard(a.sketch, b.sketch);
    c.shares_band = shares_any_band(a.sketch, b.sketch, m.bands, m.rows);
    c.by_minhash = minhash_match(a.sketch, b.sketch, m.bands, m.rows, config.dedup.min_similarity);
  }
  return c;
}

}  // namespace neardup
