#include "cli/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "message/record.h"

namespace neardup::cli {
namespace {

constexpr std::size_t kChunk = 1 << 20;
constexpr std::size_t kHeadBytes = 4096;

bool starts_with_bytes(std::string_view data, std::string_view magic) {
  return data.substr(0, magic.size()) == magic;
}

// Share of bytes that are neither printable ASCII, common whitespace nor part of UTF-8.
bool looks_binary(std::string_view data) {
  std::size_t odd = 0;
  for (unsigned char c : data) {
    if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f')) ++odd;
  }
  return !data.empty() && odd * 20 > data.size();
}

// "fields a, b, c" of an object, the list cut after about 60 characters.
std::string field_names(const nlohmann::json& object) {
  std::string fields;
  for (const auto& [key, value] : object.items()) {
    if (fields.size() > 60) {
      fields += ", ...";
      break;
    }
    fields += (fields.empty() ? "" : ", ") + key;
  }
  return fields;
}

// Markup a page body starts with or holds early on, in any case.
bool looks_like_html(std::string_view text) {
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || text[start] != '<') return false;
  std::string head(text.substr(start, 512));
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view tag :
       {"<!doctype", "<html", "<head", "<body", "<p", "<div", "<meta", "<title", "<!--", "<?xml"}) {
    if (head.find(tag) != std::string::npos) return true;
  }
  return false;
}

// Long enough and of base64's alphabet only: a body_base64 under another name.
bool looks_like_base64(std::string_view text) {
  return text.size() >= 64 &&
         text.find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") ==
             std::string_view::npos;
}

}  // namespace

std::expected<std::unique_ptr<LineReader>, std::string> LineReader::open(
    const std::string& path, std::uint64_t max_line_bytes) {
  int fd = path == "-" ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(path + ": cannot open for reading: " + std::strerror(errno));
  struct stat st {};
  const bool known = ::fstat(fd, &st) == 0;
  if (known && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return std::unexpected(path + ": is a directory (give a file of JSON lines)");
  }
  std::optional<std::uint64_t> size;
  if (known && S_ISREG(st.st_mode)) size = static_cast<std::uint64_t>(st.st_size);
  gzFile file = ::gzdopen(fd, "rb");
  if (!file) {
    ::close(fd);
    return std::unexpected(path + ": cannot read: out of memory");
  }
  ::gzbuffer(file, 1 << 17);
  return std::unique_ptr<LineReader>(
      new LineReader(file, path == "-" ? "stdin" : path, max_line_bytes, size));
}

LineReader::~LineReader() { ::gzclose(file_); }

bool LineReader::gzipped() const { return ::gzdirect(file_) == 0; }

std::uint64_t LineReader::position() const {
  const z_off_t offset = ::gzoffset(file_);
  return offset > 0 ? static_cast<std::uint64_t>(offset) : 0;
}

bool LineReader::fill() {
  if (eof_) return false;
  if (start_ > 0) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  const std::size_t old_size = buffer_.size();
  int n = 0;
  buffer_.resize_and_overwrite(old_size + kChunk, [&](char* data, std::size_t) {
    n = ::gzread(file_, data + old_size, kChunk);
    return old_size + static_cast<std::size_t>(std::max(n, 0));
  });
  if (n < 0) {
    int code = 0;
    const char* message = ::gzerror(file_, &code);
    error_ = name_ + ": read error: " + (code == Z_ERRNO ? std::strerror(errno) : message);
    eof_ = true;
    return false;
  }
  if (head_.size() < kHeadBytes) {
    head_.append(buffer_, old_size, std::min<std::size_t>(n, kHeadBytes - head_.size()));
  }
  if (n == 0) {
    eof_ = true;
    // A gzip stream cut short reads as its end, with the truncation reported here.
    int code = 0;
    const char* message = ::gzerror(file_, &code);
    if (code != Z_OK && code != Z_BUF_ERROR) error_ = name_ + ": " + message;
    if (code == Z_BUF_ERROR) error_ = name_ + ": unexpected end of the gzip stream";
    return false;
  }
  return true;
}

bool LineReader::next(std::string& line) {
  over_long_ = 0;
  auto take = [&](std::size_t end) {
    line.clear();
    line.reserve(end - start_ + kRecordPadding);
    line.append(buffer_, start_, end - start_);
  };
  std::size_t scan_from = start_;
  for (;;) {
    const std::size_t newline = buffer_.find('\n', scan_from);
    const std::size_t end = newline == std::string::npos ? buffer_.size() : newline;
    if (end - start_ > max_line_bytes_) return read_past_line(line);
    if (newline != std::string::npos) {
      take(newline);
      start_ = newline + 1;
      return true;
    }
    // fill() moves the unread bytes (from start_) to the front of the buffer.
    scan_from = buffer_.size() - start_;
    if (!fill()) break;
  }
  if (start_ < buffer_.size() && error_.empty()) {  // a last line without '\n'
    take(buffer_.size());
    start_ = buffer_.size();
    return true;
  }
  return false;
}

