// From a pipeline result and the index's verdict to the output Tag (DESIGN.md §3).
#pragma once

#include <string>

#include "message/record.h"
#include "pipeline/pipeline.h"
#include "store/index.h"

namespace neardup {

// The index request for a fingerprinted page, or nullopt when the pipeline skipped it.
std::optional<IndexItem::Page> index_request(const Page& page, const PageFingerprint& result,
                                             const std::string& scheme,
                                             std::uint32_t max_distance);

// The tag of a page: skipped pages carry the pipeline's reason; indexed ones the verdict.
Tag make_tag(const PageFingerprint& result, const Verdict& verdict, const std::string& scheme);

}  // namespace neardup
