#include "warc/warc_reader.h"

#include <algorithm>
#include <charconv>

#include "common/ascii.h"
#include "warc/header_fields.h"
#include "warc/record_block.h"

namespace neardup::warc {
namespace {

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

std::expected<std::unique_ptr<WarcReader>, std::string> WarcReader::open(const std::string& path) {
  auto stream = WarcStream::open(path);
  if (!stream) return std::unexpected(std::move(stream.error()));
  std::unique_ptr<WarcReader> reader(new WarcReader(std::move(*stream)));
  // The first record must be a WARC record (unless the first gzip member is damaged: that is
  // reported by next()).
  while (reader->stream_->window().size() < 8 && reader->fill()) {
  }
  const std::string_view head = reader->stream_->window();
  if (!head.empty() &&
      !head.starts_with(std::string_view("WARC/", std::min<std::size_t>(5, head.size())))) {
    std::string sample(head.substr(0, 40));
    for (char& c : sample) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '.';
    }
    return std::unexpected(path + ": not a WARC file (it starts with \"" + sample + "\"" +
                           (reader->stream_->gzip() ? ", gzip-compressed" : "") + ")");
  }
  return reader;
}

WarcReader::WarcReader(std::unique_ptr<WarcStream> stream) : stream_(std::move(stream)) {}

WarcReader::~WarcReader() = default;

// The stream's next bytes. A gzip member that did not inflate ends a record passed over from
// before it (the record is lost with its member); otherwise a record begun before it is not
// completed from the members after it.
bool WarcReader::fill() {
  const bool more = stream_->fill();
  if (const auto drop = stream_->take_drop()) {
    if (pass_over_ && drop->out_start <= pass_over_->start) {
      pass_over_.reset();
      resync_ = true;
    } else if (splice_ <= stream_->here()) {
      splice_ = drop->keep_to;
    }
  }
  return more;
}

bool WarcReader::next(WarcEntry& entry) {
  WarcStream& s = *stream_;
  auto report = [&](WarcStream::Damage damage) {
    entry = WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                      .where = {.offset = damage.offset},
                      .reason = std::move(damage.reason)};
    return true;
  };
  for (;;) {
    // Damage found ahead comes after the records before it (not before a passed-over record's
    // length is settled: going back finds it again).
    if (!pass_over_) {
      if (auto damage = s.take_damage(s.here())) return report(std::move(*damage));
    }
    if (parse(entry) == Step::kEntry) return true;
    if (!s.at_eof()) {
      fill();
      continue;
    }
    // The file ends where more bytes were needed: inside a record's header.
    if (!resync_ && s.pos() < s.window().size()) {
      entry = WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                        .where = s.offset_of(s.here()),
                        .reason = "the file ends inside this record's header (truncated)"};
      s.set_pos(s.window().size());
      return true;
    }
    if (auto damage = s.take_damage(UINT64_MAX)) return report(std::move(*damage));
    return false;
  }
}

WarcReader::Step WarcReader::parse(WarcEntry& entry) {
  if (pass_over_) return pass_over(entry);
  WarcStream& s = *stream_;
  const std::string_view data = s.window();
  std::size_t pos = s.pos();
  if (resync_) {
    const std::size_t found = find_version_line(data, pos);
    if (found == std::string_view::npos) {
      // Keep what may be the start of "WARC/1.x\r" at the end for the next fill.
      if (data.size() > 9) pos = std::max(pos, data.size() - 9);
      if (s.at_eof()) pos = data.size();
      s.set_pos(pos);
      return Step::kNeedMore;
    }
    pos = found;
    resync_ = false;
  }
  while (pos < data.size() && (data[pos] == '\r' || data[pos] == '\n')) ++pos;
  s.set_pos(pos);
  if (pos >= data.size()) return Step::kNeedMore;
  return read_record(entry);
}

