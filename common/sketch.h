// MinHash sketches and their banded LSH keys: the facts that the pipeline (which computes a
// sketch, pipeline/minhash/) and the index (which stores and compares them, store/) share.
//
// A sketch is `hashes` 16-bit values; value j is the low 16 bits of the minimum, over the
// page's word shingles, of the j-th hash function (pipeline/minhash/minhash.h), and its upper
// values are bits 16-31 of the same minima. The band keys hash all 16 bits of each value, and
// with the upper values 32 (wide band keys: two unrelated pages then share a band of r values
// by chance 2^-32r times, not 2^-16r); the similarity is estimated from the low kSketchBits bits of
// each (b-bit minwise hashing: Li, König, "b-Bit Minwise Hashing", WWW 2010), which is what
// the index stores a page (store/FORMAT.md). Two pages' low bits agree with probability
// P = J + (1 - J) 2^-b, J their shingle sets' Jaccard similarity (two different minima agree in
// b uniform bits by chance); estimate_jaccard() inverts that: (observed - 2^-b) / (1 - 2^-b),
// unbiased, with a standard deviation of sqrt(P (1 - P) / hashes) / (1 - 2^-b): 0.0441 at
// J = 0.45 and 128 values for b = 8, against 0.0440 for all 16 bits (measured errors:
// pipeline/minhash/MEASUREMENTS.md).
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
// Bits 16-31 of each value's minimum, in the sketch's order; empty when not known (a sketch
// from a store, or from a caller that gives the 16 bits alone).
using SketchUpper = std::vector<std::uint16_t>;

// An LSH design: a sketch's first bands x rows values cut into `bands` bands of `rows` values.
struct LshDesign {
  std::uint32_t bands = 0, rows = 0;
  bool operator==(const LshDesign&) const = default;
};

// The design a scheme gets when minhash.bands and minhash.rows are left unset and the store
// does not hold the scheme yet: 21 bands of 2 values (a pair at J = 0.45 shares one with
// probability 0.991; pipeline/minhash/MEASUREMENTS.md, store/FORMAT.md).
inline constexpr LshDesign kDefaultLsh{21, 2};
// The design every scheme got before the store chose it: 42 bands of 3 values. A scheme id
// hashes an unset minhash.bands or minhash.rows as this one's (config/config.h scheme_id), so
// the schemes of stores written then keep their ids and their designs.
inline constexpr LshDesign kFormerDefaultLsh{42, 3};

// The bits of each value that similarity is estimated from and that the index keeps.
inline constexpr unsigned kSketchBits = 8;
inline constexpr std::uint16_t kSketchMask = (1u << kSketchBits) - 1;

// Whether two values agree in the bits that are compared.
inline bool same_value(std::uint16_t a, std::uint16_t b) { return ((a ^ b) & kSketchMask) == 0; }

// Estimated Jaccard similarity of two sketches of equal length (0 when empty or unequal),
// in [0, 1]. Either may hold all 16 bits of each value or only the low kSketchBits.
inline double estimate_jaccard(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b) {
  if (a.empty() || a.size() != b.size()) return 0;
  std::size_t equal = 0;
  for (std::size_t i = 0; i < a.size(); ++i) equal += same_value(a[i], b[i]);
  constexpr double kChance = 1.0 / (1u << kSketchBits);  // different minima, equal low bits
  const double observed = static_cast<double>(equal) / static_cast<double>(a.size());
  return std::clamp((observed - kChance) / (1 - kChance), 0.0, 1.0);
}

// Whether two sketches agree in every compared bit (a page stored again unchanged).
inline bool same_sketch(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), same_value);
}

// Whether the sketches share band `band`: all its values equal in the bits of `mask`. Two
// pages' sketches share a band when all 16 bits agree (what the band's key hashes); the index
// finds a candidate by that key and confirms it against the stored low kSketchBits bits
// (mask kSketchMask).
inline bool shares_band(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b,
                        std::uint32_t band, std::uint32_t rows, std::uint16_t mask = 0xffff) {
  const std::size_t from = std::size_t{band} * rows;
  for (std::size_t i = from; i < from + rows; ++i) {
    if ((a[i] ^ b[i]) & mask) return false;
  }
  return true;
}

