// What WarcReader (warc_reader.h) returns for each record of a WARC file, and the bounds it
// reads within: the entry, its kinds and skip reasons, and where in the file it is.
#pragma once

#include <cstdint>
#include <string>

namespace neardup::warc {

// The page of a response record: the HTTP body with its transfer and content codings undone.
struct WarcPage {
  std::string target_uri;    // WARC-Target-URI (angle brackets of the WARC 1.0 draft removed)
  std::string record_id;     // WARC-Record-ID without its angle brackets: "urn:uuid:..."
  std::string date;          // WARC-Date as written, e.g. 2026-01-02T03:04:05Z
  std::string content_type;  // the HTTP Content-Type header value; may be empty
  std::string body;
};

// Where a record starts. In a gzip file `offset` is the file offset of the gzip member the record
// starts in (what CDX indexes give), and `in_member` the record's position in that member's
// decompressed bytes (0 for per-record gzip); otherwise `offset` is the record's byte offset.
struct WarcOffset {
  std::uint64_t offset = 0;
  std::uint64_t in_member = 0;
};

// "offset 784", or "offset 0 (+5120 decompressed)" inside a whole-file gzip stream.
inline std::string describe(const WarcOffset& where) {
  std::string text = "offset " + std::to_string(where.offset);
  if (where.in_member > 0) text += " (+" + std::to_string(where.in_member) + " decompressed)";
  return text;
}

// What one record was, or what was wrong at one place in the file.
struct WarcEntry {
  enum class Kind {
    kPage,        // a response record with an HTTP 200 HTML (or untyped) page: `page`
    kPassedOver,  // not a response record; `reason` is its WARC-Type (warcinfo, request, ...)
    kSkipped,     // a response record that gives no page; `reason` is a stable code (below)
    kCorrupt,     // damaged bytes; `reason` says what was wrong; reading resumes after them
  };
  Kind kind = Kind::kCorrupt;
  WarcOffset where;
  std::string reason;
  WarcPage page;
};

// Skip reasons of response records (WarcEntry::reason for kSkipped):
//   status_NNN     the HTTP status is NNN, not 200
//   not_html       the Content-Type is present and is not text/html or application/xhtml+xml
//   not_http       the block is not an HTTP response (e.g. Heritrix's dns: records)
//   bad_http       the HTTP status line or header block cannot be read
//   headers_too_large  the HTTP header block is over kMaxHeaderBytes or kMaxHeaderLines
//   unsupported_encoding  a Content-Encoding other than gzip, deflate, br, identity
//   bad_encoding   the body does not decode with its Content-Encoding
//   too_large      the record's block is over kMaxBlockBytes, or the decoded body over it
//   segmented      a segmented record (WARC-Segment-Number): segments are not reassembled
inline constexpr std::uint64_t kMaxBlockBytes = 64 << 20;
// The bounds of a header block, WARC or HTTP (its lines up to and with the empty one that ends
// it): a WARC header past them is damage, an HTTP one makes the record headers_too_large.
inline constexpr std::size_t kMaxHeaderBytes = 64 << 10;
inline constexpr std::size_t kMaxHeaderLines = 512;

}  // namespace neardup::warc
