// Line-by-line input for the commands that read JSON lines (`dedup`, `produce`): a file or
// stdin, gunzipped when it starts with gzip's magic bytes (1f 8b), whatever it is called, so
// `--in crawl.jsonl.gz` and `zcat crawl.jsonl.gz |` read the same pages. zlib reads anything
// else as it is.
//
// Usage:
//   auto reader = LineReader::open(path);           // "-" is stdin
//   if (!reader) { report(reader.error()); exit 2; }
//   std::string line;
//   while ((*reader)->next(line)) { ... }
//   if (!(*reader)->error().empty()) { report((*reader)->error()); exit 3; }
#pragma once

#include <zlib.h>

#include <cstddef>
#include <expected>
#include <memory>
#include <string>
#include <string_view>

namespace neardup::cli {

class LineReader {
 public:
  // Opens `path` ("-": stdin). The error names the file and the system's reason.
  static std::expected<std::unique_ptr<LineReader>, std::string> open(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, without its '\n' (lines may be of any length). Its capacity holds
  // kRecordPadding bytes past its end, so that parse_page_moved(std::move(line), ...) takes it
  // without a copy. False at the end of the input or on a read error (then error() is not empty: a
  // corrupt or truncated gzip stream).
  bool next(std::string& line);
  const std::string& error() const { return error_; }

  // True when the input was gzip-compressed (known after the first next()).
  bool gzipped() const;
  // The first bytes of the (decompressed) input, up to 4 KiB: to describe what it looks like.
  std::string_view head() const { return head_; }

 private:
  LineReader(gzFile file, std::string name) : file_(file), name_(std::move(name)) {}
  bool fill();

  gzFile file_;
  std::string name_;
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

}  // namespace neardup::cli
