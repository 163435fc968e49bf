#include "pipeline/denoise/main_content.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#include "pipeline/denoise/readability_rules.h"

namespace neardup::denoise_internal {
namespace {

// Which heuristics an attempt uses; later attempts switch them off (Readability.js FLAG_*).
struct Heuristics {
  bool strip_unlikely = true;       // drop class/id-flagged chrome before scoring
  bool weight_classes = true;       // class/id weights in scores and cleaning
  bool clean_conditionally = true;  // remove link farms, forms and media boxes from the result
};

// Teasers (Extractor::is_teaser): at most this much text besides the linked headings, per
// linked heading, and at most this much text in an item cut off with an ellipsis, of which at
// most kMoreLinkChars in a trailing "more" link.
constexpr std::int32_t kTeaserBlurbChars = 200;
constexpr std::int32_t kTeaserItemChars = 400;
constexpr std::uint32_t kMoreLinkChars = 25;

class Extractor {
 public:
  explicit Extractor(const Outline& outline)
      : o_(outline),
        n_(outline.elements.size()),
        base_(n_),
        drop_(n_),
        stats_(n_),
        own_(n_),
        score_(n_),
        scored_(n_) {
    // Subtree text before any heuristic: guards against dropping a "boilerplate" element
    // that holds most of the page (ASP.NET pages wrap everything in one <form>).
    for (const TextRun& r : o_.runs) {
      if (r.element < 0) continue;
      Stats& s = base_[static_cast<std::size_t>(r.element)];
      s.chars += static_cast<std::int32_t>(r.chars);
      if (r.in_link) s.link_chars += static_cast<std::int32_t>(r.chars);
    }
    for (std::size_t i = n_; i-- > 0;) {
      const std::int32_t p = o_.elements[i].parent;
      if (p >= 0) base_[static_cast<std::size_t>(p)].add(base_[i]);
    }
    for (std::size_t i = 0; i < n_; ++i) {
      if (o_.elements[i].parent < 0) {
        page_prose_ += base_[i].chars - base_[i].link_chars;
      }
    }
  }

  // One attempt; the paragraphs and their total length in characters.
  std::optional<std::vector<std::string>> run(Heuristics h, std::size_t& chars);

 private:
  bool holds_most_of_page(std::size_t e) const {
    return 2 * (base_[e].chars - base_[e].link_chars) > page_prose_;
  }
  void mark_dropped(Heuristics h);
  void gather_stats();
  void score_paragraphs(Heuristics h);
  std::int32_t pick_top() const;
  std::vector<std::int32_t> pick_with_siblings(std::int32_t top) const;
  void clean_conditionally(std::int32_t root, Heuristics h);
  bool is_teaser(std::size_t e) const;
  bool ends_with_ellipsis(std::size_t e) const;
  void drop_orphan_headings(const std::vector<std::int32_t>& roots);
  bool reads_like_prose(std::int32_t e) const;

  std::size_t parent_of(std::size_t e) const {
    return static_cast<std::size_t>(o_.elements[e].parent);
  }

