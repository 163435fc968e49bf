#include "warc/warc_reader.h"

#include <brotli/decode.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace neardup::warc {
namespace {

constexpr std::size_t kReadChunk = 1 << 20;  // file bytes handed to inflate (or copied) at once
constexpr std::size_t kOutChunk = 1 << 18;
constexpr std::size_t kCompactAt = 4 << 20;
constexpr std::string_view kGzipMagic("\x1f\x8b\x08", 3);

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

std::string_view trim(std::string_view s) {
  const std::size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), ascii_lower);
  return out;
}

// "<x>" -> "x": WARC 1.0 drafts (and wget) bracket WARC-Target-URI; WARC-Record-ID always is.
std::string unbracket(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '<' && s.back() == '>') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// Header fields "Name: value", one a line (CRLF or LF), as in WARC and HTTP headers.
struct Headers {
  std::vector<std::pair<std::string_view, std::string_view>> fields;

  // The first field named `name` (any case), trimmed; empty when absent.
  std::string_view get(std::string_view name) const {
    for (const auto& [key, value] : fields) {
      if (iequals(key, name)) return value;
    }
    return {};
  }
};

// Reads header lines of `text` from `pos` up to the empty line that ends them, within
// kMaxHeaderBytes and kMaxHeaderLines. Returns the offset just past that line; nullopt when it
// is not there: `too_large` then says whether the bounds were passed (else `text` ends first).
std::optional<std::size_t> read_headers(std::string_view text, std::size_t pos, Headers& headers,
                                        bool& too_large) {
  too_large = text.size() - pos > kMaxHeaderBytes;
  text = text.substr(0, pos + kMaxHeaderBytes);
  for (std::size_t lines = 0;; ++lines) {
    const std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) return std::nullopt;
    std::string_view line = text.substr(pos, eol - pos);
    if (line.ends_with('\r')) line.remove_suffix(1);
    pos = eol + 1;
    if (line.empty()) {
      too_large = false;
      return pos;
    }
    if (lines == kMaxHeaderLines) {
      too_large = true;
      return std::nullopt;
    }
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      headers.fields.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
  }
}

// The first "WARC/1.D" line (CRLF or LF) at or after `from`; npos when there is none.
std::size_t find_version_line(std::string_view text, std::size_t from) {
  for (std::size_t at = text.find("WARC/1.", from); at != std::string_view::npos;
       at = text.find("WARC/1.", at + 1)) {
    if (at + 8 < text.size() && text[at + 7] >= '0' && text[at + 7] <= '9' &&
        (text[at + 8] == '\r' || text[at + 8] == '\n')) {
      return at;
    }
  }
  return std::string_view::npos;
}

std::optional<std::uint64_t> parse_length(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// RFC 4648 base32 (upper case, no padding needed for 20 bytes), as WARC writes SHA-1 digests.
std::string base32(const unsigned char* bytes, std::size_t size) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (std::size_t i = 0; i < size; ++i) {
    bits = (bits << 8) | bytes[i];
    for (count += 8; count >= 5; count -= 5) out += kAlphabet[(bits >> (count - 5)) & 31];
  }
  if (count > 0) out += kAlphabet[(bits << (5 - count)) & 31];
  return out;
}

// Checks a WARC-Block-Digest of the form sha1:BASE32 (or sha1:HEX). Returns what is wrong when
// the block's SHA-1 differs; nullopt when it matches or when there is no SHA-1 digest to check.
std::optional<std::string> block_digest_mismatch(std::string_view digest, std::string_view block) {
  if (digest.size() < 5 || !iequals(digest.substr(0, 5), "sha1:")) return std::nullopt;
  const std::string_view want = digest.substr(5);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_size = 0;
  if (EVP_Digest(block.data(), block.size(), md, &md_size, EVP_sha1(), nullptr) != 1) {
    return std::nullopt;
  }
  std::string got = base32(md, md_size);
  if (want.size() == 40) {  // hex
    static constexpr char kHex[] = "0123456789abcdef";
    got.clear();
    for (unsigned int i = 0; i < md_size; ++i) (got += kHex[md[i] >> 4]) += kHex[md[i] & 15];
  }
  if (iequals(want, got)) return std::nullopt;
  return "WARC-Block-Digest " + std::string(digest) + " does not match the block (sha1:" + got +
         "): a damaged byte";
}

