// The input records of `neardup dedup` and `neardup produce`: JSON lines (a file or stdin, plain
// or gzip: cli/line_reader.h), or the pages of WARC files, each turned into the JSON text of one
// input record (warc/input_record.h) so that what follows reads both alike.
//
// Usage:
//   auto input = RecordInput::open(in, warc_files, config.input, "neardup dedup");
//   if (!input) { report(input.error()); exit 2; }
//   std::string text, where;
//   while ((*input)->next(text, where)) {
//     if ((*input)->over_long() > 0) { refuse(where, record_too_large(...)); continue; }
//     ...
//   }
//   if (!(*input)->error().empty()) { report((*input)->error()); exit 3; }
//   std::cerr << (*input)->summary();
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/line_reader.h"
#include "config/config.h"
#include "warc/warc_reader.h"

namespace neardup::cli {

// Adds --in FILE (JSON lines, plain or gzip; "-": stdin) and --warc FILE... (excluding each
// other) to a command that reads input records.
void add_record_input_options(CLI::App* command, std::string& in, std::vector<std::string>& warc);

class RecordInput {
 public:
  // JSON lines from `jsonl` ("-": stdin) when `warc_files` is empty, each held up to
  // input.max_record_bytes; else the WARC files, in order, every one opened and checked first,
  // so that a missing file or one that is not WARC stops the run before anything is read; their
  // pages are written with input.fields' names. The error names the file. `command` prefixes the
  // damage reports next() prints. WARC files are held open one at a time, as they are read.
  static std::expected<std::unique_ptr<RecordInput>, std::string> open(
      const std::string& jsonl, const std::vector<std::string>& warc_files,
      const InputConfig& input, std::string command);

  // The next record's text and where it is ("line 12", "crawl.warc.gz offset 784"). WARC
  // records that give no page are counted for summary(); damaged ones are also reported on
  // stderr, with their offset. A JSON line over input.max_record_bytes is given with `text`
  // empty and its length in over_long(): the caller refuses it as record_too_large. False at the
  // end of the input or on a read error (error(): also a WARC file that can no longer be opened
  // when its turn comes).
  bool next(std::string& text, std::string& where);
  const std::string& error() const;
  // The length of the JSON line next() gave when it was too long to be held; else 0.
  std::uint64_t over_long() const { return lines_ ? lines_->over_long() : 0; }

  // The JSON-lines reader (for describing input that is not pages); nullptr for WARC input.
  const LineReader* lines() const { return lines_.get(); }

  // For progress: the input's size in bytes when known (the JSON-lines file, or every WARC
  // file), and how many of them have been read; of gzip input, its compressed bytes.
  std::optional<std::uint64_t> size() const;
  std::uint64_t position() const;

  // For WARC input, one line accounting for every record: "warc: 2 files, 250 records: 244
  // pages; passed over: request 3, warcinfo 2; skipped: status_404 1; damaged: 0\n", and when
  // anything was damaged, a warning line after it that records were lost there: "neardup dedup:
  // warning: the WARC input is damaged in 2 places (a.warc.gz; offsets above): the records there
  // are lost, every record after each was read\n". Empty for JSON lines.
  std::string summary() const;

 private:
  RecordInput() = default;
  std::string damage_warning() const;

  std::unique_ptr<LineReader> lines_;
  std::uint64_t line_number_ = 0;

  std::vector<std::string> warc_paths_;
  std::uint64_t warc_bytes_ = 0;            // the WARC files' sizes, as opened
  std::uint64_t warc_done_ = 0;             // the sizes of the WARC files read to their end
  std::unique_ptr<warc::WarcReader> warc_;  // warc_paths_[current_], while it is read
  std::size_t current_ = 0;
  InputFields fields_;
  std::string command_;
  std::uint64_t records_ = 0, pages_ = 0, damaged_ = 0;
  std::map<std::string, std::uint64_t> passed_over_, skipped_;
  std::vector<std::string> damaged_files_;
  std::string warc_error_;
};

}  // namespace neardup::cli
