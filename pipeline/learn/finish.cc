#include "pipeline/learn/finish.h"

#include <xxhash.h>

#include <algorithm>
#include <unordered_set>

#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/minhash/minhash.h"

namespace neardup::learn {
namespace {

std::uint64_t block_hash(std::span<const std::uint64_t> tokens, std::uint64_t seed) {
  return XXH3_64bits_withSeed(tokens.data(), tokens.size_bytes(), seed ^ kBlockSalt);
}

// The tokens without the paragraphs `drop` marks.
TokenHashes without(const TokenHashes& tokens, const std::vector<bool>& drop) {
  TokenHashes kept;
  std::size_t begin = 0;
  for (std::size_t p = 0; p < tokens.paragraph_ends.size(); ++p) {
    const std::size_t end = tokens.paragraph_ends[p];
    if (!drop[p]) {
      kept.hashes.insert(kept.hashes.end(), tokens.hashes.begin() + begin,
                         tokens.hashes.begin() + end);
      kept.paragraph_ends.push_back(kept.hashes.size());
      kept.paragraph_lines.push_back(tokens.paragraph_lines[p]);
    }
    begin = end;
  }
  return kept;
}

}  // namespace

LearnInput learn_input(std::string host, TokenHashes tokens, std::vector<Feature> features,
                       std::uint64_t fingerprint, std::string_view text, const Config& config) {
  LearnInput input;
  if (config.denoise.site_boilerplate) {
    input.host = std::move(host);
    input.text = text;
  }
  std::size_t begin = 0;
  for (std::size_t end : tokens.paragraph_ends) {
    input.blocks.push_back(
        block_hash(std::span(tokens.hashes).subspan(begin, end - begin), config.fingerprint.seed));
    begin = end;
  }
  input.tokens = std::move(tokens);
  input.features = std::move(features);
  input.fingerprint = fingerprint;
  return input;
}

std::string_view paragraph_text(const LearnInput& input, std::size_t paragraph) {
  if (paragraph >= input.tokens.paragraph_lines.size()) return {};
  std::size_t line = input.tokens.paragraph_lines[paragraph];
  std::string_view text = input.text;
  while (line > 0) {
    const std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos) return {};
    text.remove_prefix(newline + 1);
    --line;
  }
  return text.substr(0, text.find('\n'));
}

Finished finish(const LearnInput& input, const Config& config, const DocFrequencies* frequencies,
                const SiteBoilerplate* sites) {
  Finished out;
  const std::size_t paragraphs = input.tokens.paragraph_ends.size();
  std::unordered_set<std::uint64_t> seen;
  for (std::size_t p = 0; p < paragraphs; ++p) {
    if (seen.insert(input.blocks[p]).second) {
      out.blocks.push_back(input.blocks[p]);
      out.block_paragraphs.push_back(p);
    }
  }

  // 1. The host's learned boilerplate.
  const TokenHashes* tokens = &input.tokens;
  const std::vector<Feature>* features = &input.features;
  TokenHashes kept;
  std::vector<Feature> kept_features;
  const SiteBoilerplate::Host* host =
      sites != nullptr && !input.host.empty() ? sites->find(input.host) : nullptr;
  if (host != nullptr) {
    std::vector<bool> drop(paragraphs, false);
    std::size_t dropped = 0;
    for (std::size_t p = 0; p < paragraphs; ++p) {
      drop[p] = sites->learned(*host, input.blocks[p]);
      dropped += drop[p];
    }
    if (dropped > 0) {
      kept = without(input.tokens, drop);
      kept_features = features_of(kept, config.features, config.fingerprint.seed);
      if (kept_features.size() >= config.features.min_features) {
        tokens = &kept;
        features = &kept_features;
        out.text_changed = true;
        for (std::size_t p = 0; p < paragraphs; ++p) {
          if (drop[p]) {
            out.removed_lines.push_back(
                static_cast<std::uint32_t>(input.tokens.paragraph_lines[p]));
          }
        }
      }
    }
  }

  // 2. Inverse document frequencies.
  out.features.reserve(features->size());
  for (const Feature& f : *features) out.features.push_back(f.hash);
  const bool weigh = config.features.weighting == Weighting::kTfidf && frequencies != nullptr &&
                     frequencies->pages() >= config.features.idf_warmup_pages &&
                     frequencies->pages() > 0;
  if (weigh) {
    std::vector<Feature> weighted = *features;
    for (Feature& f : weighted) f.weight *= frequencies->idf(f.hash);
    out.fingerprint = simhash(weighted);
  } else if (out.text_changed) {
    out.fingerprint = simhash(*features);
  } else {
    out.fingerprint = input.fingerprint;
  }

  // 3. The other signatures of what is left (MinHash and passages are of the text's set of
  // shingles: weights do not change them).
  if (out.text_changed) {
    if (config.minhash.enabled) {
      out.sketch = minhash_sketch(tokens->hashes, config.minhash, config.fingerprint.seed,
                                  &out.sketch_upper);
    }
    out.passages = passages_of(*tokens, config);
  }
  return out;
}

}  // namespace neardup::learn
