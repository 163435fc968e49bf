#include "message/tag.h"

#include <chrono>

#include "pipeline/fingerprint/fingerprint.h"

namespace neardup {

std::vector<std::uint64_t> paragraph_hashes(const Passages& passages) {
  std::vector<std::uint64_t> out;
  out.reserve(passages.paragraphs.size());
  for (const ParagraphHash& p : passages.paragraphs) out.push_back(p.hash);
  return out;
}

std::optional<PageRequest> index_request(const Page& page, const PageFingerprint& result,
                                         const std::string& scheme, const Config& config) {
  if (result.skip) return std::nullopt;
  std::int64_t seen_at = page.fetched_at_ms.value_or(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  const LshDesign lsh = requested_lsh(config.minhash);
  return PageRequest{.id = page.id,
                     .fingerprint = result.fingerprint,
                     .scheme = scheme,
                     .max_distance = config.dedup.max_distance,
                     .seen_at_ms = seen_at,
                     .sketch = result.sketch,
                     .sketch_upper = result.sketch_upper,
                     .bands = result.sketch.empty() ? 0 : lsh.bands,
                     .rows = result.sketch.empty() ? 0 : lsh.rows,
                     .min_similarity = config.dedup.min_similarity,
                     .anchors = result.passages.anchors,
                     .paragraphs = paragraph_hashes(result.passages),
                     .min_containment = config.dedup.min_containment};
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
  tag.fingerprint = fingerprint_hex(verdict.fingerprint.value_or(result.fingerprint));
  tag.site_boilerplate = verdict.boilerplate_lines;
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
  set_relations(tag, verdict);
  return tag;
}

void set_relations(Tag& tag, const Verdict& verdict) {
  tag.contained_in = verdict.contained_in;
  tag.contains = verdict.contains;
  tag.paragraphs = verdict.paragraphs;
  tag.paragraphs_seen = verdict.paragraphs_seen;
  tag.paragraphs_first = verdict.paragraphs_from;
}

}  // namespace neardup