enum class Progress { kMore, kDone, kFailed };

// Runs a streaming decoder into `out`: step(next_out, avail_out) writes up to avail_out bytes at
// next_out, lowers avail_out by what it wrote and says whether more output is coming. True when
// the decoder finished; false when it failed, or when the output passed kMaxBlockBytes
// (`too_large` is then set).
template <typename Step>
bool decode_stream(std::string& out, bool& too_large, Step step) {
  out.clear();
  for (;;) {
    if (out.size() >= kMaxBlockBytes) {
      too_large = true;
      return false;
    }
    const std::size_t old = out.size();
    out.resize(old + kOutChunk);
    std::size_t avail_out = kOutChunk;
    const Progress progress = step(out.data() + old, avail_out);
    out.resize(old + kOutChunk - avail_out);
    if (progress != Progress::kMore) return progress == Progress::kDone;
  }
}

// Inflates a whole zlib, gzip (window_bits 15 + 32: either) or raw deflate (-15) stream.
bool inflate_all(std::string_view in, int window_bits, std::string& out, bool& too_large) {
  z_stream zs{};
  if (::inflateInit2(&zs, window_bits) != Z_OK) return false;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  const bool done = decode_stream(out, too_large, [&](char* next_out, std::size_t& avail_out) {
    zs.next_out = reinterpret_cast<Bytef*>(next_out);
    zs.avail_out = static_cast<uInt>(avail_out);
    const int rc = ::inflate(&zs, Z_NO_FLUSH);  // Z_BUF_ERROR: the stream is cut short
    avail_out = zs.avail_out;
    return rc == Z_OK ? Progress::kMore : rc == Z_STREAM_END ? Progress::kDone : Progress::kFailed;
  });
  ::inflateEnd(&zs);
  return done;
}

bool brotli_all(std::string_view in, std::string& out, bool& too_large) {
  BrotliDecoderState* state = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
  if (!state) return false;
  std::size_t avail_in = in.size();
  const auto* next_in = reinterpret_cast<const std::uint8_t*>(in.data());
  const bool done = decode_stream(out, too_large, [&](char* next_out, std::size_t& avail_out) {
    auto* out_bytes = reinterpret_cast<std::uint8_t*>(next_out);
    const BrotliDecoderResult rc =
        BrotliDecoderDecompressStream(state, &avail_in, &next_in, &avail_out, &out_bytes, nullptr);
    return rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT ? Progress::kMore
           : rc == BROTLI_DECODER_RESULT_SUCCESS         ? Progress::kDone
                                                         : Progress::kFailed;
  });
  BrotliDecoderDestroyInstance(state);
  return done;
}

// Undoes chunked transfer coding (RFC 9112 §7.1); trailer fields are dropped. False when `in`
// is not chunked data (some crawlers store the body de-chunked and keep the header).
bool dechunk(std::string_view in, std::string& out) {
  out.clear();
  std::size_t pos = 0;
  for (;;) {
    const std::size_t eol = in.find('\n', pos);
    if (eol == std::string_view::npos) return false;
    std::string_view size_text = trim(in.substr(pos, eol - pos));
    size_text = trim(size_text.substr(0, size_text.find(';')));  // chunk extensions
    std::uint64_t size = 0;
    auto [end, ec] =
        std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
    if (size_text.empty() || ec != std::errc() || end != size_text.data() + size_text.size()) {
      return false;
    }
    pos = eol + 1;
    if (size == 0) return true;
    if (size > in.size() - pos) return false;
    out.append(in.substr(pos, size));
    pos += size;
    if (in.substr(pos, 2) == "\r\n") {
      pos += 2;
    } else if (in.substr(pos, 1) == "\n") {
      pos += 1;
    } else {
      return false;
    }
  }
}

