#include "pipeline/learn/doc_freq.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/coding.h"

namespace neardup::learn {

DocFrequencies::DocFrequencies() : changed_(kChunks, 0) {}

std::uint32_t DocFrequencies::estimate(std::uint64_t feature) const {
  if (counters_.empty()) return 0;
  std::uint32_t least = std::numeric_limits<std::uint32_t>::max();
  for (unsigned row = 0; row < kDepth; ++row)
    least = std::min(least, counters_[slot(row, feature)]);
  return least;
}

double DocFrequencies::idf(std::uint64_t feature) const {
  const double df = std::min<double>(estimate(feature), static_cast<double>(pages_));
  return std::log((1.0 + static_cast<double>(pages_)) / (1.0 + df)) + 1.0;
}

void DocFrequencies::add_page(std::span<const std::uint64_t> distinct) {
  pages_ += 1;
  if (counters_.empty()) counters_.assign(kDepth * kWidth, 0);
  for (std::uint64_t feature : distinct) {
    const std::uint32_t current = estimate(feature);
    if (current == std::numeric_limits<std::uint32_t>::max()) continue;
    for (unsigned row = 0; row < kDepth; ++row) {
      std::uint32_t& counter = counters_[slot(row, feature)];
      if (counter <= current) {
        undo_.emplace_back(slot(row, feature), counter);
        counter = current + 1;
        changed_[slot(row, feature) / kChunkCounters] = 1;
      }
    }
  }
}

void DocFrequencies::mark() {
  undo_.clear();
  marked_pages_ = pages_;
}

void DocFrequencies::undo() {
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) counters_[it->first] = it->second;
  undo_.clear();
  pages_ = marked_pages_;
}

std::vector<std::size_t> DocFrequencies::take_changed_chunks() {
  std::vector<std::size_t> chunks;
  for (std::size_t chunk = 0; chunk < kChunks; ++chunk) {
    if (changed_[chunk]) chunks.push_back(chunk);
    changed_[chunk] = 0;
  }
  return chunks;
}

std::string DocFrequencies::encode_chunk(std::size_t chunk) const {
  std::string out;
  out.reserve(kChunkCounters * 4);
  for (std::size_t i = 0; i < kChunkCounters; ++i) {
    coding::put_fixed32(out, counters_.empty() ? 0 : counters_[chunk * kChunkCounters + i]);
  }
  return out;
}

bool DocFrequencies::decode_chunk(std::size_t chunk, std::string_view bytes) {
  if (chunk >= kChunks || bytes.size() != kChunkCounters * 4) return false;
  if (counters_.empty()) counters_.assign(kDepth * kWidth, 0);
  for (std::size_t i = 0; i < kChunkCounters; ++i) {
    counters_[chunk * kChunkCounters + i] = coding::decode_fixed32(bytes.data() + 4 * i);
  }
  return true;
}

}  // namespace neardup::learn
