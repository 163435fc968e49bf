#include "pipeline/passages/passages.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <deque>
#include <unordered_set>

namespace neardup {

Passages passages_of(const TokenHashes& tokens, const Config& config) {
  Passages out;
  if (!config.containment.enabled) return out;
  const std::uint64_t seed = config.fingerprint.seed;
  const std::vector<std::uint64_t>& t = tokens.hashes;
  out.tokens = static_cast<std::uint32_t>(t.size());

  const std::size_t k = std::max<std::size_t>(config.minhash.shingle, 1);
  if (t.size() >= k) {
    const std::size_t shingles = t.size() - k + 1;
    const std::size_t w = std::clamp<std::size_t>(config.containment.window, 1, shingles);
    // A window's minimum by a monotone queue of (hash, position): positions whose hash is
    // larger than or equal to a later one's can never be a window's rightmost minimum.
    std::deque<std::pair<std::uint64_t, std::size_t>> queue;
    std::size_t last_selected = shingles;  // none yet
    for (std::size_t i = 0; i < shingles; ++i) {
      const std::uint64_t h = XXH3_64bits_withSeed(&t[i], k * sizeof(std::uint64_t), seed);
      while (!queue.empty() && queue.back().first >= h) queue.pop_back();
      queue.emplace_back(h, i);
      if (queue.front().second + w <= i) queue.pop_front();
      if (i + 1 >= w && queue.front().second != last_selected) {
        last_selected = queue.front().second;
        out.anchors.push_back(queue.front().first);
      }
    }
    std::sort(out.anchors.begin(), out.anchors.end());
    out.anchors.erase(std::unique(out.anchors.begin(), out.anchors.end()), out.anchors.end());
  }

  std::unordered_set<std::uint64_t> seen;
  std::size_t begin = 0;
  for (std::size_t p = 0; p < tokens.paragraph_ends.size(); ++p) {
    const std::size_t end = tokens.paragraph_ends[p];
    if (end - begin >= config.containment.paragraph_tokens && end > begin) {
      const std::uint64_t h = XXH3_64bits_withSeed(
          &t[begin], (end - begin) * sizeof(std::uint64_t), seed ^ kParagraphSalt);
      if (seen.insert(h).second) {
        out.paragraphs.push_back({.hash = h,
                                  .index = static_cast<std::uint32_t>(tokens.paragraph_lines[p]),
                                  .tokens = static_cast<std::uint32_t>(end - begin)});
      }
    }
    begin = end;
  }
  return out;
}

namespace {

// The text without the lines `drop` (ascending).
KeptText drop_lines(std::string_view text, const std::vector<std::uint32_t>& drop) {
  KeptText out;
  std::size_t line = 0, next = 0;
  bool first = true;
  for (std::size_t begin = 0; begin <= text.size(); ++line) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view paragraph = text.substr(begin, end - begin);
    if (next < drop.size() && drop[next] == line) {
      ++next;
      ++out.dropped_paragraphs;
      out.dropped_bytes += paragraph.size();
    } else {
      if (!first) out.text += '\n';
      out.text += paragraph;
      first = false;
    }
    begin = end + 1;
  }
  return out;
}

}  // namespace

KeptText drop_seen_paragraphs(std::string_view text, const Passages& passages,
                              std::unordered_set<std::uint64_t>& seen) {
  std::vector<std::uint32_t> drop;  // lines, ascending (paragraphs are in text order)
  for (const ParagraphHash& p : passages.paragraphs) {
    if (seen.contains(p.hash)) drop.push_back(p.index);
  }
  for (const ParagraphHash& p : passages.paragraphs) seen.insert(p.hash);
  return drop_lines(text, drop);
}

KeptText drop_paragraphs(std::string_view text, const Passages& passages,
                         const std::vector<std::uint16_t>& ordinals) {
  std::vector<std::uint32_t> drop;
  for (std::uint16_t i : ordinals) {
    if (i < passages.paragraphs.size()) drop.push_back(passages.paragraphs[i].index);
  }
  std::sort(drop.begin(), drop.end());
  return drop_lines(text, drop);
}

double containment(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b) {
  if (a.empty()) return 0;
  std::size_t shared = 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++shared, ++i, ++j;
    }
  }
  return static_cast<double>(shared) / static_cast<double>(a.size());
}

}  // namespace neardup
