// minhash: the text's tokens -> a MinHash sketch of its word shingles (Broder, "On the
// resemblance and containment of documents", 1997): the second signature, which finds the
// copies a whole-text SimHash misses (truncated copies, rewritten paragraphs, dropped or added
// sections). Sketches are compared and banded as common/sketch.h describes.
//
// Exactly (seed = fingerprint.seed, w = minhash.shingle, H = minhash.hashes):
//   the tokens are features' token hashes t_0 .. t_n-1 (pipeline/features/features.h), over the
//   whole text (paragraph boundaries do not cut shingles);
//   shingle i = XXH3_64bits_withSeed(t_i .. t_i+w-1 as 8w little-endian bytes, seed), for
//   i = 0 .. n - w (one shingle of all tokens when n < w);
//   salt_j = XXH3_64bits_withSeed(j as 4 little-endian bytes, seed), j = 0 .. H - 1;
//   h_j(s) = mix64(s ^ salt_j), mix64 being splitmix64's finaliser (common/mix.h, a bijection);
//   value j = the low 16 bits of min over shingles of h_j; its upper value (in `upper`, when
//   given) bits 16-31 of the same minimum, which wide band keys hash (common/sketch.h).
// An empty token list gives an empty sketch. The minima are taken eight hashes an instruction
// where the CPU has AVX-512 (minima.h), with the same result. Pure; any number of threads.
#pragma once

#include <cstdint>
#include <span>

#include "common/sketch.h"
#include "config/config.h"

namespace neardup {

Sketch minhash_sketch(std::span<const std::uint64_t> token_hashes, const MinHashConfig& config,
                      std::uint64_t seed, SketchUpper* upper = nullptr);

}  // namespace neardup
