// finish: a page's signatures under what its scheme learned from the pages before it
// (features.weighting tfidf, denoise.site_boilerplate): the part of the pipeline that runs at the
// index, in the order pages are applied, because it depends on that order.
//
// The workers run the pipeline as for any scheme (pipeline.h): the signatures they make are the
// page's signatures before anything is learned (tf weights, the whole main text), and they keep
// the page's LearnInput. The index's one writer then, for each page it decides afresh:
//   1. drops the paragraphs that are the host's learned boilerplate (site_blocks.h), unless the
//      rest would have fewer than features.min_features features (a page that is all its site's
//      boilerplate keeps its whole text);
//   2. multiplies each feature's weight by its idf (doc_freq.h) once the scheme learned from at
//      least features.idf_warmup_pages pages;
//   3. makes the SimHash, MinHash sketch and passages of what is left, as pipeline.h would;
//   4. after the verdict, a page that is not a duplicate teaches both: its distinct features to
//      the document frequencies and its distinct blocks to its host (copies teach nothing: a
//      story syndicated a thousand times is neither a common phrase nor a site's boilerplate).
// A block is a paragraph of the main text (features.h's paragraphs), named
// XXH3_64bits_withSeed(its token hashes as little-endian bytes, seed ^ kBlockSalt).
// Pure; the learned state is read, never written, here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/sketch.h"
#include "config/config.h"
#include "pipeline/features/features.h"
#include "pipeline/learn/doc_freq.h"
#include "pipeline/learn/site_blocks.h"
#include "pipeline/passages/passages.h"

namespace neardup::learn {

inline constexpr std::uint64_t kBlockSalt = 0x73697465'626c6f63ull;  // "siteblock"

// Whether pages of this config are finished at the index (tfidf or site_boilerplate).
inline bool learns(const Config& config) {
  return config.features.weighting == Weighting::kTfidf || config.denoise.site_boilerplate;
}

// What a worker keeps of a page for the index to finish it.
struct LearnInput {
  std::string host;                   // host_of(the page's url); empty: no site learning
  TokenHashes tokens;                 // of the whole main text
  std::vector<std::uint64_t> blocks;  // the block of each paragraph of `tokens`, in order
  std::string text;                   // the main text (a learned block keeps its text)
  std::vector<Feature> features;      // features_of(tokens), tf weights
  std::uint64_t fingerprint = 0;      // simhash(features): the page's before anything is learned
};

// Fills a LearnInput from the main text's tokens (its blocks, features and, with
// site_boilerplate, the text) and the fingerprint made from them.
LearnInput learn_input(std::string host, TokenHashes tokens, std::vector<Feature> features,
                       std::uint64_t fingerprint, std::string_view text, const Config& config);

struct Finished {
  std::uint64_t fingerprint = 0;
  // Made only when blocks were dropped (text_changed); else the worker's stand.
  bool text_changed = false;
  Sketch sketch;
  SketchUpper sketch_upper;
  Passages passages;
  std::vector<std::uint64_t> features;  // distinct feature hashes: what the frequencies learn
  std::vector<std::uint64_t> blocks;    // distinct blocks, in text order: what the host learns
  std::vector<std::size_t> block_paragraphs;  // the paragraph (of `tokens`) of each block
  std::vector<std::uint32_t> removed_lines;   // main-text lines dropped: learned boilerplate
};

// The page's signatures under the learned state: `frequencies` and `sites` may be null (nothing
// learned).
Finished finish(const LearnInput& input, const Config& config, const DocFrequencies* frequencies,
                const SiteBoilerplate* sites);

// The text of paragraph p of the input's tokens (a line of its main text).
std::string_view paragraph_text(const LearnInput& input, std::size_t paragraph);

}  // namespace neardup::learn
