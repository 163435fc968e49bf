#include "message/processing.h"

#include "message/tag.h"

namespace neardup {

namespace {

// `parse`: parse_page or parse_page_moved, on `record`.
template <typename Parse>
ProcessedRecord process(Parse parse, std::shared_ptr<const Config> config, std::string scheme,
                        StageTimes* times) {
  ProcessedRecord processed{.config = std::move(config), .scheme = std::move(scheme)};
  const Config& c = *processed.config;
  processed.page = parse(c.input);
  if (processed.page) {
    processed.result = fingerprint_page(processed.page->body, processed.page->content_type, c,
                                        {.keep_text = c.output.main_text != MainTextOutput::kNone,
                                         .times = times,
                                         .url = processed.page->url});
    // Nothing reads the body again (the output is the record's own bytes): a record waiting
    // for the index holds its record alone.
    std::string().swap(processed.page->body);
  }
  return processed;
}

}  // namespace

ProcessedRecord process_record(std::string_view record, std::shared_ptr<const Config> config,
                               std::string scheme, StageTimes* times) {
  return process([&](const InputConfig& input) { return parse_page(record, input); },
                 std::move(config), std::move(scheme), times);
}

ProcessedRecord process_record_moved(std::string&& record, std::shared_ptr<const Config> config,
                                     std::string scheme, StageTimes* times) {
  return process(
      [&](const InputConfig& input) { return parse_page_moved(std::move(record), input); },
      std::move(config), std::move(scheme), times);
}

ProcessedRecord process_unheld_record(std::uint64_t size, std::shared_ptr<const Config> config,
                                      std::string scheme) {
  return process(
      [&](const InputConfig& input) -> std::expected<Page, RecordError> {
        return std::unexpected(record_too_large(size, input));
      },
      std::move(config), std::move(scheme), nullptr);
}

IndexItem index_item(const ProcessedRecord& record, std::optional<SourceOffset> source,
                     std::int64_t record_time_ms) {
  IndexItem item{.source = std::move(source)};
  if (!record.page) {
    item.decided =
        Verdict{.status = Verdict::Status::kDeadLetter, .reason = record.page.error().code};
  } else if (record.result.skip) {
    item.decided =
        Verdict{.status = Verdict::Status::kSkipped, .reason = record.result.skip->reason};
  } else {
    item.page = index_request(*record.page, record.result, record.scheme, *record.config);
    if (!record.page->fetched_at_ms && record_time_ms > 0) item.page->seen_at_ms = record_time_ms;
  }
  return item;
}

Outcome render_outcome(const ProcessedRecord& record, const Verdict& verdict, bool omit_body) {
  Outcome outcome;
  if (!record.page) {
    outcome.dead_letter = true;
    outcome.error = record.page.error();
    return outcome;
  }
  if (verdict.status == Verdict::Status::kDeadLetter) {
    outcome.dead_letter = true;
    outcome.error = RecordError{
        verdict.reason, verdict.detail.empty() ? "verdict stored for this offset" : verdict.detail};
    return outcome;
  }
  outcome.tag = make_tag(record.result, verdict, record.scheme);
  OutputConfig output = record.config->output;
  if (output.main_text != MainTextOutput::kNone && !record.result.skip) {
    outcome.tag.text = output.main_text == MainTextOutput::kUnseen
                           ? drop_paragraphs(record.result.text, record.result.passages,
                                             verdict.paragraphs_seen_at)
                                 .text
                           : record.result.text;
  }
  if (omit_body) output.include_body = false;
  outcome.output =
      render_output_parts(*record.page, outcome.tag, output, record.config->input.fields);
  return outcome;
}

}  // namespace neardup