// Undoes one Content-Encoding. Returns a skip reason when it cannot.
std::optional<std::string> decode_content(std::string_view coding, std::string& body) {
  std::string decoded;
  bool too_large = false;
  bool ok = false;
  if (coding.empty() || coding == "identity") return std::nullopt;
  if (coding == "gzip" || coding == "x-gzip") {
    ok = inflate_all(body, 15 + 32, decoded, too_large);
  } else if (coding == "deflate") {  // zlib-wrapped as specified, or raw as some servers send
    ok = inflate_all(body, 15, decoded, too_large) || inflate_all(body, -15, decoded, too_large);
  } else if (coding == "br") {
    ok = brotli_all(body, decoded, too_large);
  } else {
    return "unsupported_encoding";
  }
  if (too_large) return "too_large";
  if (!ok) return "bad_encoding";
  body = std::move(decoded);
  return std::nullopt;
}

}  // namespace

std::string describe(const WarcOffset& where) {
  std::string text = "offset " + std::to_string(where.offset);
  if (where.in_member > 0) text += " (+" + std::to_string(where.in_member) + " decompressed)";
  return text;
}

std::optional<std::string> read_http_response(std::string_view block, WarcPage& page) {
  if (!block.starts_with("HTTP/")) return "not_http";
  const std::size_t eol = block.find('\n');
  if (eol == std::string_view::npos) return "bad_http";
  // "HTTP/1.1 200 OK": the three digits after the first space.
  const std::string_view status_line = block.substr(0, eol);
  const std::size_t space = status_line.find(' ');
  const std::string_view code = space == std::string_view::npos
                                    ? std::string_view()
                                    : trim(status_line.substr(space + 1)).substr(0, 3);
  if (code.size() != 3 ||
      !std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return "bad_http";
  }
  Headers headers;
  bool too_large = false;
  const std::optional<std::size_t> body_at = read_headers(block, eol + 1, headers, too_large);
  if (!body_at) return too_large ? "headers_too_large" : "bad_http";
  if (code != "200") return "status_" + std::string(code);

  page.content_type = std::string(headers.get("Content-Type"));
  const std::string media =
      lower(trim(std::string_view(page.content_type)
                     .substr(0, std::string_view(page.content_type).find(';'))));
  if (!media.empty() && media != "text/html" && media != "application/xhtml+xml") {
    return "not_html";
  }
  page.body.assign(block.substr(*body_at));
  if (lower(headers.get("Transfer-Encoding")).find("chunked") != std::string::npos) {
    std::string plain;
    if (dechunk(page.body, plain)) page.body = std::move(plain);
  }
  // Codings are listed in the order they were applied: undo them from the last.
  std::string_view codings = headers.get("Content-Encoding");
  while (!codings.empty()) {
    const std::size_t comma = codings.rfind(',');
    const std::string coding =
        lower(trim(comma == std::string_view::npos ? codings : codings.substr(comma + 1)));
    codings = comma == std::string_view::npos ? std::string_view() : codings.substr(0, comma);
    if (auto skip = decode_content(coding, page.body)) return skip;
  }
  if (page.body.size() > kMaxBlockBytes) return "too_large";
  return std::nullopt;
}

