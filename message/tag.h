// From a pipeline result and the index's verdict to the output Tag (docs/records.md).
#pragma once

#include <string>

#include "message/record.h"
#include "pipeline/pipeline.h"
#include "store/index.h"

namespace neardup {

// The index request for a fingerprinted page under config (dedup.max_distance,
// dedup.min_similarity, the LSH design), or nullopt when the pipeline skipped it.
std::optional<PageRequest> index_request(const Page& page, const PageFingerprint& result,
                                         const std::string& scheme, const Config& config);

// The hashes of the passages' tracked paragraphs, in order (PageRequest::paragraphs).
std::vector<std::uint64_t> paragraph_hashes(const Passages& passages);

// The tag of a page: skipped pages carry the pipeline's reason; indexed ones the verdict.
Tag make_tag(const PageFingerprint& result, const Verdict& verdict, const std::string& scheme);
// Sets the tag's containment and paragraph fields from the verdict's.
void set_relations(Tag& tag, const Verdict& verdict);

}  // namespace neardup
