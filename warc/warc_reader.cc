#include "warc/warc_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/ascii.h"
#include "warc/header_fields.h"
#include "warc/record_block.h"

namespace neardup::warc {
namespace {

constexpr std::size_t kReadChunk = 1 << 20;  // file bytes read (and handed to inflate) at once
constexpr std::size_t kCompactAt = 4 << 20;
constexpr std::string_view kGzipMagic("\x1f\x8b\x08", 3);
constexpr std::string_view kVersion("WARC/1.");
constexpr std::string_view kRecordEnd("\r\n\r\n");
// Content-Length values past this are no file's: refused before any offset arithmetic.
constexpr std::uint64_t kMaxLength = std::uint64_t{1} << 56;

// "<x>" -> "x": WARC 1.0 drafts (and wget) bracket WARC-Target-URI; WARC-Record-ID always is.
std::string unbracket(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && s.front() == '<' && s.back() == '>') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// "WARC/1.D" and a line end at the start of `text`.
bool is_version_line(std::string_view text) {
  return text.size() >= kVersion.size() + 2 && text.starts_with(kVersion) && text[7] >= '0' &&
         text[7] <= '9' && (text[8] == '\r' || text[8] == '\n');
}

// The first "WARC/1.D" line (CRLF or LF) at or after `from`; npos when there is none. It need
// not start a line: the record after one cut short follows the cut bytes directly.
std::size_t find_version_line(std::string_view text, std::size_t from) {
  for (std::size_t at = text.find(kVersion, from); at != std::string_view::npos;
       at = text.find(kVersion, at + 1)) {
    if (is_version_line(text.substr(at))) return at;
  }
  return std::string_view::npos;
}

std::string member_overrun(std::uint64_t length) {
  return "the block of Content-Length " + std::to_string(length) +
         " runs past the end of its gzip member, and a record starts the next one: the length "
         "is wrong";
}

// What is wrong with a length whose end is not a record boundary.
std::string length_error(bool no_crlf, std::uint64_t length) {
  return std::string(no_crlf ? "the block is not followed by CRLF CRLF"
                             : "the block is followed by CRLF CRLF but not by the next record "
                               "or the end of the file") +
         ": Content-Length " + std::to_string(length) + " is wrong or the record is cut short";
}

std::optional<std::uint64_t> parse_length(std::string_view text) {
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string describe(const WarcOffset& where) {
  std::string text = "offset " + std::to_string(where.offset);
  if (where.in_member > 0) text += " (+" + std::to_string(where.in_member) + " decompressed)";
  return text;
}

// The gzip stream where a passed-over record starts: what is needed to inflate again from there.
struct WarcReader::Checkpoint {
  z_stream zs{};  // a copy of zs_ (inflateCopy), owned while owns_zs
  bool owns_zs = false;
  std::uint64_t raw_pos = 0;
  bool in_member = false;
  bool at_eof = false;
  std::vector<Member> members;
  std::uint64_t splice = 0;
  std::string tail;  // buffer_ from the record's start

  Checkpoint() = default;
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;
  ~Checkpoint() {
    if (owns_zs) ::inflateEnd(&zs);
  }
};

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
  unsigned char magic[2] = {};
  if (::pread(fd, magic, sizeof magic, 0) < 0) {
    const int read_errno = errno;
    ::close(fd);
    return std::unexpected(path + ": cannot read: " + std::strerror(read_errno));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::unique_ptr<WarcReader> reader(new WarcReader(
      path, fd, static_cast<std::uint64_t>(st.st_size), magic[0] == 0x1f && magic[1] == 0x8b));
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

WarcReader::WarcReader(std::string path, int fd, std::uint64_t size, bool gzip)
    : path_(std::move(path)), fd_(fd), size_(size), gzip_(gzip) {}

WarcReader::~WarcReader() {
  if (zs_ready_) ::inflateEnd(&zs_);
  ::close(fd_);
}

bool WarcReader::next(WarcEntry& entry) {
  auto take_pending = [&] {
    entry = std::move(pending_.front().entry);
    pending_.erase(pending_.begin());
    return true;
  };
  for (;;) {
    // Damage found ahead comes after the records before it (not before a passed-over record's
    // length is settled: going back finds it again).
    if (!pass_over_ && !pending_.empty() && pending_.front().at <= base_ + pos_) {
      return take_pending();
    }
    if (parse(entry) == Step::kEntry) return true;
    if (!at_eof_) {
      at_eof_ = !fill();
      continue;
    }
    // The file ends where more bytes were needed: inside a record's header.
    if (!resync_ && pos_ < buffer_.size()) {
      entry = WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                        .where = offset_of(base_ + pos_),
                        .reason = "the file ends inside this record's header (truncated)"};
      pos_ = buffer_.size();
      return true;
    }
    if (!pending_.empty()) return take_pending();
    return false;
  }
}

WarcReader::Step WarcReader::parse(WarcEntry& entry) {
  if (pass_over_) return pass_over(entry);
  const std::string_view data(buffer_);
  if (resync_) {
    const std::size_t found = find_version_line(data, pos_);
    if (found == std::string_view::npos) {
      // Keep what may be the start of "WARC/1.x\r" at the end for the next fill.
      if (data.size() > 9) pos_ = std::max(pos_, data.size() - 9);
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
  if (!version.starts_with(kVersion)) {
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
  if (*length > kMaxLength) {
    corrupt(entry, start, "Content-Length " + std::to_string(*length) + " is past any file");
    return Step::kEntry;
  }
  const std::uint64_t block_end = start + *block_at + *length;
  if (splice_ > start && splice_ < block_end + kRecordEnd.size()) {
    corrupt(entry, start, "the record runs into a damaged gzip member");
    return Step::kEntry;
  }
  const std::string type(headers.get("WARC-Type"));
  entry = WarcEntry{.where = offset_of(start)};
  const bool first_of_member = gzip_ && starts_member(start);
  if (*length > kMaxBlockBytes) {  // passed over without holding it in memory
    entry.kind = type == "response" ? WarcEntry::Kind::kSkipped : WarcEntry::Kind::kPassedOver;
    entry.reason = type == "response" ? "too_large" : type.empty() ? "untyped" : type;
    pass_over_ = PassOver{.entry = std::move(entry),
                          .start = start,
                          .length = *length,
                          .block_end = block_end,
                          .starts_member = first_of_member,
                          .file_size = size_,
                          .pending = pending_,
                          .checkpoint = nullptr};
    if (gzip_) {
      auto checkpoint = std::make_unique<Checkpoint>();
      if (zs_ready_) {
        if (::inflateCopy(&checkpoint->zs, &zs_) != Z_OK) throw std::bad_alloc();
        checkpoint->owns_zs = true;
      }
      checkpoint->raw_pos = raw_pos_;
      checkpoint->in_member = in_member_;
      checkpoint->at_eof = at_eof_;
      checkpoint->members = members_;
      checkpoint->splice = splice_;
      checkpoint->tail = buffer_.substr(pos_);
      pass_over_->checkpoint = std::move(checkpoint);
    }
    pos_ += *block_at;
    return pass_over(entry);
  }
  std::uint64_t member_end = 0;
  if (first_of_member && member_check(start, block_end, member_end) == MemberCheck::kOverruns) {
    entry.kind = WarcEntry::Kind::kCorrupt;
    entry.reason = member_overrun(*length);
    pos_ = member_end - base_;  // a record starts there
    return Step::kEntry;
  }
  const std::size_t end = *block_at + *length;
  if (data.size() < end) {
    if (!at_eof_) return Step::kNeedMore;
    corrupt(entry, start,
            "the file ends " + std::to_string(data.size() - *block_at) +
                " bytes into the block of Content-Length " + std::to_string(*length) +
                " (truncated, or the length is wrong)");
    return Step::kEntry;
  }
  const Boundary boundary = boundary_at(block_end);
  if (boundary == Boundary::kUnknown) return Step::kNeedMore;
  if (boundary != Boundary::kHolds) {
    corrupt(entry, start, length_error(boundary == Boundary::kNoCrLfCrLf, *length));
    return Step::kEntry;
  }
  pos_ += std::min(end + kRecordEnd.size(), data.size());

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

WarcReader::Step WarcReader::pass_over(WarcEntry& entry) {
  PassOver& p = *pass_over_;
  const std::string past_the_end = "the file ends before the end of the block of Content-Length " +
                                   std::to_string(p.length) +
                                   " (truncated, or the length is wrong)";
  if (!gzip_) {
    if (p.block_end > size_) {
      go_back(entry, past_the_end);
      return Step::kEntry;
    }
    // An uncompressed file is read on at the claimed end, without reading the block.
    if (p.block_end > base_ + buffer_.size()) seek(p.block_end);
  }
  std::uint64_t drop_to = p.block_end;
  if (p.starts_member) {
    std::uint64_t member_end = 0;
    switch (member_check(p.start, p.block_end, member_end)) {
      case MemberCheck::kOverruns:
        entry = WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                          .where = p.entry.where,
                          .reason = member_overrun(p.length)};
        pos_ = member_end - base_;  // a record starts there
        pass_over_.reset();
        return Step::kEntry;
      case MemberCheck::kUnknown:
        // Its end is kept until what follows it is known.
        if (member_end > 0) drop_to = member_end;
        break;
      case MemberCheck::kFits:
        p.starts_member = false;
        break;
    }
  }
  if (base_ + pos_ < drop_to) pos_ = std::min<std::uint64_t>(drop_to - base_, buffer_.size());
  if (base_ + pos_ < p.block_end) {
    if (!at_eof_) return Step::kNeedMore;
    go_back(entry, past_the_end);
    return Step::kEntry;
  }
  const Boundary boundary = boundary_at(p.block_end);
  if (boundary == Boundary::kUnknown) return Step::kNeedMore;
  if (boundary != Boundary::kHolds) {
    go_back(entry, length_error(boundary == Boundary::kNoCrLfCrLf, p.length));
    return Step::kEntry;
  }
  entry = std::move(p.entry);
  pos_ = std::min<std::uint64_t>(p.block_end + kRecordEnd.size() - base_, buffer_.size());
  pass_over_.reset();
  return Step::kEntry;
}

// The passed-over record's length did not hold: it is reported, and reading goes back to just
// after its start to look for the next record there.
void WarcReader::go_back(WarcEntry& entry, std::string reason) {
  PassOver p = std::move(*pass_over_);
  pass_over_.reset();
  entry = WarcEntry{
      .kind = WarcEntry::Kind::kCorrupt, .where = p.entry.where, .reason = std::move(reason)};
  size_ = p.file_size;
  pending_ = std::move(p.pending);
  if (!gzip_) {
    seek(p.start);
  } else {
    Checkpoint& c = *p.checkpoint;
    if (zs_ready_) ::inflateEnd(&zs_);
    zs_ready_ = false;
    // Copied back, not assigned: zlib's state points at the z_stream it belongs to.
    if (c.owns_zs) {
      if (::inflateCopy(&zs_, &c.zs) != Z_OK) throw std::bad_alloc();
      zs_ready_ = true;
    }
    jump_raw(c.raw_pos);
    in_member_ = c.in_member;
    at_eof_ = c.at_eof;
    members_ = std::move(c.members);
    splice_ = c.splice;
    buffer_ = std::move(c.tail);
    base_ = p.start;
  }
  pos_ = 1;
  resync_ = true;
}

WarcReader::Boundary WarcReader::boundary_at(std::uint64_t block_end) const {
  const std::string_view rest =
      std::string_view(buffer_).substr(std::min<std::uint64_t>(block_end - base_, buffer_.size()));
  if (at_eof_ && trim(rest).empty()) return Boundary::kHolds;  // the file ends with the block
  if (rest.size() < kRecordEnd.size()) {
    return !at_eof_ && kRecordEnd.starts_with(rest) ? Boundary::kUnknown : Boundary::kNoCrLfCrLf;
  }
  if (!rest.starts_with(kRecordEnd)) return Boundary::kNoCrLfCrLf;
  return record_follows(block_end + kRecordEnd.size());
}

WarcReader::Boundary WarcReader::record_follows(std::uint64_t at) const {
  std::string_view rest =
      std::string_view(buffer_).substr(std::min<std::uint64_t>(at - base_, buffer_.size()));
  const std::size_t first = rest.find_first_not_of("\r\n");
  if (first == std::string_view::npos) return at_eof_ ? Boundary::kHolds : Boundary::kUnknown;
  rest.remove_prefix(first);
  if (!rest.starts_with(kVersion.substr(0, std::min(rest.size(), kVersion.size())))) {
    return Boundary::kNoRecordAfter;
  }
  if (rest.size() < kVersion.size() + 2) {
    return at_eof_ ? Boundary::kNoRecordAfter : Boundary::kUnknown;
  }
  return is_version_line(rest) ? Boundary::kHolds : Boundary::kNoRecordAfter;
}

bool WarcReader::starts_member(std::uint64_t at) const {
  auto after = std::upper_bound(
      members_.begin(), members_.end(), at,
      [](std::uint64_t offset, const Member& member) { return offset < member.out_start; });
  return after != members_.begin() && (after - 1)->out_start == at;
}

// For a record at `start` that starts a gzip member, with a block claimed to end at
// `block_end`: kFits when the member holds the block and its CRLF CRLF, or when the member ends
// before and the next one does not start a record (a file gzipped in blocks continues it
// there); kOverruns when the member ends before and the next member starts a record or nothing
// follows; kUnknown until that is known. `member_end` is where the member ends, or 0 while it
// is still being inflated.
WarcReader::MemberCheck WarcReader::member_check(std::uint64_t start, std::uint64_t block_end,
                                                 std::uint64_t& member_end) const {
  auto after = std::upper_bound(
      members_.begin(), members_.end(), start,
      [](std::uint64_t offset, const Member& member) { return offset < member.out_start; });
  member_end = after != members_.end() ? after->out_start : in_member_ ? 0 : base_ + buffer_.size();
  if (member_end == 0) {
    return base_ + buffer_.size() >= block_end + kRecordEnd.size() ? MemberCheck::kFits
                                                                   : MemberCheck::kUnknown;
  }
  if (member_end >= block_end + kRecordEnd.size()) return MemberCheck::kFits;
  switch (record_follows(member_end)) {
    case Boundary::kHolds:
      return MemberCheck::kOverruns;
    case Boundary::kUnknown:
      return MemberCheck::kUnknown;
    default:
      return MemberCheck::kFits;
  }
}

void WarcReader::corrupt(WarcEntry& entry, std::uint64_t at, std::string reason) {
  entry = WarcEntry{
      .kind = WarcEntry::Kind::kCorrupt, .where = offset_of(at), .reason = std::move(reason)};
  resync_ = true;
  pos_ = at - base_ + 1;
}

// Reads `size` bytes at `offset` (within size_). A short read means the file shrank (or a read
// error): it is reported as damage where the file now ends, and size_ becomes that.
std::size_t WarcReader::read_at(std::uint64_t offset, char* out, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd_, out + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::uint64_t end = offset + got;
      std::string reason =
          n < 0 ? std::string("read error: ") + std::strerror(errno) + "; nothing after it is read"
                : "the file ends here, " + std::to_string(size_ - end) + " bytes short of the " +
                      std::to_string(size_) + " it had when opened: it shrank while being read";
      // In a gzip file the decompressed place is not known yet: it is told after the rest.
      pending_.push_back(Pending{
          .at = gzip_ ? UINT64_MAX : end,
          .entry = WarcEntry{
              .kind = WarcEntry::Kind::kCorrupt, .where = {.offset = end}, .reason = reason}});
      size_ = end;
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  return got;
}

bool WarcReader::fill() {
  compact();
  if (gzip_) return fill_gzip();
  if (raw_pos_ >= size_) return false;
  const std::size_t want = std::min<std::uint64_t>(kReadChunk, size_ - raw_pos_);
  const std::size_t old = buffer_.size();
  std::size_t got = 0;
  buffer_.resize_and_overwrite(old + want, [&](char* data, std::size_t) {
    got = read_at(raw_pos_, data + old, want);
    return old + got;
  });
  raw_pos_ += got;
  return got > 0;
}

// The file bytes from raw_pos_ that are read ahead, at least `min_bytes` of them unless the file
// ends first.
std::string_view WarcReader::raw_window(std::size_t min_bytes) {
  const std::size_t have = in_.size() - in_pos_;
  if (have < min_bytes && raw_pos_ + have < size_) {
    in_.erase(0, in_pos_);
    in_pos_ = 0;
    const std::uint64_t from = raw_pos_ + have;
    const std::size_t want = std::min<std::uint64_t>(kReadChunk, size_ - from);
    in_.resize_and_overwrite(have + want, [&](char* data, std::size_t) {
      return have + read_at(from, data + have, want);
    });
  }
  return std::string_view(in_).substr(in_pos_);
}

void WarcReader::jump_raw(std::uint64_t offset) {
  raw_pos_ = std::min(offset, size_);
  in_.clear();
  in_pos_ = 0;
}

// The offset of the next gzip member's magic bytes at or after `from`; size_ when none.
std::uint64_t WarcReader::find_gzip_member(std::uint64_t from) {
  std::string chunk;
  for (std::uint64_t at = from; at < size_;) {
    const std::size_t want = std::min<std::uint64_t>(kReadChunk, size_ - at);
    chunk.resize(want);
    chunk.resize(read_at(at, chunk.data(), want));
    const std::size_t found = chunk.find(kGzipMagic);
    if (found != std::string::npos) return at + found;
    if (chunk.size() < kGzipMagic.size()) break;
    at += chunk.size() - (kGzipMagic.size() - 1);  // the magic may straddle two chunks
  }
  return size_;
}

// An uncompressed file is read on from `offset`.
void WarcReader::seek(std::uint64_t offset) {
  buffer_.clear();
  base_ = offset;
  pos_ = 0;
  raw_pos_ = std::min(offset, size_);
  at_eof_ = false;
}

bool WarcReader::fill_gzip() {
  if (!in_member_) {
    const std::string_view head = raw_window(kGzipMagic.size());
    if (head.empty()) return false;
    if (!head.starts_with(kGzipMagic)) {
      const std::uint64_t next = find_gzip_member(raw_pos_ + 1);
      pending_.push_back(Pending{
          .at = base_ + buffer_.size(),
          .entry = WarcEntry{
              .kind = WarcEntry::Kind::kCorrupt,
              .where = {.offset = raw_pos_},
              .reason = std::to_string(next - raw_pos_) + " bytes that are not a gzip member"}});
      jump_raw(next);
      return true;
    }
    const int rc = zs_ready_ ? ::inflateReset(&zs_) : ::inflateInit2(&zs_, 15 + 16);
    if (rc != Z_OK) {
      pending_.push_back(Pending{.at = base_ + buffer_.size(),
                                 .entry = WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                                                    .where = {.offset = raw_pos_},
                                                    .reason = "inflate: out of memory"}});
      jump_raw(size_);
      return true;
    }
    zs_ready_ = true;
    in_member_ = true;
    members_.push_back(Member{.out_start = base_ + buffer_.size(), .file_offset = raw_pos_});
  }
  const std::string_view in = raw_window(1);
  const std::size_t old = buffer_.size();
  int rc = Z_OK;
  buffer_.resize_and_overwrite(old + kDecodeChunk, [&](char* data, std::size_t) {
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs_.avail_in = static_cast<uInt>(in.size());
    zs_.next_out = reinterpret_cast<Bytef*>(data + old);
    zs_.avail_out = kDecodeChunk;
    rc = ::inflate(&zs_, Z_NO_FLUSH);
    return old + kDecodeChunk - zs_.avail_out;
  });
  const std::size_t used = in.size() - zs_.avail_in;
  in_pos_ += used;
  raw_pos_ += used;
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
  jump_raw(find_gzip_member(member.file_offset + 1));
  pending_.push_back(Pending{
      .at = keep_to,
      .entry = WarcEntry{
          .kind = WarcEntry::Kind::kCorrupt,
          .where = {.offset = member.file_offset},
          .reason = "damaged gzip member: " + what +
                    (raw_pos_ < size_ ? "; reading resumes at offset " + std::to_string(raw_pos_)
                                      : "; no gzip member follows")}});
  if (pass_over_ && member.out_start <= pass_over_->start) {
    pass_over_.reset();  // the record passed over is lost with its member
    resync_ = true;
  } else if (splice_ <= base_ + pos_) {
    // A record begun before the damage is not completed from the members after it.
    splice_ = keep_to;
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
