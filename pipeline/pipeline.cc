#include "pipeline/pipeline.h"

#include "pipeline/decode/decode.h"
#include "pipeline/denoise/denoise.h"
#include "pipeline/features/features.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/minhash/minhash.h"

namespace neardup {
namespace {

// Times one stage into `slot` when the caller asked for times.
class StageClock {
 public:
  StageClock(StageTimes* times, std::optional<std::chrono::nanoseconds> StageTimes::*slot)
      : times_(times), slot_(slot) {
    if (times_) start_ = std::chrono::steady_clock::now();
  }
  ~StageClock() {
    if (times_) times_->*slot_ = std::chrono::steady_clock::now() - start_;
  }
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;

 private:
  StageTimes* times_;
  std::optional<std::chrono::nanoseconds> StageTimes::*slot_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

PageFingerprint fingerprint_page(std::string_view body, std::string_view content_type,
                                 const Config& config, PipelineOptions options) {
  PageFingerprint result;
  if (body.empty()) {
    result.skip = Skip{"empty_body", "the body has no bytes"};
    return result;
  }
  if (body.size() > config.input.max_body_bytes) {
    result.skip = Skip{"too_large", std::to_string(body.size()) + " bytes > input.max_body_bytes " +
                                        std::to_string(config.input.max_body_bytes)};
    return result;
  }
  std::expected<Decoded, Skip> decoded = [&] {
    StageClock clock(options.times, &StageTimes::decode);
    return decode(body, content_type, config.decode);
  }();
  if (!decoded) {
    result.skip = decoded.error();
    return result;
  }
  result.charset = decoded->charset;
  result.charset_source = decoded->charset_source;

  MainText main_text = [&] {
    StageClock clock(options.times, &StageTimes::denoise);
    return denoise(decoded->text, content_type, config.denoise);
  }();
  result.denoise_fell_back = main_text.fell_back;
  std::string text = joined_text(main_text);

  TokenHashes tokens;
  std::vector<Feature> features = [&] {
    StageClock clock(options.times, &StageTimes::features);
    tokens = hash_tokens(text, config.features, config.fingerprint.seed);
    return features_of(tokens, config.features, config.fingerprint.seed);
  }();
  result.feature_count = features.size();
  std::string learn_text;
  if (learn::learns(config) && config.denoise.site_boilerplate) learn_text = text;
  if (options.keep_text) {
    result.title = std::move(main_text.title);
    result.text = std::move(text);
  }
  if (features.size() < config.features.min_features) {
    result.skip =
        Skip{"low_content", std::to_string(features.size()) + " features < features.min_features " +
                                std::to_string(config.features.min_features)};
    return result;
  }
  StageClock clock(options.times, &StageTimes::fingerprint);
  result.fingerprint = simhash(features);
  if (config.minhash.enabled) {
    result.sketch = minhash_sketch(tokens.hashes, config.minhash, config.fingerprint.seed,
                                   &result.sketch_upper);
  }
  result.passages = passages_of(tokens, config);
  if (learn::learns(config)) {
    result.learn = std::make_shared<const learn::LearnInput>(
        learn::learn_input(learn::host_of(options.url), std::move(tokens), std::move(features),
                           result.fingerprint, learn_text, config));
  }
  return result;
}

}  // namespace neardup
