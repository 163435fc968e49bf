// PLACEHOLDER: replaced by the ICU-based feature extractor.
#include "pipeline/features/features.h"

#include <xxhash.h>

#include <sstream>
#include <unordered_map>

namespace neardup {
std::vector<std::string> tokenize(std::string_view text, const FeaturesConfig&) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}
std::vector<Feature> extract_features(std::string_view text, const FeaturesConfig& config,
                                      std::uint64_t seed) {
  std::unordered_map<std::uint64_t, double> counts;
  for (const auto& t : tokenize(text, config)) counts[XXH3_64bits_withSeed(t.data(), t.size(), seed)] += 1;
  std::vector<Feature> out;
  for (auto [h, w] : counts) out.push_back({h, w});
  return out;
}
}  // namespace neardup
