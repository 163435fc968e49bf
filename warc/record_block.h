// A WARC record's block: its WARC-Block-Digest checked, and the HTTP response in a response
// record read into a page (warc_entry.h's skip reasons).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "warc/warc_entry.h"

namespace neardup::warc {

// Decoded bytes added to an output buffer at a time, by the stream's gzip members (warc_stream.h)
// and by a block's content coding.
inline constexpr std::size_t kDecodeChunk = 1 << 18;

// Checks a WARC-Block-Digest of the form sha1:BASE32 (or sha1:HEX). Returns what is wrong when
// the block's SHA-1 differs; nullopt when it matches or when there is no SHA-1 digest to check.
std::optional<std::string> block_digest_mismatch(std::string_view digest, std::string_view block);

// Reads the HTTP response in a response record's block into `page` (content_type, body): the
// status must be 200 and the Content-Type HTML or absent; chunked transfer coding and gzip,
// deflate or br content coding are undone. Returns the skip reason (warc_entry.h) when it gives
// no page.
std::optional<std::string> read_http_response(std::string_view block, WarcPage& page);

}  // namespace neardup::warc
