// doc_freq: how many of the pages a scheme learned from carry each feature, for TF-IDF weights
// (features.weighting tfidf; docs/configuration.md, "Learning from the crawl").
//
// A count-min sketch (Cormode and Muthukrishnan, 2005) of kDepth rows of kWidth 32-bit
// counters with conservative update: a page's distinct feature hashes each raise their counters
// to one more than their current estimate, never more. Row r of a hash is its bits
// [32r, 32r + kWidthBits). The estimate of a feature's document frequency is never below the
// true count and, in a crawl's skewed counts, close to it for the features that matter (those
// many pages carry); features carried by few pages all look rare, which is what idf() needs.
// Fixed size whatever the crawl: kDepth * kWidth * 4 bytes (256 KiB, allocated with the first
// page learned or chunk read), kept and stored in
// kChunks chunks of kChunkCounters counters, so that a batch writes only the chunks it changed.
// Deterministic: the same pages in the same order give the same counters.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace neardup::learn {

class DocFrequencies {
 public:
  static constexpr unsigned kDepth = 2;
  static constexpr unsigned kWidthBits = 15;
  static constexpr std::size_t kWidth = std::size_t{1} << kWidthBits;
  static constexpr std::size_t kChunkCounters = 1024;  // 4 KiB stored
  static constexpr std::size_t kChunks = kDepth * kWidth / kChunkCounters;

  DocFrequencies();

  // Pages learned from.
  std::uint64_t pages() const { return pages_; }
  // The estimated number of those pages carrying the feature (>= the true number).
  std::uint32_t estimate(std::uint64_t feature) const;
  // Smoothed inverse document frequency, ln((1 + pages) / (1 + estimate)) + 1: 1 for a feature
  // every page carries, ln(1 + pages) + 1 for one no page did.
  double idf(std::uint64_t feature) const;

  // Learns one page: `distinct` are its distinct feature hashes (any order).
  void add_page(std::span<const std::uint64_t> distinct);

  // The chunks written since the last call (numbers, ascending).
  std::vector<std::size_t> take_changed_chunks();

  // A chunk's stored bytes (kChunkCounters little-endian u32s) and back; a chunk of another
  // length is refused (false) and nothing changes.
  std::string encode_chunk(std::size_t chunk) const;
  bool decode_chunk(std::size_t chunk, std::string_view bytes);
  void set_pages(std::uint64_t pages) { pages_ = pages; }

  // mark() remembers the state; undo() returns to it (what add_page() changed since is
  // reverted, in reverse), as often as needed until the next mark(). A batch whose
  // transaction is aborted is learned from again from its mark.
  void mark();
  void undo();

  // Bytes held in memory.
  std::size_t memory_bytes() const { return counters_.size() * sizeof(std::uint32_t); }

 private:
  std::size_t slot(unsigned row, std::uint64_t feature) const {
    return row * kWidth + ((feature >> (32 * row)) & (kWidth - 1));
  }

  std::vector<std::uint32_t> counters_;
  std::uint64_t pages_ = 0;
  std::vector<char> changed_;  // per chunk
  // Since mark(): every counter's old value, in the order they changed, and pages().
  std::vector<std::pair<std::size_t, std::uint32_t>> undo_;
  std::uint64_t marked_pages_ = 0;
};

}  // namespace neardup::learn
