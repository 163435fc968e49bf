#include "pipeline/learn/doc_freq.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace neardup::learn {
namespace {

TEST(DocFrequencies, CountsEachPageOnceAndNeverUnderestimates) {
  DocFrequencies df;
  std::mt19937_64 random(7);
  std::vector<std::uint64_t> common = {random(), random()};
  std::vector<std::uint32_t> truth(200, 0);
  std::vector<std::uint64_t> rare(200);
  for (auto& r : rare) r = random();
  for (int page = 0; page < 1000; ++page) {
    std::vector<std::uint64_t> features = common;
    for (int j = 0; j < 5; ++j) {
      const std::size_t pick = random() % rare.size();
      if (std::find(features.begin(), features.end(), rare[pick]) != features.end()) continue;
      features.push_back(rare[pick]);
      ++truth[pick];
    }
    for (int j = 0; j < 300; ++j) features.push_back(random());  // noise, seen once
    df.add_page(features);
  }
  EXPECT_EQ(df.pages(), 1000u);
  EXPECT_EQ(df.estimate(common[0]), 1000u);
  EXPECT_EQ(df.estimate(common[1]), 1000u);
  for (std::size_t i = 0; i < rare.size(); ++i) {
    EXPECT_GE(df.estimate(rare[i]), truth[i]);
    EXPECT_LE(df.estimate(rare[i]), truth[i] + 20) << i;  // conservative update keeps it close
  }
  EXPECT_DOUBLE_EQ(df.idf(common[0]), std::log(1001.0 / 1001.0) + 1.0);
  EXPECT_GT(df.idf(rare[0]), 3.0);
}

TEST(DocFrequencies, ChunksRoundTripAndOnlyChangedOnesAreNamed) {
  DocFrequencies df;
  EXPECT_TRUE(df.take_changed_chunks().empty());
  const std::vector<std::uint64_t> one = {0x12345};
  df.add_page(one);
  const std::vector<std::size_t> changed = df.take_changed_chunks();
  ASSERT_EQ(changed.size(), DocFrequencies::kDepth);  // one counter a row
  EXPECT_TRUE(df.take_changed_chunks().empty());

  DocFrequencies copy;
  for (std::size_t chunk : changed) ASSERT_TRUE(copy.decode_chunk(chunk, df.encode_chunk(chunk)));
  copy.set_pages(df.pages());
  EXPECT_EQ(copy.estimate(0x12345), 1u);
  EXPECT_EQ(copy.idf(0x12345), df.idf(0x12345));
  EXPECT_FALSE(copy.decode_chunk(0, "short"));
  EXPECT_FALSE(copy.decode_chunk(DocFrequencies::kChunks, df.encode_chunk(0)));
}

TEST(DocFrequencies, TheSamePagesInTheSameOrderGiveTheSameCounters) {
  std::mt19937_64 random(3);
  std::vector<std::vector<std::uint64_t>> pages(50);
  for (auto& page : pages) {
    for (int j = 0; j < 100; ++j) page.push_back(random() % 5000);
    std::sort(page.begin(), page.end());
    page.erase(std::unique(page.begin(), page.end()), page.end());
  }
  DocFrequencies a, b;
  for (const auto& page : pages) a.add_page(page);
  for (const auto& page : pages) b.add_page(page);
  for (std::size_t chunk = 0; chunk < DocFrequencies::kChunks; ++chunk) {
    ASSERT_EQ(a.encode_chunk(chunk), b.encode_chunk(chunk));
  }
}

TEST(DocFrequencies, UndoReturnsToTheMarkAsOftenAsAsked) {
  DocFrequencies df;
  const std::vector<std::uint64_t> first = {1, 2, 3}, second = {2, 3, 4};
  df.add_page(first);
  df.mark();
  const std::string before = df.encode_chunk(0);
  for (int attempt = 0; attempt < 2; ++attempt) {
    df.add_page(second);
    df.add_page(second);
    EXPECT_EQ(df.estimate(2), 3u);
    df.undo();
    EXPECT_EQ(df.pages(), 1u);
    EXPECT_EQ(df.estimate(2), 1u);
    EXPECT_EQ(df.estimate(4), 0u);
    EXPECT_EQ(df.encode_chunk(0), before);
  }
}

}  // namespace
}  // namespace neardup::learn
