#include "cli/record_input.h"

#include <iostream>

#include "warc/input_record.h"

namespace neardup::cli {
namespace {

std::string join_counts(const std::map<std::string, std::uint64_t>& counts) {
  std::string out;
  for (const auto& [reason, count] : counts) {
    out += (out.empty() ? "" : ", ") + reason + " " + std::to_string(count);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

void add_record_input_options(CLI::App* command, std::string& in, std::vector<std::string>& warc) {
  CLI::Option* in_option =
      command->add_option("--in", in, "JSONL pages, gzip or plain; - for stdin")
          ->option_text("FILE");
  command
      ->add_option("--warc", warc,
                   "WARC files (.warc, .warc.gz: per-record or whole-file gzip) instead of --in: "
                   "each HTTP 200 HTML response record is one page (url WARC-Target-URI, id "
                   "WARC-Record-ID, fetched_at WARC-Date); the other records are counted")
      ->option_text("FILE...")
      ->excludes(in_option);
}

std::expected<std::unique_ptr<RecordInput>, std::string> RecordInput::open(
    const std::string& jsonl, const std::vector<std::string>& warc_files,
    const InputConfig& input_config, std::string command) {
  std::unique_ptr<RecordInput> input(new RecordInput());
  input->fields_ = input_config.fields;
  input->command_ = std::move(command);
  if (warc_files.empty()) {
    auto lines = LineReader::open(jsonl, input_config.max_record_bytes);
    if (!lines) return std::unexpected(lines.error());
    input->lines_ = std::move(*lines);
    return input;
  }
  // Checked now, opened again in turn: a reader holds its file open, and a run may name
  // thousands of files.
  for (const std::string& path : warc_files) {
    auto reader = warc::WarcReader::open(path);
    if (!reader) return std::unexpected(reader.error());
    input->warc_paths_.push_back(path);
    input->warc_bytes_ += (*reader)->size();
  }
  return input;
}

const std::string& RecordInput::error() const { return lines_ ? lines_->error() : warc_error_; }

std::optional<std::uint64_t> RecordInput::size() const {
  if (lines_) return lines_->size();
  return warc_bytes_;
}

std::uint64_t RecordInput::position() const {
  if (lines_) return lines_->position();
  return warc_done_ + (warc_ ? warc_->position() : 0);
}

bool RecordInput::next(std::string& text, std::string& where) {
  if (lines_) {
    if (!lines_->next(text)) return false;
    where = "line " + std::to_string(++line_number_);
    return true;
  }
  warc::WarcEntry entry;
  while (current_ < warc_paths_.size()) {
    if (!warc_) {
      auto reader = warc::WarcReader::open(warc_paths_[current_]);
      if (!reader) {
        warc_error_ = reader.error();
        return false;
      }
      warc_ = std::move(*reader);
    }
    if (!warc_->next(entry)) {
      warc_done_ += warc_->size();
      warc_.reset();  // closes the file
      ++current_;
      continue;
    }
    const std::string& path = warc_paths_[current_];
    switch (entry.kind) {
      case warc::WarcEntry::Kind::kPage:
        ++records_;
        ++pages_;
        text = warc::to_input_record(entry.page, entry.where, path, fields_);
        where = path + " " + warc::describe(entry.where);
        return true;
      case warc::WarcEntry::Kind::kPassedOver:
        ++records_;
        ++passed_over_[entry.reason];
        break;
      case warc::WarcEntry::Kind::kSkipped:
        ++records_;
        ++skipped_[entry.reason];
        break;
      case warc::WarcEntry::Kind::kCorrupt:
        ++damaged_;
        if (damaged_files_.empty() || damaged_files_.back() != path) {
          damaged_files_.push_back(path);
        }
        std::cerr << command_ << ": " << path << ": " << warc::describe(entry.where) << ": "
                  << entry.reason << "\n";
        break;
    }
  }
  return false;
}

// Damage loses the records where it is (never those after it: the reader resyncs), so a run
// that met any says so once more at its end, where it is not lost among the progress lines.
std::string RecordInput::damage_warning() const {
  if (damaged_ == 0) return {};
  std::string files;
  for (std::size_t i = 0; i < damaged_files_.size(); ++i) {
    if (i == 3) {
      files += " and " + std::to_string(damaged_files_.size() - 3) + " more files";
      break;
    }
    files += (i == 0 ? "" : ", ") + damaged_files_[i];
  }
  return command_ + ": warning: the WARC input is damaged in " + std::to_string(damaged_) +
         (damaged_ == 1 ? " place" : " places") + " (" + files +
         "; offsets above): the records there are lost, every record after each was read\n";
}

std::string RecordInput::summary() const {
  if (lines_) return {};
  return "warc: " + std::to_string(warc_paths_.size()) + " file" +
         (warc_paths_.size() == 1 ? "" : "s") + ", " + std::to_string(records_) +
         " records: " + std::to_string(pages_) +
         " pages; passed over: " + join_counts(passed_over_) +
         "; skipped: " + join_counts(skipped_) + "; damaged: " + std::to_string(damaged_) + "\n" +
         damage_warning();
}

}  // namespace neardup::cli
