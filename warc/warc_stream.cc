#include "warc/warc_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "warc/record_block.h"

namespace neardup::warc {
namespace {

constexpr std::size_t kReadChunk = 1 << 20;  // file bytes read (and handed to inflate) at once
constexpr std::size_t kCompactAt = 4 << 20;
constexpr std::string_view kGzipMagic("\x1f\x8b\x08", 3);

}  // namespace

std::expected<std::unique_ptr<WarcStream>, std::string> WarcStream::open(const std::string& path) {
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
  return std::unique_ptr<WarcStream>(new WarcStream(fd, static_cast<std::uint64_t>(st.st_size),
                                                    magic[0] == 0x1f && magic[1] == 0x8b));
}

WarcStream::Mark::~Mark() {
  if (owns_zs) ::inflateEnd(&zs);
}

WarcStream::WarcStream(int fd, std::uint64_t size, bool gzip) : fd_(fd), size_(size), gzip_(gzip) {}

WarcStream::~WarcStream() {
  if (zs_ready_) ::inflateEnd(&zs_);
  ::close(fd_);
}

bool WarcStream::fill() {
  compact();
  bool more = false;
  if (gzip_) {
    more = fill_gzip();
  } else if (raw_pos_ < size_) {
    const std::size_t want = std::min<std::uint64_t>(kReadChunk, size_ - raw_pos_);
    const std::size_t old = buffer_.size();
    std::size_t got = 0;
    buffer_.resize_and_overwrite(old + want, [&](char* data, std::size_t) {
      got = read_at(raw_pos_, data + old, want);
      return old + got;
    });
    raw_pos_ += got;
    more = got > 0;
  }
  if (!more) at_eof_ = true;
  return more;
}

// Reads `size` bytes at `offset` (within size_). A short read means the file shrank (or a read
// error): it is queued as damage where the file now ends, and size_ becomes that.
std::size_t WarcStream::read_at(std::uint64_t offset, char* out, std::size_t size) {
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
      damage_.push_back(
          Damage{.at = gzip_ ? UINT64_MAX : end, .offset = end, .reason = std::move(reason)});
      size_ = end;
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  return got;
}

// The file bytes from raw_pos_ that are read ahead, at least `min_bytes` of them unless the file
// ends first.
std::string_view WarcStream::raw_window(std::size_t min_bytes) {
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

void WarcStream::jump_raw(std::uint64_t offset) {
  raw_pos_ = std::min(offset, size_);
  in_.clear();
  in_pos_ = 0;
}

// The offset of the next gzip member's magic bytes at or after `from`; size_ when none.
std::uint64_t WarcStream::find_gzip_member(std::uint64_t from) {
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

void WarcStream::seek(std::uint64_t offset) {
  buffer_.clear();
  base_ = offset;
  pos_ = 0;
  raw_pos_ = std::min(offset, size_);
  at_eof_ = false;
}

bool WarcStream::fill_gzip() {
  if (!in_member_) {
    const std::string_view head = raw_window(kGzipMagic.size());
    if (head.empty()) return false;
    if (!head.starts_with(kGzipMagic)) {
      const std::uint64_t next = find_gzip_member(raw_pos_ + 1);
      damage_.push_back(
          Damage{.at = end(),
                 .offset = raw_pos_,
                 .reason = std::to_string(next - raw_pos_) + " bytes that are not a gzip member"});
      jump_raw(next);
      return true;
    }
    const int rc = zs_ready_ ? ::inflateReset(&zs_) : ::inflateInit2(&zs_, 15 + 16);
    if (rc != Z_OK) {
      damage_.push_back(
          Damage{.at = end(), .offset = raw_pos_, .reason = "inflate: out of memory"});
      jump_raw(size_);
      return true;
    }
    zs_ready_ = true;
    in_member_ = true;
    members_.push_back(Member{.out_start = end(), .file_offset = raw_pos_});
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

void WarcStream::drop_member(const std::string& what) {
  const Member member = members_.back();
  members_.pop_back();
  // Its output is dropped, except what was already read past (in a whole-file gzip stream).
  const std::uint64_t keep_to = std::max(member.out_start, here());
  buffer_.resize(keep_to - base_);
  in_member_ = false;
  jump_raw(find_gzip_member(member.file_offset + 1));
  damage_.push_back(
      Damage{.at = keep_to,
             .offset = member.file_offset,
             .reason = "damaged gzip member: " + what +
                       (raw_pos_ < size_ ? "; reading resumes at offset " + std::to_string(raw_pos_)
                                         : "; no gzip member follows")});
  drop_ = Drop{.out_start = member.out_start, .keep_to = keep_to};
}

void WarcStream::compact() {
  if (pos_ < kCompactAt || pos_ * 2 < buffer_.size()) return;
  buffer_.erase(0, pos_);
  base_ += pos_;
  pos_ = 0;
  // Keep the member holding base_ and those after it.
  auto first_kept = member_after(base_);
  if (first_kept != members_.begin()) members_.erase(members_.begin(), first_kept - 1);
}

// The first member whose output starts after `at`.
std::vector<WarcStream::Member>::const_iterator WarcStream::member_after(std::uint64_t at) const {
  return std::upper_bound(
      members_.begin(), members_.end(), at,
      [](std::uint64_t offset, const Member& member) { return offset < member.out_start; });
}

WarcOffset WarcStream::offset_of(std::uint64_t decompressed) const {
  if (!gzip_) return {.offset = decompressed};
  auto after = member_after(decompressed);
  if (after == members_.begin()) return {.in_member = decompressed};
  const Member& member = *(after - 1);
  return {.offset = member.file_offset, .in_member = decompressed - member.out_start};
}

bool WarcStream::starts_member(std::uint64_t at) const {
  auto after = member_after(at);
  return after != members_.begin() && (after - 1)->out_start == at;
}

std::uint64_t WarcStream::member_end(std::uint64_t at) const {
  auto after = member_after(at);
  if (after != members_.end()) return after->out_start;
  return in_member_ ? 0 : end();
}

std::optional<WarcStream::Damage> WarcStream::take_damage(std::uint64_t through) {
  if (damage_.empty() || damage_.front().at > through) return std::nullopt;
  Damage first = std::move(damage_.front());
  damage_.erase(damage_.begin());
  return first;
}

std::optional<WarcStream::Drop> WarcStream::take_drop() { return std::exchange(drop_, {}); }

std::unique_ptr<WarcStream::Mark> WarcStream::mark() {
  auto mark = std::make_unique<Mark>();
  mark->start = here();
  mark->file_size = size_;
  mark->damage = damage_;
  if (gzip_) {
    if (zs_ready_) {
      if (::inflateCopy(&mark->zs, &zs_) != Z_OK) throw std::bad_alloc();
      mark->owns_zs = true;
    }
    mark->raw_pos = raw_pos_;
    mark->in_member = in_member_;
    mark->at_eof = at_eof_;
    mark->members = members_;
    mark->tail = buffer_.substr(pos_);
  }
  return mark;
}

void WarcStream::rewind(Mark& mark) {
  size_ = mark.file_size;
  damage_ = std::move(mark.damage);
  drop_.reset();
  if (!gzip_) {
    seek(mark.start);
    return;
  }
  if (zs_ready_) ::inflateEnd(&zs_);
  zs_ready_ = false;
  // Copied back, not assigned: zlib's state points at the z_stream it belongs to.
  if (mark.owns_zs) {
    if (::inflateCopy(&zs_, &mark.zs) != Z_OK) throw std::bad_alloc();
    zs_ready_ = true;
  }
  jump_raw(mark.raw_pos);
  in_member_ = mark.in_member;
  at_eof_ = mark.at_eof;
  members_ = std::move(mark.members);
  buffer_ = std::move(mark.tail);
  base_ = mark.start;
  pos_ = 0;
}

}  // namespace neardup::warc
