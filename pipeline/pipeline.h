// The pure page -> signatures pipeline: decode, denoise, features, then the signatures: the
// SimHash fingerprint, (minhash.enabled) the MinHash sketch and (containment.enabled) the
// passages: anchors and paragraph hashes.
//
// One call runs every stage for one page under one Config. No I/O, no shared state: the
// daemon and `neardup dedup` run it on a thread pool, any number at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/sketch.h"
#include "config/config.h"
#include "pipeline/learn/finish.h"
#include "pipeline/passages/passages.h"
#include "pipeline/skip.h"

namespace neardup {

struct PageFingerprint {
  std::optional<Skip> skip;  // set: the page is skipped and has no fingerprint
  std::uint64_t fingerprint = 0;
  Sketch sketch;  // empty when minhash.enabled is false (or the page is skipped)
  SketchUpper sketch_upper;  // bits 16-31 of the sketch's minima (common/sketch.h), as long
  Passages passages;  // empty when containment.enabled is false (or the page is skipped)
  std::size_t feature_count = 0;
  std::string charset;  // empty when decoding did not happen
  std::string charset_source;
  std::string title;
  std::string text;  // main text (paragraphs joined by '\n'); kept only if asked
  bool denoise_fell_back = false;
  // Set for a fingerprinted page of a scheme that learns (learn::learns): what the index
  // finishes its signatures from (pipeline/learn/finish.h). The signatures above are then those
  // of nothing learned yet.
  std::shared_ptr<const learn::LearnInput> learn;
};

// Wall time of each stage of one fingerprint_page call; a stage the page did not reach (it was
// skipped before) stays unset. Reading the clock is the only side effect, and only when asked.
struct StageTimes {
  // fingerprint: both signatures (SimHash and, when enabled, the MinHash sketch).
  std::optional<std::chrono::nanoseconds> decode, denoise, features, fingerprint;
};

struct PipelineOptions {
  bool keep_text = false;       // fill PageFingerprint::text/title (extract, debugging)
  StageTimes* times = nullptr;  // when set, filled with the stages' wall times (metrics)
  std::string_view url;         // the page's URL: its host, for denoise.site_boilerplate
};

// Runs decode -> denoise -> features -> fingerprint (+ sketch). Bodies larger than
// input.max_body_bytes are skipped (too_large) before any work.
PageFingerprint fingerprint_page(std::string_view body, std::string_view content_type,
                                 const Config& config, PipelineOptions options = {});

}  // namespace neardup
