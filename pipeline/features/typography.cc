#include "pipeline/features/typography.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace neardup {
namespace {

// What windows-1252 reads bytes 0x80-0x9F as; 0 for the five bytes it leaves undefined.
constexpr std::array<char16_t, 32> kCp1252High = {
    u'\u20AC', 0,         u'\u201A', u'\u0192', u'\u201E', u'\u2026', u'\u2020', u'\u2021',
    u'\u02C6', u'\u2030', u'\u0160', u'\u2039', u'\u0152', 0,         u'\u017D', 0,
    0,         u'\u2018', u'\u2019', u'\u201C', u'\u201D', u'\u2022', u'\u2013', u'\u2014',
    u'\u02DC', u'\u2122', u'\u0161', u'\u203A', u'\u0153', 0,         u'\u017E', u'\u0178'};

// The byte that windows-1252 reads as c, or -1. U+0080-U+00FF count as their own byte: that
// is ISO-8859-1's reading, and also how the WHATWG decoder reads the five bytes windows-1252
// leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D).
int cp1252_byte(char16_t c) {
  if (c < 0x80) return -1;
  if (c <= 0xFF) return c;
  const auto it = std::ranges::find(kCp1252High, c);
  return it == kCp1252High.end() ? -1 : 0x80 + static_cast<int>(it - kCp1252High.begin());
}

bool is_continuation(int byte) { return byte >= 0x80 && byte <= 0xBF; }

// The windows-1252 readings of the lead bytes repaired: C2-C5 (Â Ã Ä Å) and E2 (â).
bool is_repaired_lead(char16_t c) { return (c >= 0xC2 && c <= 0xC5) | (c == 0xE2); }

struct Repair {
  std::size_t length = 0;  // code units consumed; 0: not mojibake
  char16_t character = 0;
};

// The mojibake sequence starting at text[i] (a repaired lead), if any.
Repair mojibake_at(std::span<const char16_t> text, std::size_t i) {
  auto byte_at = [&](std::size_t j) { return j < text.size() ? cp1252_byte(text[j]) : -1; };
  const char16_t lead = text[i];
  const int b1 = byte_at(i + 1);
  if (lead != 0xE2) {
    if (is_continuation(b1)) {
      return {2, static_cast<char16_t>(((lead & 0x1F) << 6) | (b1 & 0x3F))};
    }
    // A no-break space (C2 A0) whose second byte became an ordinary space.
    if (lead == 0xC2 && i + 1 < text.size() && text[i + 1] == u' ') return {2, u' '};
    return {};
  }
  if (b1 < 0x80 || b1 > 0x84) return {};
  const int b2 = byte_at(i + 2);
  if (is_continuation(b2)) {
    return {3, static_cast<char16_t>(0x2000 | ((b1 & 0x3F) << 6) | (b2 & 0x3F))};
  }
  // E2 80 9D (”) with its undefined last byte dropped, or replaced by U+FFFD.
  if (b1 == 0x80) {
    const bool replaced = i + 2 < text.size() && text[i + 2] == u'\uFFFD';
    return {replaced ? 3u : 2u, u'\u201D'};
  }
  return {};
}

// One repair pass; returns the new length. Writes nothing when there is nothing to repair.
std::size_t repair_mojibake(std::span<char16_t> text) {
  std::size_t i = 0;
  while (i < text.size() && !(is_repaired_lead(text[i]) && mojibake_at(text, i).length > 0)) ++i;
  if (i == text.size()) return text.size();
  std::size_t out = i;
  while (i < text.size()) {
    const Repair repair = is_repaired_lead(text[i]) ? mojibake_at(text, i) : Repair{};
    if (repair.length > 0) {
      text[out++] = repair.character;
      i += repair.length;
    } else {
      text[out++] = text[i++];
    }
  }
  return out;
}

char16_t fold_character(char16_t c) {
  switch (c) {
    case u'\u2018':  // ‘
    case u'\u2019':  // ’
    case u'\u201A':  // ‚
    case u'\u201B':  // ‛
    case u'\u2032':  // ′
    case u'\u2035':  // ‵
    case u'\u02BC':  // ʼ
    case u'\u00B4':  // ´
    case u'`':
      return u'\'';
    case u'\u201C':  // “
    case u'\u201D':  // ”
    case u'\u201E':  // „
    case u'\u201F':  // ‟
    case u'\u2033':  // ″
    case u'\u2036':  // ‶
    case u'\u00AB':  // «
    case u'\u00BB':  // »
    case u'\u2039':  // ‹
    case u'\u203A':  // ›
      return u'"';
    case u'\u2010':  // ‐
    case u'\u2011':  // non-breaking hyphen
    case u'\u2012':  // ‒
    case u'\u2013':  // –
    case u'\u2014':  // —
    case u'\u2015':  // ―
    case u'\u2212':  // −
    case u'\uFE58':  // ﹘
    case u'\uFE63':  // ﹣
    case u'\uFF0D':  // －
      return u'-';
    default:
      return c;
  }
}

// A cheap test that is false for every character fold_character leaves alone: below the
// dashes only five characters fold, above the minus sign only three forms. Bitwise, without
// branches, so that a scan with it vectorises.
bool may_fold(char16_t c) {
  const bool low =
      (c == u'`') | (c == u'\u00AB') | (c == u'\u00B4') | (c == u'\u00BB') | (c == u'\u02BC');
  const bool high = (c >= u'\u2010') & ((c <= u'\u2212') | (c >= u'\uFE58'));
  return low | high;
}

struct Scan {
  bool leads;     // some character is a repaired lead
  bool foldable;  // some character may fold
};

// Most text has no mojibake and few foldable characters: one scan, branch-free with integer
// accumulators so that the compiler vectorises it, tells which passes are needed.
Scan scan_for_work(std::span<const char16_t> text) {
  unsigned leads = 0;
  unsigned foldable = 0;
  for (const char16_t c : text) {
    leads |= is_repaired_lead(c);
    foldable |= may_fold(c);
  }
  return {leads != 0, foldable != 0};
}

// Repairing twice covers text that was read as windows-1252 twice; a third pass would only
// find sequences the repairs themselves made up.
constexpr int kMaxRepairPasses = 2;

}  // namespace

std::size_t fold_typography(std::span<char16_t> text) {
  const Scan scan = scan_for_work(text);
  bool has_foldable = scan.foldable;
  std::size_t length = text.size();
  for (int pass = 0; scan.leads && pass < kMaxRepairPasses; ++pass) {
    const std::size_t repaired = repair_mojibake(text.first(length));
    if (repaired == length) break;
    length = repaired;
    has_foldable = true;  // a repaired character may fold
  }
  if (!has_foldable) return length;
  // Blocks without a foldable character are skipped after one vectorised test.
  constexpr std::size_t kBlock = 16;
  for (std::size_t begin = 0; begin < length; begin += kBlock) {
    const std::span<char16_t> block = text.subspan(begin, std::min(kBlock, length - begin));
    if (!scan_for_work(block).foldable) continue;
    for (char16_t& c : block) {
      if (may_fold(c)) c = fold_character(c);
    }
  }
  return length;
}

}  // namespace neardup
