#include "pipeline/learn/finish.h"

#include <gtest/gtest.h>

#include <string>

#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/pipeline.h"

namespace neardup::learn {
namespace {

// n distinct words from `first`, as one paragraph.
std::string words(int first, int n) {
  std::string out;
  for (int i = first; i < first + n; ++i) {
    if (!out.empty()) out += ' ';
    out += "w";
    out += static_cast<char>('a' + i % 26);
    out += static_cast<char>('a' + (i / 26) % 26);
    out += static_cast<char>('a' + (i / 676) % 26);
  }
  return out;
}

Config learning_config() {
  Config config;
  config.features.weighting = Weighting::kTfidf;
  config.features.idf_warmup_pages = 2;
  config.denoise.site_boilerplate = true;
  config.denoise.site_min_pages = 2;
  config.containment.enabled = true;
  return config;
}

PageFingerprint page_of(const std::string& text, const Config& config) {
  return fingerprint_page(text, "text/plain", config, {.url = "https://www.site.test/a"});
}

TEST(Finish, WithNothingLearnedGivesTheWorkersSignatures) {
  const Config config = learning_config();
  const PageFingerprint page = page_of(words(0, 40) + "\n" + words(100, 40), config);
  ASSERT_FALSE(page.skip);
  ASSERT_TRUE(page.learn);
  EXPECT_EQ(page.learn->host, "site.test");
  EXPECT_EQ(page.learn->blocks.size(), 2u);
  const Finished finished = finish(*page.learn, config, nullptr, nullptr);
  EXPECT_EQ(finished.fingerprint, page.fingerprint);
  EXPECT_FALSE(finished.text_changed);  // the worker's sketch and passages stand
  EXPECT_EQ(finished.blocks, page.learn->blocks);
  EXPECT_TRUE(finished.removed_lines.empty());
  EXPECT_EQ(paragraph_text(*page.learn, 1), words(100, 40));
}

TEST(Finish, ALearnedBlockIsDroppedAsIfThePageNeverHadIt) {
  const Config config = learning_config();
  const std::string notice = words(5000, 12);
  const PageFingerprint page =
      page_of(words(0, 40) + "\n" + notice + "\n" + words(100, 40), config);
  SiteBoilerplate sites({.min_pages = 2, .max_hosts = 10});
  const std::vector<std::uint64_t> blocks = {page.learn->blocks[1]};
  for (int i = 0; i < 2; ++i) sites.add_page("site.test", blocks, [](std::size_t) { return ""; });

  const Finished finished = finish(*page.learn, config, nullptr, &sites);
  EXPECT_EQ(finished.removed_lines, (std::vector<std::uint32_t>{1}));
  EXPECT_TRUE(finished.text_changed);
  const PageFingerprint without = page_of(words(0, 40) + "\n" + words(100, 40), config);
  EXPECT_EQ(finished.fingerprint, without.fingerprint);
  EXPECT_EQ(finished.sketch, without.sketch);
  EXPECT_EQ(finished.passages.anchors, without.passages.anchors);
  EXPECT_NE(finished.fingerprint, page.fingerprint);
  // Another host's page keeps the block.
  auto other = *page.learn;
  other.host = "other.test";
  EXPECT_EQ(finish(other, config, nullptr, &sites).fingerprint, page.fingerprint);
}

TEST(Finish, APageThatIsAllBoilerplateKeepsItsWholeText) {
  const Config config = learning_config();
  const PageFingerprint page = page_of(words(0, 40), config);
  SiteBoilerplate sites({.min_pages = 2, .max_hosts = 10});
  for (int i = 0; i < 2; ++i) {
    sites.add_page("site.test", page.learn->blocks, [](std::size_t) { return ""; });
  }
  const Finished finished = finish(*page.learn, config, nullptr, &sites);
  EXPECT_TRUE(finished.removed_lines.empty());
  EXPECT_EQ(finished.fingerprint, page.fingerprint);
}

TEST(Finish, TfidfWeighsByLearnedFrequenciesOnlyAfterTheWarmUp) {
  Config config = learning_config();
  config.features.idf_warmup_pages = 3;
  const PageFingerprint page = page_of(words(0, 60) + "\n" + words(200, 60), config);
  DocFrequencies df;
  // Two pages carry every feature of the first paragraph.
  const PageFingerprint first = page_of(words(0, 60), config);
  std::vector<std::uint64_t> common;
  for (const Feature& f : first.learn->features) common.push_back(f.hash);
  df.add_page(common);
  df.add_page(common);
  EXPECT_EQ(finish(*page.learn, config, &df, nullptr).fingerprint, page.fingerprint);  // 2 < 3
  df.add_page(std::vector<std::uint64_t>{1});
  std::vector<Feature> weighted = page.learn->features;
  for (Feature& f : weighted) f.weight *= df.idf(f.hash);
  const Finished finished = finish(*page.learn, config, &df, nullptr);
  EXPECT_EQ(finished.fingerprint, simhash(weighted));
  EXPECT_NE(finished.fingerprint, page.fingerprint);
  EXPECT_FALSE(finished.text_changed);  // MinHash is a set: weights do not change it
}

TEST(Finish, ASchemeThatDoesNotLearnKeepsNoInput) {
  const PageFingerprint page = fingerprint_page(words(0, 40), "text/plain", Config{});
  EXPECT_FALSE(page.learn);
}

}  // namespace
}  // namespace neardup::learn
