#include "daemon/outgoing.h"

namespace neardup::daemon {

kafka::OutgoingRecord Outgoing::record() const {
  return kafka::OutgoingRecord{.topic = topic, .key = key, .value = value, .headers = headers};
}

std::size_t Outgoing::size() const {
  std::size_t bytes = value.size() + (key ? key->size() : 0);
  for (const auto& [name, header] : headers) bytes += name.size() + header.size();
  return bytes;
}

Outgoing render_outgoing(const Work& work, const Verdict& verdict, const KafkaConfig& topics,
                         bool shrunk) {
  Outgoing out;
  out.key = work.input.key ? &*work.input.key : nullptr;
  for (const auto& header : work.input.headers) {
    if (!header.first.starts_with("neardup-")) out.headers.push_back(header);
  }
  Outcome outcome = render_outcome(work.processed, verdict, shrunk);
  if (outcome.dead_letter) {
    out.dead_letter = true;
    out.topic = topics.dead_letter_topic;
    out.label = outcome.error.code;
    std::string detail = outcome.error.detail;
    if (shrunk) detail += " (value dropped: larger than the topic accepts)";
    out.headers.emplace_back("neardup-error", outcome.error.code);
    out.headers.emplace_back("neardup-error-detail", std::move(detail));
    out.headers.emplace_back("neardup-source", partition_key(work.input.partition) + "/" +
                                                   std::to_string(work.input.offset));
    if (!shrunk) out.value = work.input.value;
    return out;
  }
  out.topic = topics.output_topic;
  out.label = outcome.tag.status;
  out.headers.emplace_back("neardup-status", outcome.tag.status);
  if (outcome.tag.status == "duplicate") {
    out.headers.emplace_back("neardup-duplicate-of", outcome.tag.duplicate_of);
  }
  out.headers.emplace_back("neardup-scheme", outcome.tag.scheme);
  out.value = std::move(outcome.value);
  return out;
}

}  // namespace neardup::daemon