std::expected<std::unique_ptr<WarcReader>, std::string> WarcReader::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(path + ": cannot open for reading: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::unexpected(path + ": not a regular file (WARC input is read from files)");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return std::unexpected(path + ": empty, not a WARC file");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (map == MAP_FAILED) {
    return std::unexpected(path + ": cannot read: " + std::strerror(map_errno));
  }
  ::madvise(map, size, MADV_SEQUENTIAL);
  std::unique_ptr<WarcReader> reader(
      new WarcReader(path, static_cast<const unsigned char*>(map), size));
  // The first record must be a WARC record (unless the first gzip member is damaged: that is
  // reported by next()).
  while (reader->buffer_.size() < 8 && reader->fill()) {
  }
  const std::string_view head(reader->buffer_);
  if (!head.empty() &&
      !head.starts_with(std::string_view("WARC/", std::min<std::size_t>(5, head.size())))) {
    std::string sample(head.substr(0, 40));
    for (char& c : sample) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '.';
    }
    return std::unexpected(path + ": not a WARC file (it starts with \"" + sample + "\"" +
                           (reader->gzip_ ? ", gzip-compressed" : "") + ")");
  }
  return reader;
}

WarcReader::WarcReader(std::string path, const unsigned char* file, std::size_t size)
    : path_(std::move(path)),
      file_(file),
      size_(size),
      gzip_(size >= 2 && file[0] == 0x1f && file[1] == 0x8b) {}

WarcReader::~WarcReader() {
  if (zs_ready_) ::inflateEnd(&zs_);
  ::munmap(const_cast<unsigned char*>(file_), size_);
}

bool WarcReader::next(WarcEntry& entry) {
  for (;;) {
    if (!pending_.empty()) {
      entry = std::move(pending_.front());
      pending_.erase(pending_.begin());
      return true;
    }
    if (parse(entry) == Step::kEntry) return true;
    if (!at_eof_) {
      at_eof_ = !fill();
      continue;
    }
    // The file ends where more bytes were needed.
    if (!resync_ && (discard_ > 0 || pos_ < buffer_.size())) {
      entry = WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                        .where = offset_of(base_ + pos_),
                        .reason = "the file ends inside this record (truncated)"};
      discard_ = 0;
      pos_ = buffer_.size();
      return true;
    }
    return false;
  }
}

WarcReader::Step WarcReader::parse(WarcEntry& entry) {
  if (discard_ > 0) {
    const std::uint64_t take = std::min<std::uint64_t>(discard_, buffer_.size() - pos_);
    pos_ += take;
    discard_ -= take;
    if (discard_ > 0) return Step::kNeedMore;
  }
  const std::string_view data(buffer_);
  if (resync_) {
    const std::size_t found = find_version_line(data, pos_);
    if (found == std::string_view::npos) {
      // Keep a possible start of "WARC/1.x\r" at the end for the next fill.
      pos_ = std::max(pos_, data.size() > 9 ? data.size() - 9 : 0);
      if (at_eof_) pos_ = data.size();
      return Step::kNeedMore;
    }
    pos_ = found;
    resync_ = false;
  }
  while (pos_ < data.size() && (data[pos_] == '\r' || data[pos_] == '\n')) ++pos_;
  if (pos_ >= data.size()) return Step::kNeedMore;
  return read_record(entry);
}

