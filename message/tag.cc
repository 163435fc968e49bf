#include "message/tag.h"

#include <chrono>

#include "pipeline/fingerprint/fingerprint.h"

namespace neardup {

std::optional<PageRequest> index_request(const Page& page, const PageFingerprint& result,
                                         const std::string& scheme, const Config& config) {
  if (result.skip) return std::nullopt;
  std::int64_t seen_at = page.fetched_at_ms.value_or(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  return PageRequest{.id = page.id,
                     .fingerprint = result.fingerprint,
                     .scheme = scheme,
                     .max_distance = config.dedup.max_distance,
                     .seen_at_ms = seen_at,
                     .sketch = result.sketch,
                     .bands = result.sketch.empty() ? 0 : config.minhash.bands,
                     .rows = result.sketch.empty() ? 0 : config.minhash.rows,
                     .min_similarity = config.dedup.min_similarity};
}

Tag make_tag(const PageFingerprint& result, const Verdict& verdict, const std::string& scheme) {
  Tag tag;
  tag.scheme = scheme;
  tag.charset = result.charset;
  tag.charset_source = result.charset_source;
  if (result.skip) {
    tag.status = "skipped";
    tag.reason = result.skip->reason;
    return tag;
  }
  tag.fingerprint = fingerprint_hex(result.fingerprint);
  tag.status = std::string(status_name(verdict.status));
  if (verdict.status == Verdict::Status::kDuplicate) {
    tag.duplicate_of = verdict.duplicate_of;
    tag.matched = verdict.matched;
    tag.distance = verdict.distance;
    tag.method = std::string(method_name(verdict.method));
    tag.similarity = verdict.similarity;
  } else if (verdict.status == Verdict::Status::kSkipped) {
    tag.reason = verdict.reason;
  }
  return tag;
}

}  // namespace neardup
