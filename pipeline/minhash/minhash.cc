#include "pipeline/minhash/minhash.h"

// Inlined: a shingle or token hash is a short input, where the call costs as much as the hash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "pipeline/minhash/minima.h"

namespace neardup {
namespace {

std::uint64_t xxh3_le(const void* data, std::size_t size, std::uint64_t seed) {
  return XXH3_64bits_withSeed(data, size, seed);
}

}  // namespace

Sketch minhash_sketch(std::span<const std::uint64_t> tokens, const MinHashConfig& config,
                      std::uint64_t seed, SketchUpper* upper) {
  if (upper != nullptr) upper->clear();
  if (tokens.empty() || config.hashes == 0) return {};
  const std::size_t w = std::clamp<std::size_t>(config.shingle, 1, tokens.size());
  const std::size_t hashes = config.hashes;

  // The salts of the H hash functions; the 4 bytes of j are written little-endian.
  thread_local std::vector<std::uint64_t> salts;
  thread_local std::uint64_t salts_seed = 0;
  if (salts.size() != hashes || salts_seed != seed) {
    salts.resize(hashes);
    for (std::uint32_t j = 0; j < hashes; ++j) {
      const std::uint8_t le[4] = {static_cast<std::uint8_t>(j), static_cast<std::uint8_t>(j >> 8),
                                  static_cast<std::uint8_t>(j >> 16),
                                  static_cast<std::uint8_t>(j >> 24)};
      salts[j] = xxh3_le(le, sizeof le, seed);
    }
    salts_seed = seed;
  }

  // Token hashes are already in little-endian byte order (features.h), so the shingle hash
  // reads them as they are.
  thread_local std::vector<std::uint64_t> shingles;
  shingles.clear();
  for (std::size_t i = 0; i + w <= tokens.size(); ++i) {
    shingles.push_back(xxh3_le(&tokens[i], w * sizeof(std::uint64_t), seed));
  }
  thread_local std::vector<std::uint64_t> minima;
  minima.assign(hashes, std::numeric_limits<std::uint64_t>::max());
  minhash_internal::fold_minima(shingles, salts, minima);
  const std::uint64_t* const min = minima.data();
  Sketch sketch(hashes);
  for (std::size_t j = 0; j < hashes; ++j) sketch[j] = static_cast<std::uint16_t>(min[j]);
  if (upper != nullptr) {
    upper->resize(hashes);
    for (std::size_t j = 0; j < hashes; ++j) (*upper)[j] = static_cast<std::uint16_t>(min[j] >> 16);
  }
  return sketch;
}

}  // namespace neardup
