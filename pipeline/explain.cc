#include "pipeline/explain.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <xxhash.h>

#include "pipeline/features/features.h"

namespace neardup {
namespace {

// A text as the signatures see it: its words, and for each the paragraph it is in.
struct Words {
  std::vector<std::string> words;
  std::vector<std::size_t> paragraph_of;     // per word
  std::vector<std::size_t> paragraph_start;  // per paragraph: its first word
  std::vector<std::string_view> paragraph_text;
};

Words words_of(std::string_view text, const FeaturesConfig& features) {
  Words out;
  text = text.substr(0, std::min<std::uint64_t>(text.size(), features.max_text_bytes));
  std::size_t paragraph = 0;
  while (true) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    out.paragraph_start.push_back(out.words.size());
    out.paragraph_text.push_back(line);
    for (std::string& word : tokenize(line, features)) {
      out.words.push_back(std::move(word));
      out.paragraph_of.push_back(paragraph);
    }
    ++paragraph;
    if (end == text.size()) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

// `text` cut to at most `bytes`, at a UTF-8 character boundary, with "…" when cut.
std::string preview(std::string_view text, std::size_t bytes) {
  if (text.size() <= bytes) return std::string(text);
  std::size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "…";
}

std::string joined(const std::vector<std::string>& words, std::size_t from, std::size_t count,
                   std::size_t bytes) {
  std::string out;
  for (std::size_t i = from; i < from + count && out.size() <= bytes; ++i) {
    if (!out.empty()) out += ' ';
    out += words[i];
  }
  return preview(out, bytes);
}

std::uint64_t hash_words(const std::vector<std::string>& words, std::size_t from,
                         std::size_t count) {
  std::uint64_t h = count;
  for (std::size_t i = from; i < from + count; ++i) {
    h = XXH3_64bits_withSeed(words[i].data(), words[i].size(), h);
  }
  return h;
}

void shared_paragraphs(const Words& a, const Words& b, const ExplainOptions& options,
                       Explanation& out) {
  const auto words_in = [](const Words& w, std::size_t p) {
    const std::size_t end =
        p + 1 < w.paragraph_start.size() ? w.paragraph_start[p + 1] : w.words.size();
    return end - w.paragraph_start[p];
  };
  std::unordered_multimap<std::uint64_t, std::size_t> in_b;  // paragraph hash -> paragraph of B
  for (std::size_t p = 0; p < b.paragraph_start.size(); ++p) {
    const std::size_t n = words_in(b, p);
    if (n >= options.min_paragraph_words) in_b.emplace(hash_words(b.words, b.paragraph_start[p], n), p);
  }
  for (std::size_t p = 0; p < a.paragraph_start.size(); ++p) {
    const std::size_t n = words_in(a, p);
    if (n < options.min_paragraph_words) continue;
    auto [first, last] = in_b.equal_range(hash_words(a.words, a.paragraph_start[p], n));
    for (auto it = first; it != last; ++it) {
      const std::size_t q = it->second;
      if (words_in(b, q) != n ||
          !std::equal(a.words.begin() + a.paragraph_start[p], a.words.begin() + a.paragraph_start[p] + n,
                      b.words.begin() + b.paragraph_start[q])) {
        continue;
      }
      ++out.paragraphs_shared;
      out.paragraphs.push_back({.a = {p, a.paragraph_start[p]},
                                .b = {q, b.paragraph_start[q]},
                                .words = n,
                                .text = preview(a.paragraph_text[p], options.preview_bytes)});
      break;  // one partner is enough to say A's paragraph is in B
    }
  }
  std::stable_sort(out.paragraphs.begin(), out.paragraphs.end(),
                   [](const SharedParagraph& x, const SharedParagraph& y) { return x.words > y.words; });
  if (out.paragraphs.size() > options.max_items) out.paragraphs.resize(options.max_items);
}

// Maximal common runs of at least min_run_words, found from their first min_run_words words
// (hashed), then chosen longest first so that no two overlap in A or in B.
void shared_runs(const Words& a, const Words& b, const ExplainOptions& options, Explanation& out) {
  const std::size_t n = std::max<std::size_t>(options.min_run_words, 1);
  if (a.words.size() < n || b.words.size() < n) return;
  // A's n-grams; a word sequence repeated many times in A (a list, a refrain) keeps 8 places.
  constexpr std::size_t kPlacesPerGram = 8;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> grams;
  for (std::size_t i = 0; i + n <= a.words.size(); ++i) {
    auto& places = grams[hash_words(a.words, i, n)];
    if (places.size() < kPlacesPerGram) places.push_back(i);
  }
  struct Run {
    std::size_t i, j, length;
  };
  std::vector<Run> runs;
  for (std::size_t j = 0; j + n <= b.words.size(); ++j) {
    auto found = grams.find(hash_words(b.words, j, n));
    if (found == grams.end()) continue;
    for (std::size_t i : found->second) {
      if (i > 0 && j > 0 && a.words[i - 1] == b.words[j - 1]) continue;  // not a run's start
      std::size_t length = 0;
      while (i + length < a.words.size() && j + length < b.words.size() &&
             a.words[i + length] == b.words[j + length]) {
        ++length;
      }
      if (length >= n) runs.push_back({i, j, length});
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [](const Run& x, const Run& y) {
    return x.length != y.length ? x.length > y.length : x.i < y.i;
  });
  std::vector<bool> used_a(a.words.size()), used_b(b.words.size());
  for (const Run& run : runs) {
    bool free = true;
    for (std::size_t k = 0; k < run.length && free; ++k) free = !used_a[run.i + k] && !used_b[run.j + k];
    if (!free) continue;
    std::fill_n(used_a.begin() + static_cast<std::ptrdiff_t>(run.i), run.length, true);
    std::fill_n(used_b.begin() + static_cast<std::ptrdiff_t>(run.j), run.length, true);
    out.covered_a += run.length;
    out.covered_b += run.length;
    if (out.runs.size() < options.max_items) {
      out.runs.push_back({.a = {a.paragraph_of[run.i], run.i},
                          .b = {b.paragraph_of[run.j], run.j},
                          .words = run.length,
                          .text = joined(a.words, run.i, run.length, options.preview_bytes)});
    }
  }
}

}  // namespace

Explanation explain_texts(std::string_view a, std::string_view b, const FeaturesConfig& features,
                          const ExplainOptions& options) {
  const Words wa = words_of(a, features), wb = words_of(b, features);
  Explanation out;
  out.words_a = wa.words.size();
  out.words_b = wb.words.size();
  shared_paragraphs(wa, wb, options, out);
  shared_runs(wa, wb, options, out);
  return out;
}

}  // namespace neardup
