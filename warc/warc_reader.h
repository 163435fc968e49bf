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

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "warc/warc_entry.h"
#include "warc/warc_stream.h"

namespace neardup::warc {

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
  std::uint64_t size() const { return stream_->size(); }
  std::uint64_t position() const { return stream_->position(); }

 private:
  enum class Step { kEntry, kNeedMore };
  // Whether a record's claimed end is a record boundary (boundary_at, record_follows).
  enum class Boundary { kHolds, kUnknown, kNoCrLfCrLf, kNoRecordAfter };
  // Whether a record that starts a gzip member ends in it (member_check).
  enum class MemberCheck { kFits, kOverruns, kUnknown };
  // A record whose block is over kMaxBlockBytes, being passed over to its claimed end.
  struct PassOver {
    WarcEntry entry;          // what it is, returned when its length holds
    std::uint64_t start;      // decompressed offset of the record
    std::uint64_t length;     // its Content-Length
    std::uint64_t block_end;  // decompressed offset where that ends the block
    bool starts_member;       // it starts a gzip member, whose end is still to be checked
    std::uint64_t splice;     // splice_ when it was met
    std::unique_ptr<WarcStream::Mark> mark;  // the stream at its start, to go back to
  };

  explicit WarcReader(std::unique_ptr<WarcStream> stream);
  bool fill();
  Step parse(WarcEntry& entry);
  Step read_record(WarcEntry& entry);
  Step pass_over(WarcEntry& entry);
  void go_back(WarcEntry& entry, std::string reason);
  Boundary boundary_at(std::uint64_t block_end) const;
  Boundary record_follows(std::uint64_t at) const;
  std::string_view window_from(std::uint64_t at) const;
  MemberCheck member_check(std::uint64_t start, std::uint64_t block_end,
                           std::uint64_t& member_end) const;
  void corrupt(WarcEntry& entry, std::uint64_t at, std::string reason);

  std::unique_ptr<WarcStream> stream_;
  std::uint64_t splice_ = 0;  // where a damaged member's output was dropped (if past the cursor)
  bool resync_ = false;       // looking for the next "WARC/1." line after damage
  std::optional<PassOver> pass_over_;
};

}  // namespace neardup::warc
