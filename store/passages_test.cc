// The third signature in the index (passages.h): containment both ways, paragraphs seen before,
// and the same answers after a reopen, merges, and a replay of the same page.
#include "store/passages.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "store/test_util.h"

namespace neardup {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using Status = Verdict::Status;

// Anchor number n: spread over all 64 bits, as hashes are (a narrow column keeps the top 40).
std::uint64_t anchor(std::uint64_t n) { return (n + 1) * 0x9E3779B97F4A7C15ull; }

// A page with passages: anchors number [from, from + count) and the given paragraph hashes
// (numbers too), a fingerprint far from every other test page's (only passages relate them).
IndexItem passaged(std::string id, std::uint64_t fingerprint, std::uint64_t from,
                   std::uint64_t count, std::vector<std::uint64_t> paragraphs = {}) {
  IndexItem item = page(std::move(id), fingerprint);
  for (std::uint64_t n = from; n < from + count; ++n) item.page->anchors.push_back(anchor(n));
  std::sort(item.page->anchors.begin(), item.page->anchors.end());
  for (std::uint64_t p : paragraphs) item.page->paragraphs.push_back(anchor(1ull << 40 | p));
  item.page->min_containment = 0.5;
  return item;
}

constexpr std::uint64_t kF1 = 0x0123456789abcdef, kF2 = ~kF1, kF3 = 0x00ff00ff00ff00ff,
                        kF4 = ~kF3, kF5 = 0x0f0f0f0f0f0f0f0f;

TEST(Passages, AnExcerptIsContainedInTheArticleAndTheArticleContainsAnEarlierExcerpt) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  auto v = apply_or_die(*index, {passaged("article", kF1, 1000, 100, {11, 12, 13}),
                                 // 40 of its 50 anchors are the article's: contained (0.8).
                                 passaged("excerpt", kF2, 1060, 50, {12, 99})});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v[0].contained_in.id.empty());
  EXPECT_EQ(v[0].paragraphs, 3u);
  EXPECT_EQ(v[0].paragraphs_seen, 0u);
  EXPECT_EQ(v[1].status, Status::kUnique);
  EXPECT_EQ(v[1].contained_in.id, "article");
  EXPECT_DOUBLE_EQ(v[1].contained_in.share, 0.8);
  EXPECT_TRUE(v[1].contains.id.empty());  // 40 of the article's 100: not most of it
  EXPECT_EQ(v[1].paragraphs, 2u);
  EXPECT_EQ(v[1].paragraphs_seen, 1u);
  EXPECT_EQ(v[1].paragraphs_from, std::vector<std::string>{"article"});

  // The other way round: a teaser first, then the article holding all of it.
  v = apply_or_die(*index, {passaged("teaser", kF3, 5000, 10),
                            passaged("story", kF4, 5000, 60)});
  EXPECT_TRUE(v[0].contains.id.empty());
  EXPECT_EQ(v[1].contains.id, "teaser");
  EXPECT_DOUBLE_EQ(v[1].contains.share, 1.0);
  EXPECT_TRUE(v[1].contained_in.id.empty());  // 10 of its 60 anchors

  // Unrelated, and below the threshold: nothing.
  v = apply_or_die(*index, {passaged("other", kF5, 9000, 30),
                            passaged("quote", kF5 ^ 0xff00ff, 1000, 5)});
  EXPECT_TRUE(v[0].contained_in.id.empty() && v[0].contains.id.empty());
  EXPECT_EQ(v[1].contained_in.id, "article");  // all 5 of its anchors
  EXPECT_TRUE(v[1].contains.id.empty());
  auto quote = passaged("quote-2", kF5 ^ 0xff0000ff, 1000, 5);
  for (std::uint64_t n = 0; n < 7; ++n) quote.page->anchors.push_back(anchor(777'000 + n));
  v = apply_or_die(*index, {quote});  // 5 of 12: under 0.5
  EXPECT_TRUE(v[0].contained_in.id.empty());
}

TEST(Passages, TheOwnClusterIsNotNamedButItsParagraphsWereSeen) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  auto v = apply_or_die(*index, {passaged("a", kA, 1, 50, {7, 8}),
                                 passaged("a-copy", kA ^ 1, 1, 50, {7, 8})});
  ASSERT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_TRUE(v[1].contained_in.id.empty());
  EXPECT_TRUE(v[1].contains.id.empty());
  EXPECT_EQ(v[1].paragraphs_seen, 2u);
  EXPECT_EQ(v[1].paragraphs_from, std::vector<std::string>{"a"});
}