// Whether they share any of the first `bands` bands.
inline bool shares_any_band(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b,
                            std::uint32_t bands, std::uint32_t rows, std::uint16_t mask = 0xffff) {
  if (a.size() != b.size() || std::size_t{bands} * rows > a.size()) return false;
  for (std::uint32_t band = 0; band < bands; ++band) {
    if (shares_band(a, b, band, rows, mask)) return true;
  }
  return false;
}

// The same for pages with upper values (either empty: the 16 bits alone): a band is shared
// when its values agree in all 32 bits, as wide band keys find it.
inline bool shares_any_band(std::span<const std::uint16_t> a,
                            std::span<const std::uint16_t> a_upper,
                            std::span<const std::uint16_t> b,
                            std::span<const std::uint16_t> b_upper, std::uint32_t bands,
                            std::uint32_t rows) {
  if (a_upper.empty() || b_upper.empty()) return shares_any_band(a, b, bands, rows);
  if (a.size() != b.size() || a_upper.size() != a.size() || b_upper.size() != b.size() ||
      std::size_t{bands} * rows > a.size()) {
    return false;
  }
  for (std::uint32_t band = 0; band < bands; ++band) {
    if (shares_band(a, b, band, rows) && shares_band(a_upper, b_upper, band, rows)) return true;
  }
  return false;
}

// The second signature's rule: b is a MinHash match of a when they share a band (what the
// index's LSH probe finds) and the estimated Jaccard similarity reaches min_similarity.
inline bool minhash_match(std::span<const std::uint16_t> a, std::span<const std::uint16_t> b,
                          std::uint32_t bands, std::uint32_t rows, double min_similarity,
                          std::uint16_t mask = 0xffff) {
  return shares_any_band(a, b, bands, rows, mask) && estimate_jaccard(a, b) >= min_similarity;
}

// The index key of band `band`: XXH3-64 of its values (little-endian u16s), seeded with the
// band number, so equal values in different bands give different keys. With upper values
// (wide band keys: `upper` holds at least the band's values, its first bands x rows), of its
// 32-bit values (little-endian u32s, the upper value in the high half), seeded with the band
// number plus 2^32.
inline std::uint64_t band_key(std::span<const std::uint16_t> sketch,
                              std::span<const std::uint16_t> upper, std::uint32_t band,
                              std::uint32_t rows) {
  std::uint8_t bytes[4 * 16];
  const std::size_t from = std::size_t{band} * rows;
  const std::uint32_t n = std::min<std::uint32_t>(rows, 16);
  if (upper.empty()) {
    for (std::uint32_t r = 0; r < n; ++r) {
      bytes[2 * r] = static_cast<std::uint8_t>(sketch[from + r] & 0xff);
      bytes[2 * r + 1] = static_cast<std::uint8_t>(sketch[from + r] >> 8);
    }
    return XXH3_64bits_withSeed(bytes, 2 * n, band);
  }
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::uint16_t low = sketch[from + r], high = upper[from + r];
    bytes[4 * r] = static_cast<std::uint8_t>(low & 0xff);
    bytes[4 * r + 1] = static_cast<std::uint8_t>(low >> 8);
    bytes[4 * r + 2] = static_cast<std::uint8_t>(high & 0xff);
    bytes[4 * r + 3] = static_cast<std::uint8_t>(high >> 8);
  }
  return XXH3_64bits_withSeed(bytes, 4 * n, band + (std::uint64_t{1} << 32));
}
inline std::uint64_t band_key(std::span<const std::uint16_t> sketch, std::uint32_t band,
                              std::uint32_t rows) {
  return band_key(sketch, {}, band, rows);
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

// The keys of the first `bands` bands, in band order (wide when `upper` is given); of every
// `step`-th band from `first` only when given (a shard's bands: docs/scale-out.md).
inline void band_keys(std::span<const std::uint16_t> sketch, std::span<const std::uint16_t> upper,
                      std::uint32_t bands, std::uint32_t rows, std::vector<std::uint64_t>& out,
                      std::uint32_t first = 0, std::uint32_t step = 1) {
  out.clear();
  for (std::uint32_t b = first; b < bands; b += step) {
    out.push_back(band_key(sketch, upper, b, rows));
  }
}

}  // namespace neardup
