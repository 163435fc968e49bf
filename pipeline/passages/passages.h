// passages: the text's tokens -> what says that one page's text is held in another's, and which of
// its paragraphs were published before (containment and paragraph duplicates; the index keeps
// both, `neardup compare` compares them).
//
// Exactly (seed = fingerprint.seed, k = minhash.shingle, w = containment.window):
//   the tokens are features' token hashes t_0 .. t_n-1 (pipeline/features/features.h), over the
//   whole text, and shingle i = XXH3_64bits_withSeed(t_i .. t_i+k-1 as 8k little-endian bytes,
//   seed), i = 0 .. n - k: the MinHash sketch's shingles (pipeline/minhash/minhash.h);
//   anchors: winnowing (Schleimer, Wilkerson, Aiken, SIGMOD 2003) — in every window of w
//   consecutive shingles the smallest hash is selected (the rightmost of equal ones), and the
//   anchors are the distinct selected hashes, sorted (a text of fewer than w shingles selects its
//   smallest); a text of fewer than k tokens has none;
//   paragraphs: every paragraph of at least containment.paragraph_tokens tokens, its hash
//   XXH3_64bits_withSeed(its token hashes as little-endian bytes, seed ^ kParagraphSalt).
// Two texts that share a run of w + k - 1 tokens share an anchor (the guarantee); a text of n
// tokens has about 2n / (w + 1) anchors. The share of a text's anchors found among another's
// estimates the share of the first text held in the second (its containment), whatever the
// second text holds besides. Pure; any number of threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "config/config.h"
#include "pipeline/features/features.h"

namespace neardup {

// One tracked paragraph of a text: its hash, its place (0-based, among all of the text's
// paragraphs, '\n'-separated) and its tokens.
struct ParagraphHash {
  std::uint64_t hash = 0;
  std::uint32_t index = 0;
  std::uint32_t tokens = 0;

  bool operator==(const ParagraphHash&) const = default;
};

struct Passages {
  std::vector<std::uint64_t> anchors;       // distinct, ascending
  std::vector<ParagraphHash> paragraphs;    // in text order; a repeated one once, its first
  std::uint32_t tokens = 0;                 // of the whole text

  bool empty() const { return anchors.empty() && paragraphs.empty(); }
};

inline constexpr std::uint64_t kParagraphSalt = 0x70617261'67726170ull;  // "paragrap"

// The passages of tokenised text under `config` (containment.*, minhash.shingle,
// fingerprint.seed). Empty when containment.enabled is false.
Passages passages_of(const TokenHashes& tokens, const Config& config);

// The share of a's anchors that b holds too: the estimated share of a's text found in b
// (0 when a has none). Both sorted, as Passages::anchors are.
double containment(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b);

// A text without the paragraphs published before: the tracked paragraphs of `passages` (made
// from `text`) whose hash is in `seen` are dropped (a paragraph is a '\n'-separated line; its
// first occurrence, in an earlier text, is never dropped), and then every tracked paragraph's
// hash of this text is added to `seen`. For corpus builders (`neardup extract
// --drop-seen-paragraphs`).
struct KeptText {
  std::string text;
  std::size_t dropped_paragraphs = 0, dropped_bytes = 0;
};
KeptText drop_seen_paragraphs(std::string_view text, const Passages& passages,
                              std::unordered_set<std::uint64_t>& seen);
// The text without the tracked paragraphs of `passages` numbered in `ordinals` (their places in
// passages.paragraphs: the index's Verdict::paragraphs_seen_at).
KeptText drop_paragraphs(std::string_view text, const Passages& passages,
                         const std::vector<std::uint16_t>& ordinals);

}  // namespace neardup