WarcReader::Step WarcReader::read_record(WarcEntry& entry) {
  const std::string_view data = std::string_view(buffer_).substr(pos_);
  const std::uint64_t start = base_ + pos_;
  const std::size_t eol = data.substr(0, kMaxHeaderBytes).find('\n');
  if (eol == std::string_view::npos) {
    if (data.size() < kMaxHeaderBytes) return Step::kNeedMore;
    corrupt(entry, start, "no line end within 64 KiB");
    return Step::kEntry;
  }
  const std::string_view version = trim(data.substr(0, std::min<std::size_t>(eol, 40)));
  if (!version.starts_with("WARC/1.")) {
    corrupt(entry, start,
            "expected a WARC/1.0 or WARC/1.1 record, found \"" +
                std::string(version.substr(0, 20)) + "\"");
    return Step::kEntry;
  }
  Headers headers;
  bool too_large = false;
  const std::optional<std::size_t> block_at = read_headers(data, eol + 1, headers, too_large);
  if (!block_at) {
    if (!too_large) return Step::kNeedMore;
    corrupt(entry, start, "no end of the WARC header within 64 KiB and 512 lines");
    return Step::kEntry;
  }
  const std::optional<std::uint64_t> length = parse_length(headers.get("Content-Length"));
  if (!length) {
    corrupt(entry, start, "Content-Length is missing or not a number");
    return Step::kEntry;
  }
  const std::string type(headers.get("WARC-Type"));
  entry = WarcEntry{.where = offset_of(start)};
  if (*length > kMaxBlockBytes) {  // passed over without holding it in memory
    entry.kind = type == "response" ? WarcEntry::Kind::kSkipped : WarcEntry::Kind::kPassedOver;
    entry.reason = type == "response" ? "too_large" : type.empty() ? "untyped" : type;
    pos_ += *block_at;
    discard_ = *length;
    return Step::kEntry;
  }
  const std::size_t end = *block_at + *length;
  if (data.size() < end + 4 && !(at_eof_ && data.size() >= end)) return Step::kNeedMore;
  // In a gzip file, a record is returned only once the member holding its end has been checked.
  if (gzip_ && in_member_ && data.size() <= end + 4) return Step::kNeedMore;
  const std::string_view trailer = data.substr(end, 4);
  if (trailer != "\r\n\r\n" && !(at_eof_ && trim(trailer).empty())) {
    corrupt(entry, start,
            "the block is not followed by CRLF CRLF: Content-Length " + std::to_string(*length) +
                " is wrong or the record is cut short");
    return Step::kEntry;
  }
  pos_ += std::min(end + 4, data.size());

  const std::string_view block = data.substr(*block_at, *length);
  if (type != "response") {
    entry.kind = WarcEntry::Kind::kPassedOver;
    entry.reason = type.empty() ? "untyped" : type;
    return Step::kEntry;
  }
  // The length held, so reading goes on at the next record without searching for it.
  if (auto mismatch = block_digest_mismatch(headers.get("WARC-Block-Digest"), block)) {
    entry.kind = WarcEntry::Kind::kCorrupt;
    entry.reason = std::move(*mismatch);
    return Step::kEntry;
  }
  entry.kind = WarcEntry::Kind::kSkipped;
  if (!headers.get("WARC-Segment-Number").empty()) {
    entry.reason = "segmented";
    return Step::kEntry;
  }
  if (auto skip = read_http_response(block, entry.page)) {
    entry.reason = std::move(*skip);
    entry.page = WarcPage{};
    return Step::kEntry;
  }
  entry.kind = WarcEntry::Kind::kPage;
  entry.page.target_uri = unbracket(headers.get("WARC-Target-URI"));
  entry.page.record_id = unbracket(headers.get("WARC-Record-ID"));
  entry.page.date = std::string(headers.get("WARC-Date"));
  return Step::kEntry;
}

void WarcReader::corrupt(WarcEntry& entry, std::uint64_t at, std::string reason) {
  entry = WarcEntry{
      .kind = WarcEntry::Kind::kCorrupt, .where = offset_of(at), .reason = std::move(reason)};
  resync_ = true;
  pos_ = at - base_ + 1;
}

