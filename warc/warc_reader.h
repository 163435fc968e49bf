// WARC input (ISO 28500, WARC 1.0 and 1.1): a WARC file -> the pages of its `response` records,
// in file order, with every other record accounted for. Reads per-record gzip members (as
// Common Crawl, Heritrix and wget write them), a whole file gzipped as one stream, or an
// uncompressed file, recognised by the first bytes.
//
// Usage:
//   auto reader = WarcReader::open("crawl.warc.gz");
//   if (!reader) { report(reader.error()); exit 2; }   // cannot be opened, or not a WARC file
//   WarcEntry entry;
//   while ((*reader)->next(entry)) {
//     switch (entry.kind) { case WarcEntry::Kind::kPage: use(entry.page); ... }
//   }
//
// Damage is reported, never fatal, and loses no record after it. A gzip member that does not
// inflate (a flipped byte, a cut file) is returned as kCorrupt with its file offset, and reading
// goes on at the next member. A record whose header cannot be read, or whose Content-Length does
// not hold, is returned as kCorrupt, and reading goes on at the next "WARC/1.x" line after the
// record's start, whatever length it claimed. A length holds when its block is followed by
// CRLF CRLF and then by the next record (a "WARC/1.x" line, after any more line ends) or the end
// of the file; and, for a record that starts a gzip member, when the block does not run past
// that member into one that starts a record. A length over kMaxBlockBytes is checked at its end
// without holding the block; when it does not hold, reading goes back to the record (the file is
// read, or the stream inflated, from there again). What cannot be told: a length that swallows
// whole records and ends exactly on a record boundary looks like a record that holds a WARC
// file, unless it runs past its own gzip member.
//
// A record is returned only once the bytes after it are read: the records of a per-record gzip
// member come after the member's CRC has been checked, so a damaged member yields no page, and
// a record that runs into the place of a damaged member is damaged; a response record whose
// SHA-1 WARC-Block-Digest does not match its block is reported too. (In a file gzipped as one
// stream, the damage is found where inflate fails, and nothing after it can be read: a deflate
// stream cannot be resumed.) The file is read with pread(), not mapped: a file that shrinks
// while it is read is reported, as damage, where it now ends.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::warc {

// The page of a response record: the HTTP body with its transfer and content codings undone.
struct WarcPage {
  std::string target_uri;    // WARC-Target-URI (angle brackets of the WARC 1.0 draft removed)
  std::string record_id;     // WARC-Record-ID without its angle brackets: "urn:uuid:..."
  std::string date;          // WARC-Date as written, e.g. 2026-01-02T03:04:05Z
  std::string content_type;  // the HTTP Content-Type header value; may be empty
  std::string body;
};

// Where a record starts. In a gzip file `offset` is the file offset of the gzip member the record
// starts in (what CDX indexes give), and `in_member` the record's position in that member's
// decompressed bytes (0 for per-record gzip); otherwise `offset` is the record's byte offset.
struct WarcOffset {
  std::uint64_t offset = 0;
  std::uint64_t in_member = 0;
};

// "offset 784", or "offset 0 (+5120 decompressed)" inside a whole-file gzip stream.
std::string describe(const WarcOffset& where);

// What one record was, or what was wrong at one place in the file.
struct WarcEntry {
  enum class Kind {
    kPage,        // a response record with an HTTP 200 HTML (or untyped) page: `page`
    kPassedOver,  // not a response record; `reason` is its WARC-Type (warcinfo, request, ...)
    kSkipped,     // a response record that gives no page; `reason` is a stable code (below)
    kCorrupt,     // damaged bytes; `reason` says what was wrong; reading resumes after them
  };
  Kind kind = Kind::kCorrupt;
  WarcOffset where;
  std::string reason;
  WarcPage page;
};

// Skip reasons of response records (WarcEntry::reason for kSkipped):
//   status_NNN     the HTTP status is NNN, not 200
//   not_html       the Content-Type is present and is not text/html or application/xhtml+xml
//   not_http       the block is not an HTTP response (e.g. Heritrix's dns: records)
//   bad_http       the HTTP status line or header block cannot be read
//   headers_too_large  the HTTP header block is over kMaxHeaderBytes or kMaxHeaderLines
//   unsupported_encoding  a Content-Encoding other than gzip, deflate, br, identity
//   bad_encoding   the body does not decode with its Content-Encoding
//   too_large      the record's block is over kMaxBlockBytes, or the decoded body over it
//   segmented      a segmented record (WARC-Segment-Number): segments are not reassembled
inline constexpr std::uint64_t kMaxBlockBytes = 64 << 20;
// The bounds of a header block, WARC or HTTP (its lines up to and with the empty one that ends
// it): a WARC header past them is damage, an HTTP one makes the record headers_too_large.
inline constexpr std::size_t kMaxHeaderBytes = 64 << 10;
inline constexpr std::size_t kMaxHeaderLines = 512;

