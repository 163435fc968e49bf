// One input record through neardup, the same in `neardup dedup` and neardupd:
//
//   ProcessedRecord record = process_record(bytes, config, scheme);  // pure stages, any thread
//   IndexItem item = index_item(record, source, record_time_ms);     // the index request
//   Verdict verdict = (*index->apply({&item, 1}))[0];                  // the index's one writer
//   Outcome outcome = render_outcome(record, verdict);                 // output or dead letter
//
// A ProcessedRecord keeps the config snapshot it was processed under, so that its index request
// (scheme, dedup.max_distance, dedup.min_similarity) and its output (output.*, input.fields) follow that one config
// even when a reload swaps the running config meanwhile. Pure apart from reading the clock
// (first-seen time of a page without one, stage times when asked).
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "message/record.h"
#include "pipeline/pipeline.h"
#include "store/index.h"

namespace neardup {

struct ProcessedRecord {
  std::shared_ptr<const Config> config;  // the snapshot the record was processed under
  std::string scheme;                    // scheme_id(*config)
  std::expected<Page, RecordError> page = std::unexpected(RecordError{});
  PageFingerprint result;  // the pipeline's result when `page` holds a page
};

// Parses the record and, when it is a page, runs the pipeline on it. `scheme` must be
// scheme_id(*config) (callers compute it once per config). `times`, when set, receives the
// pipeline's stage times.
ProcessedRecord process_record(std::string_view record, std::shared_ptr<const Config> config,
                               std::string scheme, StageTimes* times = nullptr);

// The same on a record the caller gives away (parse_page_moved): a page takes its
// buffer instead of a copy; a record that is not a page keeps its bytes in `record`.
ProcessedRecord process_record_moved(std::string&& record, std::shared_ptr<const Config> config,
                                     std::string scheme, StageTimes* times = nullptr);

// The record of `size` bytes that was too long to be held (a JSONL line over
// input.max_record_bytes, read past by the line reader): the dead letter process_record() gives
// a record that long, record_too_large.
ProcessedRecord process_unheld_record(std::uint64_t size, std::shared_ptr<const Config> config,
                                      std::string scheme);

// The record's index item. A fingerprinted page asks the index (IndexItem::page); a skipped page
// carries Verdict kSkipped with the skip reason and an unreadable record kDeadLetter with its
// error code, decided without the index (and stored against `source`, so that a replay of the
// offset is answered alike). `source`: the Kafka offset (neardupd), none offline. A page without
// fetched_at is first seen at `record_time_ms` when positive (the Kafka record's timestamp,
// the same on every replay), else now.
IndexItem index_item(const ProcessedRecord& record, std::optional<SourceOffset> source = {},
                     std::int64_t record_time_ms = 0);

// What goes out for one record.
struct Outcome {
  bool dead_letter = false;
  Tag tag;             // an output's `neardup` field
  OutputParts output;  // an output: the tagged record (render_output_parts), viewing the page
  RecordError error;   // a dead letter: why (code, detail)

  std::string value() const { return output.joined(); }  // the tagged record in one string
};

// The output of a processed record and its verdict, or its dead letter (`output` views the
// record's page: valid while `record` is): a record that is not a
// page, or whose verdict is kDeadLetter (a replay of an offset dead-lettered before, e.g. under
// other input.fields, or an item the index refused, with its Verdict::detail), is a dead
// letter. `omit_body`: the output without its body fields (for
// a topic that refused the full record as too large).
Outcome render_outcome(const ProcessedRecord& record, const Verdict& verdict,
                       bool omit_body = false);

}  // namespace neardup