// The line from start_ is longer than max_line_bytes_: its bytes are counted and dropped a read
// at a time up to its '\n'.
bool LineReader::read_past_line(std::string& line) {
  line.clear();
  std::uint64_t length = 0;
  for (;;) {
    const std::size_t newline = buffer_.find('\n', start_);
    if (newline != std::string::npos) {
      over_long_ = length + (newline - start_);
      start_ = newline + 1;
      return true;
    }
    length += buffer_.size() - start_;
    start_ = buffer_.size();  // fill() drops what was read
    if (!fill()) break;
  }
  over_long_ = length;
  return error_.empty();  // a last line without '\n', unless the input ended in an error
}

std::string describe_input(std::string_view head, std::string_view whole_first_line,
                           std::string_view url_field) {
  if (head.empty()) return "empty";
  if (starts_with_bytes(head, "\x1f\x8b")) {
    return "gzip-compressed twice (decompress it once first: zcat FILE | neardup ...)";
  }
  if (starts_with_bytes(head, "\x28\xb5\x2f\xfd")) {
    return "zstd-compressed data (decompress it first: zstd -dc FILE | neardup ...)";
  }
  if (starts_with_bytes(head, "BZh")) {
    return "bzip2-compressed data (decompress it first: bzcat FILE | neardup ...)";
  }
  if (starts_with_bytes(head, "\xfd" "7zXZ")) {
    return "xz-compressed data (decompress it first: xzcat FILE | neardup ...)";
  }
  if (starts_with_bytes(head, "PK\x03\x04")) return "a zip archive (unzip it first)";
  if (starts_with_bytes(head, "WARC/")) {
    return "a WARC file (read it with --warc FILE instead of --in)";
  }
  if (looks_binary(head)) return "binary data, not text";
  std::string_view text = head.substr(std::min(head.find_first_not_of(" \t\r\n\xef\xbb\xbf"), head.size()));
  std::string_view first_line = text.substr(0, text.find('\n'));
  if (text.starts_with('<')) {
    return "HTML or XML, not JSON lines (for one page use neardup fingerprint FILE; for a "
           "crawl write one JSON object per line with url and body)";
  }
  if (text.starts_with('[')) return "a JSON array, not JSON lines (one object per line: jq -c '.[]' FILE)";
  if (first_line.find_first_not_of("{ \t\r") == std::string_view::npos && text.starts_with('{')) {
    return "pretty-printed JSON, not JSON lines (one object per line: jq -c . FILE)";
  }
  auto object = nlohmann::json::parse(whole_first_line, nullptr, /*allow_exceptions=*/false);
  if (object.is_object()) {
    const std::string fields = field_names(object);
    if (!object.contains(std::string(url_field))) {
      return "JSON objects with the fields " + fields + " but no \"" + std::string(url_field) +
             "\" (name the page's fields in --config: input.fields.url, input.fields.body)";
    }
    return "JSON objects with the fields " + fields;
  }
  if (!object.is_discarded()) return "JSON values that are not objects";
  std::string sample(first_line.substr(0, 60));
  for (char& c : sample) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return "text that is not JSON (first line: \"" + sample + (first_line.size() > 60 ? "...\")" : "\")");
}

std::optional<std::string> describe_missing_body(std::string_view record,
                                                 std::string_view body_field,
                                                 std::string_view body_base64_field) {
  auto object = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object() || object.contains(std::string(body_field)) ||
      object.contains(std::string(body_base64_field))) {
    return std::nullopt;
  }
  std::string what = "JSON objects with the fields " + field_names(object) + " but no \"" +
                     std::string(body_field) + "\" or \"" + std::string(body_base64_field) + "\" (";
  for (const auto& [key, value] : object.items()) {
    if (!value.is_string()) continue;
    const auto& text = value.get_ref<const std::string&>();
    if (looks_like_html(text)) {
      return what + key + " looks like HTML: set input.fields.body: " + key + " in --config)";
    }
    if (looks_like_base64(text)) {
      return what + key + " looks like base64: set input.fields.body_base64: " + key +
             " in --config)";
    }
  }
  return what + "name the page's body field in --config: input.fields.body, or "
                "input.fields.body_base64 for base64)";
}

}  // namespace neardup::cli
