// MinHash sketches and their banded LSH keys: the facts that the pipeline (which computes a
// sketch, pipeline/minhash/) and the index (which stores and compares them, store/) share.
//
// A sketch is `hashes` 16-bit values; value j is the low 16 bits of the minimum, over the
// page's word shingles, of the j-th hash function (pipeline/minhash/minhash.h). Two pages'
// values agree with probability J, their shingle sets' Jaccard similarity, plus 2^-16 for two
// different minima whose low bits agree; estimate_jaccard() corrects for that.
// Banding (Indyk, Motwani 1998; Leskovec, Rajaraman, Ullman, "Mining of Massive Datasets",
// ch. 3): band b is values [b * rows, (b + 1) * rows); two sketches share band b when all of its
// values agree, with probability about J^rows, so a pair shares at least one of `bands` bands
// with probability 1 - (1 - J^rows)^bands.
#pragma once

// band_key() runs for every band of every page: inlined, with its short-input path visible.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace neardup {

using Sketch = std::vector<std::uint16_t>;

// Estimated Jaccard similarity of two sketches of equal length (0 when empty or unequal),
// in [0, 1].
inline double estimate_jaccard(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b) {
  if (a.empty() || a.size() != b.size()) return 0;
  std::size_t equal = 0;
  for (std::size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i];
  constexpr double kChance = 1.0 / 65536;  // two different minima, equal low 16 bits
  const double observed = static_cast<double>(equal) / static_cast<double>(a.size());
  return std::clamp((observed - kChance) / (1 - kChance), 0.0, 1.0);
}

// Whether the sketches share band `band` (all its values equal).
inline bool shares_band(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b,
                        std::uint32_t band, std::uint32_t rows) {
  const std::size_t from = std::size_t{band} * rows;
  return std::equal(a.begin() + from, a.begin() + from + rows, b.begin() + from);
}

// Whether they share any of the first `bands` bands.
inline bool shares_any_band(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b,
                            std::uint32_t bands, std::uint32_t rows) {
  if (a.size() != b.size() || std::size_t{bands} * rows > a.size()) return false;
  for (std::uint32_t band = 0; band < bands; ++band) {
    if (shares_band(a, b, band, rows)) return true;
  }
  return false;
}

// The second signature's rule: b is a MinHash match of a when they share a band (what the
// index's LSH probe finds) and the estimated Jaccard similarity reaches min_similarity.
inline bool minhash_match(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b,
                          std::uint32_t bands, std::uint32_t rows, double min_similarity) {
  return shares_any_band(a, b, bands, rows) && estimate_jaccard(a, b) >= min_similarity;
}

// The index key of band `band`: XXH3-64 of its values (little-endian u16s), seeded with the
// band number, so equal values in different bands give different keys.
inline std::uint64_t band_key(std::span<const std::uint16_t> sketch, std::uint32_t band,
                              std::uint32_t rows) {
  std::uint8_t bytes[2 * 16];
  const std::size_t from = std::size_t{band} * rows;
  for (std::uint32_t r = 0; r < rows && r < 16; ++r) {
    bytes[2 * r] = static_cast<std::uint8_t>(sketch[from + r] & 0xff);
    bytes[2 * r + 1] = static_cast<std::uint8_t>(sketch[from + r] >> 8);
  }
  return XXH3_64bits_withSeed(bytes, 2 * std::min<std::uint32_t>(rows, 16), band);
}

// The sketch as text: 4 lower-case hex digits per value, in order ("00a1ff03...").
inline std::string sketch_hex(std::span<const std::uint16_t> sketch) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(4 * sketch.size());
  for (std::uint16_t v : sketch) {
    for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kDigits[(v >> shift) & 0xf]);
  }
  return out;
}

// The keys of the first `bands` bands, in band order.
inline void band_keys(std::span<const std::uint16_t> sketch, std::uint32_t bands,
                      std::uint32_t rows, std::vector<std::uint64_t>& out) {
  out.clear();
  for (std::uint32_t b = 0; b < bands; ++b) out.push_back(band_key(sketch, b, rows));
}

}  // namespace neardup