  const Outline& o_;
  std::size_t n_;
  std::vector<Stats> base_;
  std::int32_t page_prose_ = 0;
  std::vector<std::uint8_t> drop_;  // 1: excluded from this attempt (with its subtree)
  std::vector<Stats> stats_;        // subtree sums over kept runs/elements
  std::vector<Stats> own_;          // runs owned directly (paragraph text)
  std::vector<double> score_;
  std::vector<std::uint8_t> scored_;
  std::vector<std::int32_t> prose_before_;  // kept characters outside headings in runs [0, r)
};

void Extractor::mark_dropped(Heuristics h) {
  for (std::size_t i = 0; i < n_; ++i) {
    const OutlineElement& e = o_.elements[i];
    if (e.parent >= 0 && drop_[parent_of(i)]) {
      drop_[i] = 1;
      continue;
    }
    bool drop = (e.flags & kInvisible) != 0;
    if (!drop && (e.flags & kBoilerplateTag) && !holds_most_of_page(i)) drop = true;
    if (e.tag == HtmlTag::kFigcaption) drop = true;
    // Captions and photo credits are named as such; they are never body text.
    if ((e.flags & kCaptionClass) && !(e.flags & kInCode) && !holds_most_of_page(i)) drop = true;
    if (!drop && h.strip_unlikely && !(e.flags & kInCode) && e.tag != HtmlTag::kBody &&
        e.tag != HtmlTag::kA && e.tag != HtmlTag::kHtml) {
      if ((e.flags & kUnlikelyClass) && !holds_most_of_page(i)) drop = true;
      // Author lines are short; a long "author" block is an author page's content.
      if ((e.flags & kBylineClass) && base_[i].chars < 250) drop = true;
    }
    drop_[i] = drop ? 1 : 0;
  }
}

void Extractor::gather_stats() {
  std::ranges::fill(stats_, Stats{});
  std::ranges::fill(own_, Stats{});
  for (const TextRun& r : o_.runs) {
    if (r.element < 0 || drop_[static_cast<std::size_t>(r.element)]) continue;
    const auto chars = static_cast<std::int32_t>(r.chars);
    Stats& s = stats_[static_cast<std::size_t>(r.element)];
    s.chars += chars;
    s.commas += r.commas;
    if (r.in_link) s.link_chars += chars;
    if (r.owner >= 0) {
      const auto owner = static_cast<std::size_t>(r.owner);
      if (is_heading(o_.elements[owner].tag)) s.heading_chars += chars;
      own_[owner].chars += chars;
      own_[owner].commas += r.commas;
      if (r.in_link) own_[owner].link_chars += chars;
    }
  }
  for (std::size_t i = n_; i-- > 0;) {
    if (drop_[i]) continue;
    Stats& s = stats_[i];
    switch (o_.elements[i].tag) {
      case HtmlTag::kP:
        ++s.p;
        break;
      case HtmlTag::kImg:
        ++s.img;
        break;
      case HtmlTag::kLi:
        ++s.li;
        break;
      case HtmlTag::kInput:
      case HtmlTag::kTextarea:
      case HtmlTag::kSelect:
        ++s.input;
        break;
      case HtmlTag::kEmbed:
      case HtmlTag::kObject:
      case HtmlTag::kIframe:
        ++s.embed;
        break;
      case HtmlTag::kTr:
        ++s.tr;
        break;
      case HtmlTag::kTh:
      case HtmlTag::kThead:
      case HtmlTag::kCaption:
        ++s.data_table_marks;
        break;
      default:
        break;
    }
    if (is_heading(o_.elements[i].tag) && is_linked(own_[i])) ++s.linked_headings;
    const std::int32_t p = o_.elements[i].parent;
    if (p >= 0) stats_[static_cast<std::size_t>(p)].add(s);
  }
}

void Extractor::score_paragraphs(Heuristics h) {
  std::ranges::fill(score_, 0.0);
  std::ranges::fill(scored_, 0);
  for (std::size_t i = 0; i < n_; ++i) {
    const OutlineElement& e = o_.elements[i];
    if (drop_[i] || own_[i].chars < 25 || !scores_text(e.tag)) continue;
    const double score = 1.0 + own_[i].commas + std::min(own_[i].chars / 100, 3);
    std::int32_t a = wraps_loose_text(e) ? static_cast<std::int32_t>(i) : e.parent;
    for (int level = 0; level < 5 && a >= 0; ++level) {
      const auto ai = static_cast<std::size_t>(a);
      const OutlineElement& ae = o_.elements[ai];
      if (ae.tag == HtmlTag::kHtml) break;
      if (!scored_[ai]) {
        scored_[ai] = 1;
        score_[ai] = tag_prior(ae.tag) + (h.weight_classes ? ae.class_weight : 0);
      }
      const double divider = level == 0 ? 1.0 : level == 1 ? 2.0 : level * 3.0;
      score_[ai] += score / divider;
      a = ae.parent;
    }
  }
  for (std::size_t i = 0; i < n_; ++i) {
    if (scored_[i]) score_[i] *= 1.0 - stats_[i].link_density();
  }
}

std::int32_t Extractor::pick_top() const {
  // The five best candidates (Readability.js nbTopCandidates).
  std::array<std::int32_t, 5> best;
  best.fill(-1);
  for (std::size_t i = 0; i < n_; ++i) {
    if (!scored_[i] || drop_[i]) continue;
    for (std::size_t k = 0; k < best.size(); ++k) {
      if (best[k] < 0 || score_[i] > score_[static_cast<std::size_t>(best[k])]) {
        std::shift_right(best.begin() + static_cast<std::ptrdiff_t>(k), best.end(), 1);
        best[k] = static_cast<std::int32_t>(i);
        break;
      }
    }
  }
  std::int32_t top = best[0];
  if (top < 0) return -1;
  auto score = [&](std::int32_t e) { return score_[static_cast<std::size_t>(e)]; };
  auto tag = [&](std::int32_t e) { return o_.elements[static_cast<std::size_t>(e)].tag; };
  auto parent = [&](std::int32_t e) { return o_.elements[static_cast<std::size_t>(e)].parent; };

  // When three or more near-equal candidates share an ancestor, the content is split over
  // several containers (e.g. one per section): take the ancestor.
  std::vector<std::int32_t> alternatives;
  for (std::size_t k = 1; k < best.size(); ++k) {
    if (best[k] >= 0 && score(best[k]) >= 0.75 * score(top)) alternatives.push_back(best[k]);
  }
  if (alternatives.size() >= 3) {
    for (std::int32_t a = parent(top); a >= 0 && tag(a) != HtmlTag::kBody; a = parent(a)) {
      const auto& ae = o_.elements[static_cast<std::size_t>(a)];
      const auto inside =
          std::ranges::count_if(alternatives, [&](std::int32_t c) { return c > a && c < ae.end; });
      if (inside >= 3) {
        top = a;
        break;
      }
    }
  }
  // Climb while the parent scores better: the top may be one of several parts of the content.
  double last = score(top);
  const double threshold = last / 3;
  for (std::int32_t a = parent(top); a >= 0 && tag(a) != HtmlTag::kBody; a = parent(a)) {
    if (!scored_[static_cast<std::size_t>(a)]) continue;
    if (score(a) < threshold) break;
    if (score(a) > last) {
      top = a;
      break;
    }
    last = score(a);
  }
  // A lone child is as good as its parent, and the parent keeps nearby captions and headings.
  while (parent(top) >= 0 && tag(parent(top)) != HtmlTag::kBody &&
         o_.elements[static_cast<std::size_t>(parent(top))].child_count == 1) {
    top = parent(top);
  }
  return top;
}

bool Extractor::reads_like_prose(std::int32_t e) const {
  const auto ei = static_cast<std::size_t>(e);
  const Stats& s = stats_[ei];
  if (s.chars > 80) return s.link_density() < 0.25;
  if (s.chars == 0 || s.link_chars > 0) return false;
  // A short paragraph joins when it contains a sentence end.
  const OutlineElement& el = o_.elements[ei];
  for (std::uint32_t r = el.run_begin; r < el.run_end; ++r) {
    const TextRun& run = o_.runs[r];
    std::string_view t = std::string_view(o_.text).substr(run.begin, run.end - run.begin);
    if (t.find(". ") != t.npos || (!t.empty() && t.back() == '.')) return true;
  }
  return false;
}

std::vector<std::int32_t> Extractor::pick_with_siblings(std::int32_t top) const {
  const OutlineElement& te = o_.elements[static_cast<std::size_t>(top)];
  if (te.parent < 0) return {top};
  const double top_score = score_[static_cast<std::size_t>(top)];
  const double threshold = std::max(10.0, top_score * 0.2);
  std::vector<std::int32_t> roots;
  const OutlineElement& pe = o_.elements[static_cast<std::size_t>(te.parent)];
  for (std::int32_t c = te.parent + 1; c < pe.end;
       c = o_.elements[static_cast<std::size_t>(c)].end) {
    const auto ci = static_cast<std::size_t>(c);
    if (drop_[ci]) continue;
    if (c == top) {
      roots.push_back(c);
      continue;
    }
    const OutlineElement& ce = o_.elements[ci];
    const double bonus =
        (ce.class_hash != 0 && ce.class_hash == te.class_hash) ? top_score * 0.2 : 0.0;
    if (scored_[ci] && score_[ci] + bonus >= threshold) {
      roots.push_back(c);
    } else if ((ce.tag == HtmlTag::kP ||
                (ce.tag == HtmlTag::kDiv && !(ce.flags & kHasBlockChild))) &&
               reads_like_prose(c)) {
      roots.push_back(c);
    }
  }
  return roots;
}

void Extractor::clean_conditionally(std::int32_t root, Heuristics h) {
  const auto r = static_cast<std::size_t>(root);
  const auto end = static_cast<std::size_t>(o_.elements[r].end);
  // Bottom-up (reverse pre-order) like Readability.js, so a parent is judged without the link
  // lists already removed from inside it.
  for (std::size_t i = end; i-- > r + 1;) {
    if (drop_[i]) continue;
    const OutlineElement& e = o_.elements[i];
    const int weight = h.weight_classes ? e.class_weight : 0;
    bool remove = is_teaser(i);
    if ((e.tag == HtmlTag::kH1 || e.tag == HtmlTag::kH2) && weight < 0) remove = true;
    switch (e.tag) {
      case HtmlTag::kForm:
      case HtmlTag::kFieldset:
      case HtmlTag::kTable:
      case HtmlTag::kUl:
      case HtmlTag::kOl:
      case HtmlTag::kDiv:
      case HtmlTag::kSection:
        break;
      default:
        if (!remove) continue;
    }
    const Stats& s = stats_[i];
    if (!remove && e.tag == HtmlTag::kTable && (s.data_table_marks > 0 || s.tr >= 10)) continue;
    if (!remove && weight < 0) remove = true;
    if (!remove && s.commas < 10) {
      const bool is_list = e.tag == HtmlTag::kUl || e.tag == HtmlTag::kOl;
      const bool in_figure = (e.flags & kInFigure) != 0;
      const double ld = s.link_density();
      const double heading_density =
          s.chars == 0 ? 0.0 : static_cast<double>(s.heading_chars) / s.chars;
      remove = (s.img > 1 && s.p * 2 < s.img && !in_figure) || (!is_list && s.li - 100 > s.p) ||
               (s.input > s.p / 3) ||
               (!is_list && heading_density < 0.9 && s.chars < 25 && (s.img == 0 || s.img > 2) &&
                !in_figure) ||
               (weight < 25 && ld > 0.2) || (weight >= 25 && ld > 0.5) ||
               (s.embed == 1 && s.chars < 75) || s.embed > 1;
    }
    if (!remove) continue;
    const Stats removed = s;
    for (std::size_t j = i; j < static_cast<std::size_t>(e.end); ++j) drop_[j] = 1;
    for (std::int32_t a = e.parent; a >= root;
         a = o_.elements[static_cast<std::size_t>(a)].parent) {
      stats_[static_cast<std::size_t>(a)].subtract(removed);
    }
  }
}

// A teaser for another page inside the content: a card or list whose headings are links with
// a short blurb each ("Related stories", "Most read"), or an item that links elsewhere and
// whose text is cut off with an ellipsis, before an optional "more" link.
bool Extractor::is_teaser(std::size_t e) const {
  switch (o_.elements[e].tag) {
    case HtmlTag::kArticle:
    case HtmlTag::kDiv:
    case HtmlTag::kLi:
    case HtmlTag::kOl:
    case HtmlTag::kSection:
    case HtmlTag::kUl:
      break;
    default:
      return false;
  }
  const Stats& s = stats_[e];
  if (s.linked_headings > 0 && s.chars - s.heading_chars <= kTeaserBlurbChars * s.linked_headings) {
    return true;
  }
  return s.link_chars > 0 && s.chars <= kTeaserItemChars && ends_with_ellipsis(e);
}

// True when the kept text of e, less a trailing link of at most kMoreLinkChars, ends with
// "..." or "…".
bool Extractor::ends_with_ellipsis(std::size_t e) const {
  const OutlineElement& el = o_.elements[e];
  std::uint32_t trailing_link = 0;
  for (std::uint32_t r = el.run_end; r-- > el.run_begin;) {
    const TextRun& run = o_.runs[r];
    if (run.element < 0 || drop_[static_cast<std::size_t>(run.element)]) continue;
    std::string_view t = std::string_view(o_.text).substr(run.begin, run.end - run.begin);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    if (t.empty()) continue;
    if (run.in_link && trailing_link + run.chars <= kMoreLinkChars) {
      trailing_link += run.chars;
      continue;
    }
    return t.ends_with("...") || t.ends_with("\u2026");
  }
  return false;
}

// Drops the headings left without a section: no kept text follows them before the text that
// precedes them ends (a "Related stories" or "User tools" heading whose links were removed, a
// category label after the last paragraph).
void Extractor::drop_orphan_headings(const std::vector<std::int32_t>& roots) {
  prose_before_.assign(o_.runs.size() + 1, 0);
  for (std::size_t r = 0; r < o_.runs.size(); ++r) {
    const TextRun& run = o_.runs[r];
    const bool prose =
        run.element >= 0 && !drop_[static_cast<std::size_t>(run.element)] &&
        (run.owner < 0 || !is_heading(o_.elements[static_cast<std::size_t>(run.owner)].tag));
    prose_before_[r + 1] = prose_before_[r] + (prose ? static_cast<std::int32_t>(run.chars) : 0);
  }
  auto prose = [&](std::uint32_t begin, std::uint32_t end) {
    return end > begin ? prose_before_[end] - prose_before_[begin] : 0;
  };
  for (std::int32_t root : roots) {
    const auto root_end = static_cast<std::size_t>(o_.elements[static_cast<std::size_t>(root)].end);
    for (auto i = static_cast<std::size_t>(root) + 1; i < root_end; ++i) {
      const OutlineElement& he = o_.elements[i];
      if (drop_[i] || !is_heading(he.tag) || he.tag == HtmlTag::kH1) continue;
      bool orphan = true;
      for (std::int32_t a = he.parent; a >= root;
           a = o_.elements[static_cast<std::size_t>(a)].parent) {
        const OutlineElement& ae = o_.elements[static_cast<std::size_t>(a)];
        if (prose(he.run_end, ae.run_end) > 0) {
          orphan = false;
          break;
        }
        if (prose(ae.run_begin, he.run_begin) > 0) break;
      }
      if (orphan)
        std::fill(drop_.begin() + static_cast<std::ptrdiff_t>(i), drop_.begin() + he.end, 1);
    }
  }
}

std::optional<std::vector<std::string>> Extractor::run(Heuristics h, std::size_t& chars) {
  mark_dropped(h);
  gather_stats();
  score_paragraphs(h);
  const std::int32_t top = pick_top();
  if (top < 0) return std::nullopt;
  const std::vector<std::int32_t> roots = pick_with_siblings(top);
  if (h.clean_conditionally) {
    for (std::int32_t root : roots) clean_conditionally(root, h);
    drop_orphan_headings(roots);
  }
  std::vector<std::string> paragraphs;
  for (std::int32_t root : roots) {
    const OutlineElement& re = o_.elements[static_cast<std::size_t>(root)];
    append_paragraphs(
        o_, re.run_begin, re.run_end,
        [&](const TextRun& run) {
          if (run.element < 0 || drop_[static_cast<std::size_t>(run.element)]) return false;
          // The headline is the title, not body text.
          return run.owner < 0 ||
                 o_.elements[static_cast<std::size_t>(run.owner)].tag != HtmlTag::kH1;
        },
        paragraphs);
  }
  chars = 0;
  for (const auto& p : paragraphs) {
    chars += static_cast<std::size_t>(std::ranges::count_if(
        p, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  }
  if (paragraphs.empty()) return std::nullopt;
  return paragraphs;
}

}  // namespace

std::optional<std::vector<std::string>> find_main_content(
    const Outline& outline, std::chrono::steady_clock::time_point deadline,
    MainContentError& error) {
  // Readability.js retries with fewer heuristics when the result is short (its charThreshold
  // is 500). Measured on AEB and the synthetic templates, 150 code points keeps genuinely
  // short articles from being replaced by a longer result full of feeds and teasers.
  constexpr std::size_t kEnoughChars = 150;
  constexpr std::array<Heuristics, 4> kAttempts = {{
      {true, true, true},
      {false, true, true},
      {false, false, true},
      {false, false, false},
  }};
  Extractor extractor(outline);
  std::optional<std::vector<std::string>> best;
  std::size_t best_chars = 0;
  for (const Heuristics& h : kAttempts) {
    if (std::chrono::steady_clock::now() > deadline) {
      error = MainContentError::kDeadline;
      return std::nullopt;
    }
    std::size_t chars = 0;
    auto paragraphs = extractor.run(h, chars);
    if (!paragraphs) continue;
    if (chars >= kEnoughChars) return paragraphs;
    if (!best || chars > best_chars) {
      best = std::move(paragraphs);
      best_chars = chars;
    }
  }
  if (!best) error = MainContentError::kNoMainBlock;
  return best;
}

std::vector<std::string> all_visible_paragraphs(const Outline& outline) {
  std::vector<std::string> paragraphs;
  append_paragraphs(
      outline, 0, outline.runs.size(), [](const TextRun&) { return true; }, paragraphs);
  return paragraphs;
}

}  // namespace neardup::denoise_internal