WarcReader::Step WarcReader::read_record(WarcEntry& entry) {
  WarcStream& s = *stream_;
  const std::string_view data = s.window().substr(s.pos());
  const std::uint64_t start = s.here();
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
  entry = WarcEntry{.where = s.offset_of(start)};
  const bool first_of_member = s.gzip() && s.starts_member(start);
  if (*length > kMaxBlockBytes) {  // passed over without holding it in memory
    entry.kind = type == "response" ? WarcEntry::Kind::kSkipped : WarcEntry::Kind::kPassedOver;
    entry.reason = type == "response" ? "too_large" : type.empty() ? "untyped" : type;
    pass_over_ = PassOver{.entry = std::move(entry),
                          .start = start,
                          .length = *length,
                          .block_end = block_end,
                          .starts_member = first_of_member,
                          .splice = splice_,
                          .mark = s.mark()};
    s.set_pos(s.pos() + *block_at);
    return pass_over(entry);
  }
  std::uint64_t member_end = 0;
  if (first_of_member && member_check(start, block_end, member_end) == MemberCheck::kOverruns) {
    entry.kind = WarcEntry::Kind::kCorrupt;
    entry.reason = member_overrun(*length);
    s.set_pos(member_end - s.base());  // a record starts there
    return Step::kEntry;
  }
  const std::size_t end = *block_at + *length;
  if (data.size() < end) {
    if (!s.at_eof()) return Step::kNeedMore;
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
  s.set_pos(s.pos() + std::min(end + kRecordEnd.size(), data.size()));

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
  WarcStream& s = *stream_;
  PassOver& p = *pass_over_;
  const std::string past_the_end = "the file ends before the end of the block of Content-Length " +
                                   std::to_string(p.length) +
                                   " (truncated, or the length is wrong)";
  if (!s.gzip()) {
    if (p.block_end > s.size()) {
      go_back(entry, past_the_end);
      return Step::kEntry;
    }
    // An uncompressed file is read on at the claimed end, without reading the block.
    if (p.block_end > s.end()) s.seek(p.block_end);
  }
  std::uint64_t drop_to = p.block_end;
  if (p.starts_member) {
    std::uint64_t member_end = 0;
    switch (member_check(p.start, p.block_end, member_end)) {
      case MemberCheck::kOverruns:
        entry = WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                          .where = p.entry.where,
                          .reason = member_overrun(p.length)};
        s.set_pos(member_end - s.base());  // a record starts there
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
  if (s.here() < drop_to) s.set_pos(std::min<std::uint64_t>(drop_to - s.base(), s.window().size()));
  if (s.here() < p.block_end) {
    if (!s.at_eof()) return Step::kNeedMore;
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
  s.set_pos(std::min<std::uint64_t>(p.block_end + kRecordEnd.size() - s.base(), s.window().size()));
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
  stream_->rewind(*p.mark);
  splice_ = p.splice;
  stream_->set_pos(1);
  resync_ = true;
}

// The bytes of the window from the decompressed offset `at` (none when it is past them).
std::string_view WarcReader::window_from(std::uint64_t at) const {
  const std::string_view window = stream_->window();
  return window.substr(std::min<std::uint64_t>(at - stream_->base(), window.size()));
}

WarcReader::Boundary WarcReader::boundary_at(std::uint64_t block_end) const {
  const std::string_view rest = window_from(block_end);
  const bool at_eof = stream_->at_eof();
  if (at_eof && trim(rest).empty()) return Boundary::kHolds;  // the file ends with the block
  if (rest.size() < kRecordEnd.size()) {
    return !at_eof && kRecordEnd.starts_with(rest) ? Boundary::kUnknown : Boundary::kNoCrLfCrLf;
  }
  if (!rest.starts_with(kRecordEnd)) return Boundary::kNoCrLfCrLf;
  return record_follows(block_end + kRecordEnd.size());
}

WarcReader::Boundary WarcReader::record_follows(std::uint64_t at) const {
  std::string_view rest = window_from(at);
  const bool at_eof = stream_->at_eof();
  const std::size_t first = rest.find_first_not_of("\r\n");
  if (first == std::string_view::npos) return at_eof ? Boundary::kHolds : Boundary::kUnknown;
  rest.remove_prefix(first);
  if (!rest.starts_with(kVersion.substr(0, std::min(rest.size(), kVersion.size())))) {
    return Boundary::kNoRecordAfter;
  }
  if (rest.size() < kVersion.size() + 2) {
    return at_eof ? Boundary::kNoRecordAfter : Boundary::kUnknown;
  }
  return is_version_line(rest) ? Boundary::kHolds : Boundary::kNoRecordAfter;
}

// For a record at `start` that starts a gzip member, with a block claimed to end at
// `block_end`: kFits when the member holds the block and its CRLF CRLF, or when the member ends
// before and the next one does not start a record (a file gzipped in blocks continues it
// there); kOverruns when the member ends before and the next member starts a record or nothing
// follows; kUnknown until that is known. `member_end` is where the member ends, or 0 while it
// is still being inflated.
WarcReader::MemberCheck WarcReader::member_check(std::uint64_t start, std::uint64_t block_end,
                                                 std::uint64_t& member_end) const {
  member_end = stream_->member_end(start);
  if (member_end == 0) {
    return stream_->end() >= block_end + kRecordEnd.size() ? MemberCheck::kFits
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
  entry = WarcEntry{.kind = WarcEntry::Kind::kCorrupt,
                    .where = stream_->offset_of(at),
                    .reason = std::move(reason)};
  resync_ = true;
  stream_->set_pos(at - stream_->base() + 1);
}

}  // namespace neardup::warc
