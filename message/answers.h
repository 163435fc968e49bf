// The index's answers to questions, as JSON (docs/records.md#answers to questions): shared by
// `neardup lookup|show|clusters` and neardupd's /v1 endpoints, so both print the same objects.
//
//   auto answer = lookup_record(*index, process_record(line, config, scheme));  // no insert
//   print(answer->tag);                                  // the `neardup` field it would get
//   auto page = describe_page(*index, "a-1", 1000);      // stored page + its cluster, or null
//
// Pure apart from the index's read transactions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "message/processing.h"
#include "message/record.h"
#include "store/index.h"

namespace neardup {

// Milliseconds since the epoch as RFC 3339 UTC with milliseconds: "2026-01-02T03:04:05.678Z".
std::string format_rfc3339_ms(std::int64_t ms);

// A stored page: {"id", "scheme", "fingerprint", "first_seen", "stored_at", "status",
// "cluster", and for a duplicate "matched", "distance", "method", "similarity"}.
nlohmann::json stored_page_json(const StoredPage& page);

// A cluster: {"root", "scheme", "size", "first_seen", "members": [{"id", "first_seen"}, ...]}
// with at most max_members members listed (in order of storage; "size" counts them all, and
// "truncated": true says some were left out).
nlohmann::json cluster_json(const Cluster& cluster, std::size_t max_members);

// The live page stored under `id` with its cluster ({"page": ..., "cluster": ...}), or nullopt
// when no live page has that id.
StoreResult<std::optional<nlohmann::json>> describe_page(Index& index, const std::string& id,
                                                         std::size_t max_members);

// Why two stored pages match or not, from what the index keeps of them: their signatures and
// stored verdicts, not their text (`neardup compare --explain` on the two pages shows what the
// texts share). `b` empty: the page `a` matched when it was stored, or else the first page of
// its cluster. The object (docs/cli.md#show):
//   {"a": stored page, "b": stored page,
//    "simhash": {"distance", "k", "blocks": [bits that differ in each block, most significant
//                first], "tables": [tables whose key prefix the two share: where a probe
//                meets the pair, the distance then deciding]},
//    "minhash": {"similarity", "bands": [bands shared], "of", "rows"}   (both pages sketched
//                                                                          in one scheme)
//    "stored": {"matched": whether a was tagged a duplicate matching b, "method", "distance",
//               "similarity"}}  (a's verdict as stored, when it names b)
// Errors: kNotFound naming the id without a live page, or saying that `a` is alone in its
// cluster and no `b` was given; the index's read errors.
StoreResult<nlohmann::json> explain_stored(Index& index, const std::string& a,
                                           const std::string& b);

// A page given as bare HTML (a file, an HTTP request body) rather than as an input record: `id`
// names it (also as its url); the pipeline runs on it under `config`.
ProcessedRecord process_html(std::string body, std::string content_type, std::string id,
                             std::shared_ptr<const Config> config, std::string scheme);

// What a record would be tagged if it were applied now, without inserting it: the tag of its
// output (unique/duplicate with what it matched, or skipped with the reason), or the dead-letter
// error of a record that is not a page.
struct LookupAnswer {
  bool dead_letter = false;
  Tag tag;            // when !dead_letter
  RecordError error;  // when dead_letter
};
StoreResult<LookupAnswer> lookup_record(Index& index, const ProcessedRecord& record);

// The answer as one JSON object: {"id", "url", "neardup": {...}} for a page, or
// {"error": code, "detail": ...} for a dead letter.
nlohmann::json lookup_json(const ProcessedRecord& record, const LookupAnswer& answer);

}  // namespace neardup