TEST(Passages, AnswersHoldAcrossReopensMergesAndReplays) {
  TempDir dir;
  auto config = store_config(dir.path());
  // Small deltas: the passages column merges into runs as pages come.
  const OpenOptions small{.delta_entries = 512};
  std::vector<Verdict> first;
  {
    auto index = open_or_die(config, small);
    for (std::uint64_t i = 0; i < 40; ++i) {
      apply_or_die(*index,
                   {passaged(numbered("filler-", i), std::mt19937_64(i)(), 1000 + 100 * i, 60)});
    }
    first = apply_or_die(*index, {passaged("source", kF1, 50, 80, {1, 2}),
                                  at(passaged("part", kF2, 50, 40, {2}), "t/0", 7)});
    ASSERT_EQ(first[1].contained_in.id, "source");
    EXPECT_GT(index->stats().documents, 40u);
  }
  // Reopened: the deltas rebuilt from passage_log; the runs as merged.
  auto index = open_or_die(config, small);
  auto again = apply_or_die(*index, {passaged("part-2", kF3, 50, 40, {2})});
  EXPECT_EQ(again[0].contained_in.id, "source");
  EXPECT_EQ(again[0].paragraphs_from, std::vector<std::string>{"source"});
  for (std::uint64_t i = 0; i < 40; ++i) {
    auto v = apply_or_die(*index, {passaged(numbered("more-", i), std::mt19937_64(100 + i)(),
                                            1000 + 100 * i, 60)});
    // Each holds the same anchors as filler-i: contained in it (the first holder).
    EXPECT_EQ(v[0].contained_in.id, numbered("filler-", i));
  }
  // The same offset again: the stored verdict, relations and all.
  auto replayed = apply_or_die(*index, {at(passaged("part", kF2, 50, 40, {2}), "t/0", 7)});
  EXPECT_TRUE(replayed[0].replayed);
  EXPECT_EQ(replayed[0].contained_in.id, "source");
  EXPECT_EQ(replayed[0].contained_in.share, first[1].contained_in.share);
  EXPECT_EQ(replayed[0].paragraphs_seen, first[1].paragraphs_seen);
  // The same page again without an offset (a re-crawl, unchanged): told the same again, its
  // own keys and later pages' not counted as seen before.
  auto recrawled = apply_or_die(*index, {passaged("source", kF1, 50, 80, {1, 2})});
  EXPECT_TRUE(recrawled[0].contained_in.id.empty());
  EXPECT_EQ(recrawled[0].paragraphs, 2u);
  EXPECT_EQ(recrawled[0].paragraphs_seen, 0u);
  // show: what was stored.
  auto shown = index->find("part");
  ASSERT_TRUE(shown.has_value() && shown->has_value());
  EXPECT_EQ((*shown)->verdict.contained_in.id, "source");
  EXPECT_EQ((*shown)->verdict.paragraphs_from, std::vector<std::string>{"source"});
}

TEST(Passages, LookupAnswersWithoutStoring) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  apply_or_die(*index, {passaged("article", kF1, 1000, 100, {11})});
  auto probe = passaged("probe", kF2, 1000, 30, {11});
  auto verdict = index->lookup(*probe.page);
  ASSERT_TRUE(verdict.has_value()) << verdict.error();
  EXPECT_EQ(verdict->contained_in.id, "article");
  EXPECT_EQ(verdict->paragraphs_seen, 1u);
  // Nothing stored: a second lookup says the same, and the page is unknown.
  EXPECT_EQ(index->lookup(*probe.page)->contained_in.id, "article");
  EXPECT_FALSE(index->find("probe")->has_value());
}

}  // namespace
}  // namespace neardup
