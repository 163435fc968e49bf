// Output written from the pieces it is made of: the pieces are handed to writev(2) as they are,
// so their bytes go to the file without a copy into a buffer of our own (`neardup dedup` writes
// each tagged record as the input's bytes around the inserted `neardup` field).
//
// Usage:
//   auto out = GatherWriter::open(path);            // "-" is stdout
//   if (!out) { report(out.error()); exit 2; }
//   (*out)->add(before); (*out)->add(tag); ...      // views: valid until the next flush()
//   if (!(*out)->flush()) report((*out)->error());  // after every batch, and at the end
#pragma once

#include <sys/uio.h>

#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::cli {

class GatherWriter {
 public:
  // Creates or truncates `path` ("-": stdout). The error names the file and the system's reason.
  static std::expected<std::unique_ptr<GatherWriter>, std::string> open(const std::string& path);
  ~GatherWriter();  // closes the file (never stdout)
  GatherWriter(const GatherWriter&) = delete;
  GatherWriter& operator=(const GatherWriter&) = delete;

  // Queues `bytes` to be written after what was queued before. The bytes are not copied.
  void add(std::string_view bytes);

  // Writes everything queued, in order. False on a write error (error() names the file and the
  // reason; what was queued is dropped, and every later flush fails alike).
  bool flush();
  const std::string& error() const { return error_; }

 private:
  GatherWriter(int fd, bool owned, std::string name)
      : fd_(fd), owned_(owned), name_(std::move(name)) {}

  int fd_;
  bool owned_;
  std::string name_;
  std::vector<iovec> queued_;
  std::string error_;
};

}  // namespace neardup::cli
