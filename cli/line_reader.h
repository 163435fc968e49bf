// Line-by-line input for the commands that read JSON lines (`dedup`, `produce`, `lookup`): a
// file or stdin, gunzipped when it starts with gzip's magic bytes (1f 8b), whatever it is
// called, so `--in crawl.jsonl.gz` and `zcat crawl.jsonl.gz |` read the same pages. zlib reads
// anything else as it is. A line is held only up to a bound (input.max_record_bytes): a longer
// one, which a few MB of gzip can make many GB long, is read past without being held.
//
// Usage:
//   auto reader = LineReader::open(path, config.input.max_record_bytes);  // "-" is stdin
//   if (!reader) { report(reader.error()); exit 2; }
//   std::string line;
//   while ((*reader)->next(line)) {
//     if ((*reader)->over_long() > 0) { refuse(line_number, (*reader)->over_long()); continue; }
//     ...
//   }
//   if (!(*reader)->error().empty()) { report((*reader)->error()); exit 3; }
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace neardup::cli {

class LineReader {
 public:
  // Opens `path` ("-": stdin), to give lines of at most `max_line_bytes` bytes (without the
  // '\n'; the default is input.max_record_bytes's). The error names the file and the system's
  // reason.
  static std::expected<std::unique_ptr<LineReader>, std::string> open(
      const std::string& path, std::uint64_t max_line_bytes = 64 << 20);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, without its '\n'. Its capacity holds kRecordPadding bytes past its end, so
  // that parse_page_moved(std::move(line), ...) takes it without a copy. A line longer than
  // max_line_bytes is not held: it is read past to its '\n' (or the end of the input), `line` is
  // left empty and over_long() gives the line's length; the reader holds at most max_line_bytes
  // and one read (1 MiB) whatever the lines are. False at the end of the input or on a read
  // error (then error() is not empty: a corrupt or truncated gzip stream).
  bool next(std::string& line);
  const std::string& error() const { return error_; }
  // The length of the line next() gave when it was over max_line_bytes (and not held); else 0.
  std::uint64_t over_long() const { return over_long_; }

  // True when the input was gzip-compressed (known after the first next()).
  bool gzipped() const;
  // The first bytes of the (decompressed) input, up to 4 KiB: to describe what it looks like.
  std::string_view head() const { return head_; }

  // For progress: the input's size in bytes when it is a regular file (also stdin redirected
  // from one), and how many of those bytes have been read so far (of a gzip file: its compressed
  // bytes, so the share read holds for both).
  std::optional<std::uint64_t> size() const { return size_; }
  std::uint64_t position() const;

 private:
  LineReader(gzFile file, std::string name, std::uint64_t max_line_bytes,
             std::optional<std::uint64_t> size)
      : file_(file), name_(std::move(name)), max_line_bytes_(max_line_bytes), size_(size) {}
  bool fill();
  bool read_past_line(std::string& line);

  gzFile file_;
  std::string name_;
  std::uint64_t max_line_bytes_;
  std::optional<std::uint64_t> size_;
  std::uint64_t over_long_ = 0;
  std::string buffer_;
  std::size_t start_ = 0;
  bool eof_ = false;
  std::string head_;
  std::string error_;
};

// What input whose lines are not pages looks like, from its first bytes (`head`) and its whole
// first line (`first_line`, which may be longer than head), with what to do:
// "zstd-compressed data (decompress it first, e.g. zstd -dc FILE | neardup ...)",
// "a JSON array, not JSON lines (one object per line: jq -c '.[]' FILE)",
// "JSON objects with the fields link, html (no \"url\": set input.fields.url in --config)", ...
std::string describe_input(std::string_view head, std::string_view first_line,
                           std::string_view url_field);

// When a page record (`record`, one JSON object) has neither the body field nor the base64 one
// (`body_field`, `body_base64_field`: input.fields'), what it has instead and what to set:
// "JSON objects with the fields html, url but no \"body\" or \"body_base64\" (html looks like
// HTML: set input.fields.body: html in --config)". Empty when it has either.
std::optional<std::string> describe_missing_body(std::string_view record,
                                                 std::string_view body_field,
                                                 std::string_view body_base64_field);

}  // namespace neardup::cli
