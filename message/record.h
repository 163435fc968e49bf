// Messages (docs/records.md): an input record (Kafka value or JSONL line) -> a Page, or the reason
// it cannot be read (a dead letter); a Page plus its verdict -> the tagged output record.
//
// Shared by `neardup dedup` and `neardupd` so both speak exactly the same format. Pure.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "store/verdict.h"

namespace neardup {

// A readable page. `record` is the input record's bytes, kept to be passed through untouched
// (its capacity holds simdjson's padding past the end).
struct Page {
  std::string record;
  bool has_neardup_field = false;  // the input object already has a `neardup` member
  std::string url;
  std::string id;            // the id field, or the url when absent
  std::string body;          // raw bytes (base64-decoded when given as body_base64)
  std::string content_type;  // may be empty
  std::optional<std::int64_t> fetched_at_ms;
};

// Why a record is a dead letter. `code` is stable: record_too_large, too_deep, not_json,
// not_object, missing_url, invalid_base64, wrong_type, bad_fetched_at.
struct RecordError {
  std::string code;
  std::string detail;  // names the field and what was wrong
};

// Arrays and objects nested deeper than this make a record a dead letter (too_deep). Records
// are JSON objects of a few levels; the bound keeps everything that walks the parsed value
// recursively (serialising the output) within a small, fixed stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

// True when no array or object in the JSON text is nested deeper than max_depth. A linear scan
// of the bytes (strings skipped), for text that is not parsed otherwise (`neardup consume`);
// malformed text is left to the parser.
bool json_depth_within(std::string_view text, std::size_t max_depth);

// Reads one input record: the field names of input.fields. Records over input.max_record_bytes
// are refused unread; the rest are parsed with simdjson (validating all of the text, UTF-8
// included) and refused when nested deeper than kMaxJsonDepth. Of repeated member names the
// last counts. A number outside what a 64-bit integer or a double holds makes the record
// not_json. A missing or empty body is NOT an error: the page is returned with an empty body
// and the pipeline skips it (empty_body).
std::expected<Page, RecordError> parse_page(std::string_view record, const InputConfig& input);

// The dead letter of a record of `size` bytes over input.max_record_bytes: record_too_large,
// "<size> bytes > input.max_record_bytes <max>". parse_page gives it for such a record; a reader
// that does not even hold a record that long (cli/line_reader.h) gives it alike.
RecordError record_too_large(std::uint64_t size, const InputConfig& input);

// The room past a record's last byte that parsing reads ahead into (simdjson's padding).
inline constexpr std::size_t kRecordPadding = 64;

// parse_page() on a record the caller gives away (std::move): on success the page's `record` is
// `record`'s buffer, not a copy of it (no copy at all when its capacity holds kRecordPadding bytes
// past the end); on an error `record` keeps its bytes.
std::expected<Page, RecordError> parse_page_moved(std::string&& record, const InputConfig& input);

// What neardup adds to a page: the `neardup` field of the output record.
struct Tag {
  std::string status;  // unique | duplicate | skipped
  std::string fingerprint;  // 16 hex digits; empty when skipped
  std::string scheme;
  std::string duplicate_of, matched;  // duplicate only
  int distance = 0;                   // duplicate only
  std::string method;                 // duplicate only: simhash, minhash or both
  double similarity = -1;             // duplicate only: estimated Jaccard; -1 when unknown
  std::string reason;                 // skipped only
  std::string charset, charset_source;
  // Pages with passages (containment.enabled): the earlier page whose text holds most of this
  // page's (contained_in), the earlier page whose text this page holds most of (contains), each
  // with the estimated share (empty id: none); the page's tracked paragraphs, how many an
  // earlier page published first, and the first of those pages (paragraphs 0: no passages).
  // `share` is printed as "containment".
  Verdict::Related contained_in, contains;
  std::uint32_t paragraphs = 0, paragraphs_seen = 0;
  std::vector<std::string> paragraphs_first;
  // A scheme with denoise.site_boilerplate: the lines of the main text (0-based) dropped as the
  // site's learned boilerplate before the page was fingerprinted ("site_boilerplate").
  std::vector<std::uint32_t> site_boilerplate;
  // output.main_text: the page's main text (all of it, or without the paragraphs seen before).
  std::optional<std::string> text;
};

nlohmann::json tag_to_json(const Tag& tag);
// Adds a tag's contained_in, contains and paragraphs members (those it has) to `out`.
void add_relations_json(nlohmann::json& out, const Tag& tag);
// tag_to_json(tag) as compact JSON text (invalid UTF-8 replaced), byte for byte; written
// directly, without building the object, when every string in the tag is printable ASCII
// without quotes or backslashes (the common tag: ids that are URLs).
std::string tag_json_text(const Tag& tag);

// True for a page skipped as too_large (input.max_body_bytes): its output never carries the
// body, whatever output.include_body says, so that the output record stays small even when the
// input topic accepted a record far larger than the output topic would.
bool body_omitted(const Tag& tag);

// The output record in the pieces it is written as, one after another: `before` + `inserted` +
// `after`. The views point into the page's record (valid while the Page is).
struct OutputParts {
  std::string_view before;
  std::string inserted;
  std::string_view after;

  std::string joined() const;
};

// The output record: the input object unchanged plus the `neardup` field. Usually the input's
// bytes with `,"neardup":{...}` inserted before the object's closing brace (`before` and `after`
// view the input, `inserted` is the field): field order, spacing and number formatting of the
// input are kept, and the body is never copied through a JSON value. When the body fields are
// dropped (output.include_body false, or body_omitted(tag)) or the input already has a `neardup`
// member (replaced), the object is re-serialised instead (all of it in `inserted`). Never throws
// on invalid UTF-8 (replaced by U+FFFD).
OutputParts render_output_parts(const Page& page, const Tag& tag, const OutputConfig& output,
                                const InputFields& fields);

// render_output_parts() in one string.
std::string render_output(const Page& page, const Tag& tag, const OutputConfig& output,
                          const InputFields& fields);

// Parses fetched_at: RFC 3339 text (a real calendar date, years 0000..9999, offsets within
// +-23:59) or epoch milliseconds (an integer, or a number with no fraction, within
// +-2^53). nullopt when malformed or out of range.
std::optional<std::int64_t> parse_fetched_at(const nlohmann::json& value);

}  // namespace neardup