class WarcReader {
 public:
  // Opens `path` (a regular file; not stdin) and checks that it starts with a WARC record. The
  // error names the file and says what is wrong: it cannot be opened, or it is not a WARC file
  // (with what its first bytes look like). The reader holds the file open until it is destroyed.
  static std::expected<std::unique_ptr<WarcReader>, std::string> open(const std::string& path);
  ~WarcReader();
  WarcReader(const WarcReader&) = delete;
  WarcReader& operator=(const WarcReader&) = delete;

  // The next entry, in file order. False at the end of the file (as it was when opened, or
  // where it ends if it shrank).
  bool next(WarcEntry& entry);

  // For progress: the file's size when opened, and how many of its bytes have been read (read or
  // inflated) so far.
  std::uint64_t size() const { return size_; }
  std::uint64_t position() const { return raw_pos_; }

 private:
  enum class Step { kEntry, kNeedMore };
  // Whether a record's claimed end is a record boundary (boundary_at, record_follows).
  enum class Boundary { kHolds, kUnknown, kNoCrLfCrLf, kNoRecordAfter };
  // Whether a record that starts a gzip member ends in it (member_check).
  enum class MemberCheck { kFits, kOverruns, kUnknown };
  struct Member {
    std::uint64_t out_start;  // decompressed offset of its first byte
    std::uint64_t file_offset;
  };
  // Damage found while reading ahead, returned once the records before `at` (a decompressed
  // offset) have been.
  struct Pending {
    std::uint64_t at;
    WarcEntry entry;
  };
  struct Checkpoint;
  // A record whose block is over kMaxBlockBytes, being passed over to its claimed end.
  struct PassOver {
    WarcEntry entry;               // what it is, returned when its length holds
    std::uint64_t start;           // decompressed offset of the record
    std::uint64_t length;          // its Content-Length
    std::uint64_t block_end;       // decompressed offset where that ends the block
    bool starts_member;            // it starts a gzip member, whose end is still to be checked
    std::uint64_t file_size;       // size_ when it was met
    std::vector<Pending> pending;  // pending_ when it was met
    std::unique_ptr<Checkpoint> checkpoint;  // gzip: the stream at its start, to go back to
  };

  WarcReader(std::string path, int fd, std::uint64_t size, bool gzip);
  Step parse(WarcEntry& entry);
  Step read_record(WarcEntry& entry);
  Step pass_over(WarcEntry& entry);
  void go_back(WarcEntry& entry, std::string reason);
  Boundary boundary_at(std::uint64_t block_end) const;
  Boundary record_follows(std::uint64_t at) const;
  bool starts_member(std::uint64_t at) const;
  MemberCheck member_check(std::uint64_t start, std::uint64_t block_end,
                           std::uint64_t& member_end) const;
  bool fill();
  bool fill_gzip();
  std::string_view raw_window(std::size_t min_bytes);
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t size);
  std::uint64_t find_gzip_member(std::uint64_t from);
  void jump_raw(std::uint64_t offset);
  void seek(std::uint64_t offset);
  void drop_member(const std::string& what);
  void compact();
  WarcOffset offset_of(std::uint64_t decompressed) const;
  void corrupt(WarcEntry& entry, std::uint64_t at, std::string reason);

  std::string path_;
  int fd_;
  std::uint64_t size_;  // the file's size when opened, or where a short read found it ends
  bool gzip_;
  std::uint64_t raw_pos_ = 0;  // next file byte to read (uncompressed) or inflate (gzip)
  std::string in_;             // gzip: file bytes read ahead of inflate
  std::size_t in_pos_ = 0;     // in_[in_pos_] is the file byte at raw_pos_

  z_stream zs_{};
  bool zs_ready_ = false;
  bool in_member_ = false;
  std::vector<Member> members_;  // the members whose output may still be in buffer_
  std::uint64_t splice_ = 0;     // where a damaged member's output was dropped (if past pos_)

  std::string buffer_;  // decompressed bytes; buffer_[0] is at decompressed offset base_
  std::size_t pos_ = 0;
  std::uint64_t base_ = 0;
  bool at_eof_ = false;  // every byte of the file is in buffer_ (or was dropped)
  bool resync_ = false;  // looking for the next "WARC/1." line after damage
  std::optional<PassOver> pass_over_;
  std::vector<Pending> pending_;
};

}  // namespace neardup::warc
