// An input record (a Kafka value or a JSONL line) through everything neardupd does to it without
// the index: parse, the page pipeline on its body, and the output (as a unique page) or the
// dead letter. Any input must give one of them, with bounded work.
#include <memory>
#include <string_view>

#include "fuzz/fuzz_target.h"
#include "message/processing.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace neardup;
  static const auto config = [] {
    Config c;
    c.input.max_body_bytes = 1 << 20;  // keep single runs fast; the limit path is still taken
    return std::make_shared<const Config>(c);
  }();
  static const std::string scheme = scheme_id(*config);
  const std::string_view record(reinterpret_cast<const char*>(data), size);
  const ProcessedRecord processed = process_record(record, config, scheme);
  const Outcome outcome = render_outcome(processed, Verdict{});
  if (!outcome.dead_letter && outcome.value().empty()) __builtin_trap();  // an output has bytes
  return 0;
}