bool WarcReader::fill() {
  compact();
  if (!gzip_) {
    if (raw_pos_ >= size_) return false;
    const std::size_t n = std::min(kReadChunk, size_ - raw_pos_);
    buffer_.append(reinterpret_cast<const char*>(file_) + raw_pos_, n);
    raw_pos_ += n;
    return true;
  }
  const std::string_view raw(reinterpret_cast<const char*>(file_), size_);
  if (!in_member_) {
    if (raw_pos_ >= size_) return false;
    if (!raw.substr(raw_pos_).starts_with(kGzipMagic)) {
      const std::size_t next = std::min(raw.find(kGzipMagic, raw_pos_ + 1), size_);
      pending_.push_back(WarcEntry{
          .kind = WarcEntry::Kind::kCorrupt,
          .where = {.offset = raw_pos_},
          .reason = std::to_string(next - raw_pos_) + " bytes that are not a gzip member"});
      raw_pos_ = next;
      return true;
    }
    const int rc = zs_ready_ ? ::inflateReset(&zs_) : ::inflateInit2(&zs_, 15 + 16);
    if (rc != Z_OK) {
      pending_.push_back(WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                                   .where = {.offset = raw_pos_},
                                   .reason = "inflate: out of memory"});
      raw_pos_ = size_;
      return true;
    }
    zs_ready_ = true;
    in_member_ = true;
    members_.push_back(Member{.out_start = base_ + buffer_.size(), .file_offset = raw_pos_});
  }
  const std::size_t old = buffer_.size();
  buffer_.resize(old + kOutChunk);
  const std::size_t in_len = std::min(kReadChunk, size_ - raw_pos_);
  zs_.next_in = const_cast<Bytef*>(file_ + raw_pos_);
  zs_.avail_in = static_cast<uInt>(in_len);
  zs_.next_out = reinterpret_cast<Bytef*>(buffer_.data() + old);
  zs_.avail_out = kOutChunk;
  const int rc = ::inflate(&zs_, Z_NO_FLUSH);
  raw_pos_ += in_len - zs_.avail_in;
  buffer_.resize(old + kOutChunk - zs_.avail_out);
  if (rc == Z_STREAM_END) in_member_ = false;
  if (rc == Z_OK || rc == Z_STREAM_END) return true;
  // Z_BUF_ERROR with no input left: the file ends inside the member.
  drop_member(rc == Z_BUF_ERROR ? std::string("the file ends inside it (truncated)")
                                : std::string(zs_.msg ? zs_.msg : "inflate failed"));
  return true;
}

void WarcReader::drop_member(const std::string& what) {
  const Member member = members_.back();
  members_.pop_back();
  // Its output is dropped, except what was already returned (in a whole-file gzip stream).
  const std::uint64_t keep_to = std::max(member.out_start, base_ + pos_);
  buffer_.resize(keep_to - base_);
  in_member_ = false;
  const std::string_view raw(reinterpret_cast<const char*>(file_), size_);
  raw_pos_ = std::min(raw.find(kGzipMagic, member.file_offset + 1), size_);
  pending_.push_back(WarcEntry{
      .kind = WarcEntry::Kind::kCorrupt,
      .where = {.offset = member.file_offset},
      .reason = "damaged gzip member: " + what +
                (raw_pos_ < size_ ? "; reading resumes at offset " + std::to_string(raw_pos_)
                                  : "; no gzip member follows")});
  // A record begun before the damage cannot be completed from later members.
  if (pos_ < buffer_.size()) {
    resync_ = true;
    ++pos_;
  }
}

void WarcReader::compact() {
  if (pos_ < kCompactAt || pos_ * 2 < buffer_.size()) return;
  buffer_.erase(0, pos_);
  base_ += pos_;
  pos_ = 0;
  // Keep the member holding base_ and those after it.
  auto first_kept = std::upper_bound(
      members_.begin(), members_.end(), base_,
      [](std::uint64_t at, const Member& member) { return at < member.out_start; });
  if (first_kept != members_.begin()) members_.erase(members_.begin(), first_kept - 1);
}

WarcOffset WarcReader::offset_of(std::uint64_t decompressed) const {
  if (!gzip_) return {.offset = decompressed};
  auto after = std::upper_bound(
      members_.begin(), members_.end(), decompressed,
      [](std::uint64_t at, const Member& member) { return at < member.out_start; });
  if (after == members_.begin()) return {.in_member = decompressed};
  const Member& member = *(after - 1);
  return {.offset = member.file_offset, .in_member = decompressed - member.out_start};
}

}  // namespace neardup::warc
