// The bytes of a WARC file, decompressed: the layer under WarcReader (warc_reader.h), which
// reads records from them. An uncompressed file is read with pread(); a gzip file is inflated
// member by member, whether it holds a member per record or is one stream.
//
// Usage (by WarcReader):
//   auto stream = WarcStream::open("crawl.warc.gz");   // the file's own errors only
//   while (stream->window().size() < 8 && stream->fill()) {}
//   ... parse from stream->window().substr(stream->pos()), then stream->set_pos(...) ...
//
// The stream keeps a window of decompressed bytes: window()[0] is at decompressed offset
// base(), and pos() is the cursor the reader moves through it. fill() appends more, and first
// drops what lies before the cursor once that is large. A decompressed offset is a file offset
// in an uncompressed file; in a gzip file it counts the output of every member that inflated,
// one after another.
//
// Damage is never fatal, and each kind is queued as a Damage, at the decompressed offset it
// comes at, for the reader to report after the records before it (take_damage):
//   - bytes where a gzip member should start and does not are passed over to the next
//     member's magic bytes;
//   - a member that does not inflate (a flipped byte, a file cut inside it) has its output
//     dropped, except what lies before the cursor, and inflating resumes at the next member's
//     magic bytes; take_drop() then tells where its output started and where the window now
//     ends, so that a record begun before it is not completed from the members after it;
//   - a read that comes back short (the file shrank, a read error) ends the file there.
// In a file gzipped as one stream nothing after damage can be read: a deflate stream cannot be
// resumed.
//
// mark() and rewind() go back to a place in the stream already read past (a record whose
// claimed length did not hold), with the damage queue as it was there.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warc/warc_entry.h"

namespace neardup::warc {

class WarcStream {
 public:
  // A gzip member whose output may still be in the window.
  struct Member {
    std::uint64_t out_start;  // decompressed offset of its first byte
    std::uint64_t file_offset;
  };
  // Damage found in the file's bytes; `at` is the decompressed offset it is reported at
  // (UINT64_MAX in a gzip file when a read came back short: after everything before it).
  struct Damage {
    std::uint64_t at;
    std::uint64_t offset;  // the file offset
    std::string reason;
  };
  // A gzip member that did not inflate: its output started at `out_start`, and the window
  // now ends at `keep_to` (the cursor, when that was past `out_start`).
  struct Drop {
    std::uint64_t out_start;
    std::uint64_t keep_to;
  };
  // Where rewind() goes back to (made by mark(); its fields are the stream's own).
  struct Mark {
    std::uint64_t start = 0;  // the decompressed offset of the cursor
    std::uint64_t file_size = 0;
    std::vector<Damage> damage;
    // gzip only:
    z_stream zs{};  // a copy of the inflate state (inflateCopy), owned while owns_zs
    bool owns_zs = false;
    std::uint64_t raw_pos = 0;
    bool in_member = false;
    bool at_eof = false;
    std::vector<Member> members;
    std::string tail;  // the window from the cursor

    Mark() = default;
    Mark(const Mark&) = delete;
    Mark& operator=(const Mark&) = delete;
    ~Mark();
  };

  // Opens `path`, a non-empty regular file, and tells gzip from uncompressed by its first two
  // bytes. The error names the file and what is wrong. The stream holds the file open until it
  // is destroyed.
  static std::expected<std::unique_ptr<WarcStream>, std::string> open(const std::string& path);
  ~WarcStream();
  WarcStream(const WarcStream&) = delete;
  WarcStream& operator=(const WarcStream&) = delete;

  // Appends the next bytes to the window (at most a read chunk, or an inflate chunk). False,
  // and at_eof() from then on, when the file has no more.
  bool fill();
  bool at_eof() const { return at_eof_; }

  std::string_view window() const { return buffer_; }
  std::uint64_t base() const { return base_; }
  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t pos) { pos_ = pos; }
  std::uint64_t here() const { return base_ + pos_; }
  std::uint64_t end() const { return base_ + buffer_.size(); }

  bool gzip() const { return gzip_; }
  // The file's size when opened, or where a short read found it ends.
  std::uint64_t size() const { return size_; }
  // How many of the file's bytes have been read (or inflated).
  std::uint64_t position() const { return raw_pos_; }

  // Where the byte at a decompressed offset is: its gzip member's file offset and its place in
  // the member's output, or its file offset.
  WarcOffset offset_of(std::uint64_t decompressed) const;
  // Whether a gzip member's output starts at `at`.
  bool starts_member(std::uint64_t at) const;
  // Where the gzip member holding `at` ends (the next member's first output byte, or the
  // window's end when it was the last to inflate), or 0 while it is still being inflated.
  std::uint64_t member_end(std::uint64_t at) const;

  // An uncompressed file is read on from `offset`: the window starts there, empty.
  void seek(std::uint64_t offset);

  // The first damage queued, when it comes at or before `through`; removes it.
  std::optional<Damage> take_damage(std::uint64_t through);
  // The member dropped by the last fill(), if one was; asked after each fill().
  std::optional<Drop> take_drop();

  // The stream at the cursor: the damage queue and the file's size, and in a gzip file the
  // inflate state and the window from the cursor on.
  std::unique_ptr<Mark> mark();
  // Back to `mark`: the window starts at the marked cursor (empty in an uncompressed file,
  // which is read again from there), and what was read or queued after it is forgotten.
  void rewind(Mark& mark);

 private:
  WarcStream(int fd, std::uint64_t size, bool gzip);
  bool fill_gzip();
  std::string_view raw_window(std::size_t min_bytes);
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t size);
  std::uint64_t find_gzip_member(std::uint64_t from);
  void jump_raw(std::uint64_t offset);
  void drop_member(const std::string& what);
  void compact();
  std::vector<Member>::const_iterator member_after(std::uint64_t at) const;

  int fd_;
  std::uint64_t size_;
  bool gzip_;
  std::uint64_t raw_pos_ = 0;  // next file byte to read (uncompressed) or inflate (gzip)
  std::string in_;             // gzip: file bytes read ahead of inflate
  std::size_t in_pos_ = 0;     // in_[in_pos_] is the file byte at raw_pos_

  z_stream zs_{};
  bool zs_ready_ = false;
  bool in_member_ = false;
  std::vector<Member> members_;  // the members whose output may still be in buffer_

  std::string buffer_;  // decompressed bytes; buffer_[0] is at decompressed offset base_
  std::size_t pos_ = 0;
  std::uint64_t base_ = 0;
  bool at_eof_ = false;  // every byte of the file is in buffer_ (or was dropped)
  std::vector<Damage> damage_;
  std::optional<Drop> drop_;
};

}  // namespace neardup::warc
