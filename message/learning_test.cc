#include "message/learning.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "message/answers.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "store/test_util.h"

namespace neardup {
namespace {

using testing::store_config;
using testing::TempDir;

// The scheme that learns both: tfidf from the 4th page, each site's boilerplate from 3 pages.
std::shared_ptr<const Config> learning_config() {
  Config config;
  config.features.weighting = Weighting::kTfidf;
  config.features.idf_warmup_pages = 4;
  config.denoise.site_boilerplate = true;
  config.denoise.site_min_pages = 3;
  return std::make_shared<const Config>(config);
}

// n distinct made-up words from `first` (the same n words for the same `first`).
std::string words(int first, int n) {
  std::string out;
  for (int i = first; i < first + n; ++i) {
    out += out.empty() ? "w" : " w";
    out += static_cast<char>('a' + i % 26);
    out += static_cast<char>('a' + (i / 26) % 26);
    out += static_cast<char>('a' + (i / 676) % 26);
  }
  return out;
}

constexpr std::string_view kNotice =
    "Found a mistake in this story? Select it and press Ctrl+Enter";

// Page n of a.example: its own article and the site's notice, at URL number `at` (n when
// negative).
std::string page_record(int n, int at = -1) {
  const std::string body = "<html><body><article><p>" + words(n * 200, 80) + "</p><p>" +
                           words(n * 200 + 100, 60) + "</p><p>" + std::string(kNotice) +
                           "</p></article></body></html>";
  return nlohmann::json{{"url", "https://www.a.example/" + std::to_string(at < 0 ? n : at)},
                        {"body", body}}
      .dump();
}

struct Batch {
  std::vector<ProcessedRecord> records;
  std::vector<IndexItem> items;
  std::vector<const ProcessedRecord*> pointers;
};

// Pages [from, to) as one batch, at offsets of partition "pages/0" when `sourced`, at URL numbers
// from `at` (their own when negative).
Batch batch(int from, int to, bool sourced = true, int at = -1) {
  Batch run;
  auto config = learning_config();
  for (int n = from; n < to; ++n) {
    run.records.push_back(
        process_record(page_record(n, at < 0 ? -1 : at + n - from), config, scheme_id(*config)));
  }
  for (std::size_t i = 0; i < run.records.size(); ++i) {
    run.items.push_back(index_item(
        run.records[i],
        sourced ? std::optional(SourceOffset{"pages/0", from + static_cast<std::int64_t>(i), 7})
                : std::nullopt,
        1));
    run.pointers.push_back(&run.records[i]);
  }
  return run;
}

std::vector<Verdict> apply(Learning& learning, Index& index, const Batch& run) {
  auto verdicts = learning.apply(index, run.items, run.pointers);
  EXPECT_TRUE(verdicts.has_value()) << verdicts.error().message;
  return verdicts.value_or(std::vector<Verdict>{});
}

std::unique_ptr<Index> open_index(const std::string& path) {
  auto index = Index::open(store_config(path));
  EXPECT_TRUE(index.has_value()) << index.error().message;
  return index ? std::move(*index) : nullptr;
}

TEST(Learning, ASitesNoticeIsDroppedOnceLearnedAndTheFingerprintIsThePagesWithoutIt) {
  TempDir dir;
  auto index = open_index(dir.path());
  Learning learning;
  Batch run = batch(0, 6);
  const std::vector<Verdict> verdicts = apply(learning, *index, run);
  ASSERT_EQ(verdicts.size(), 6u);
  for (int n = 0; n < 3; ++n) {  // learned from 3 pages: nothing dropped before
    EXPECT_TRUE(verdicts[n].boilerplate_lines.empty()) << n;
    EXPECT_EQ(verdicts[n].fingerprint, run.records[n].result.fingerprint) << n;
  }
  for (int n = 3; n < 6; ++n) {
    EXPECT_EQ(verdicts[n].boilerplate_lines, (std::vector<std::uint32_t>{2})) << n;
    EXPECT_NE(verdicts[n].fingerprint, run.records[n].result.fingerprint) << n;
    EXPECT_EQ(verdicts[n].status, Verdict::Status::kUnique);
  }
  // The tag shows the finished fingerprint and the dropped line.
  const Outcome outcome = render_outcome(run.records[4], verdicts[4]);
  EXPECT_EQ(outcome.tag.site_boilerplate, (std::vector<std::uint32_t>{2}));
  EXPECT_NE(outcome.value().find("\"site_boilerplate\":[2]"), std::string::npos) << outcome.value();

  auto state = Learning::read(*index, run.records[0].scheme, *run.records[0].config);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ((*state)->frequencies.pages(), 6u);
  const learn::SiteBoilerplate::Host* host = (*state)->sites.find("a.example");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->pages, 6u);
  bool notice = false;
  for (const auto& block : host->blocks) notice |= host->text(block.hash) == kNotice;
  EXPECT_TRUE(notice);
}

TEST(Learning, AProcessThatStopsAndOpensAgainGoesOnAsIfItNeverStopped) {
  TempDir whole, halves;
  std::vector<Verdict> straight;
  {
    auto index = open_index(whole.path());
    Learning learning;
    for (int from = 0; from < 12; from += 3) {
      for (Verdict& v : apply(learning, *index, batch(from, from + 3))) straight.push_back(v);
    }
  }
  std::vector<Verdict> resumed;
  for (int from = 0; from < 12; from += 3) {
    auto index = open_index(halves.path());  // a new process for every batch
    Learning learning;
    for (Verdict& v : apply(learning, *index, batch(from, from + 3))) resumed.push_back(v);
  }
  ASSERT_EQ(straight.size(), resumed.size());
  for (std::size_t i = 0; i < straight.size(); ++i) {
    EXPECT_EQ(straight[i].fingerprint, resumed[i].fingerprint) << i;
    EXPECT_EQ(straight[i].boilerplate_lines, resumed[i].boilerplate_lines) << i;
    EXPECT_EQ(straight[i].status, resumed[i].status) << i;
  }
}

TEST(Learning, ABatchRunAgainOnAGrownMapLearnsWhatItWouldHaveLearnedOnce) {
  TempDir small, large;
  StoreConfig tight = store_config(small.path());
  tight.map_size = 64 * 1024;  // the first batch fills it: StoreEnv::write grows it, runs again
  tight.max_map_size = 1ull << 30;
  auto grown = Index::open(tight);
  ASSERT_TRUE(grown.has_value()) << grown.error().message;
  auto roomy = open_index(large.path());
  Learning a, b;
  const Batch pages = batch(0, 40);
  const std::vector<Verdict> once = apply(b, *roomy, pages);
  const std::vector<Verdict> again = apply(a, **grown, pages);
  ASSERT_GT((*grown)->stats().map_size, tight.map_size);  // it did grow
  ASSERT_EQ(once.size(), again.size());
  for (std::size_t i = 0; i < once.size(); ++i) {
    EXPECT_EQ(once[i].fingerprint, again[i].fingerprint) << i;
    EXPECT_EQ(once[i].boilerplate_lines, again[i].boilerplate_lines) << i;
  }
  const std::string scheme = scheme_id(*learning_config());
  auto stored_once = (*roomy).learned(scheme + "/");
  auto stored_again = (*grown)->learned(scheme + "/");
  ASSERT_TRUE(stored_once && stored_again);
  EXPECT_EQ(*stored_once, *stored_again);
  // Learned from 40 pages, not 80.
  auto state = Learning::read(**grown, scheme, *learning_config());
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ((*state)->frequencies.pages(), 40u);
  EXPECT_EQ((*state)->sites.find("a.example")->pages, 40u);
}

TEST(Learning, AReplayedOffsetGetsWhatItGotTheFirstTimeAndTeachesNothingAgain) {
  TempDir dir;
  auto index = open_index(dir.path());
  Learning learning;
  const std::vector<Verdict> first = apply(learning, *index, batch(0, 6));
  apply(learning, *index, batch(6, 9));
  auto before = Learning::read(*index, scheme_id(*learning_config()), *learning_config());
  ASSERT_TRUE(before.has_value());
  const std::vector<Verdict> again = apply(learning, *index, batch(0, 6));  // replayed offsets
  for (std::size_t i = 0; i < again.size(); ++i) {
    EXPECT_TRUE(again[i].replayed) << i;
    EXPECT_EQ(again[i].fingerprint, first[i].fingerprint) << i;
    EXPECT_EQ(again[i].boilerplate_lines, first[i].boilerplate_lines) << i;
  }
  auto after = Learning::read(*index, scheme_id(*learning_config()), *learning_config());
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ((*after)->frequencies.pages(), (*before)->frequencies.pages());
  EXPECT_EQ(*(*after)->sites.find("a.example"), *(*before)->sites.find("a.example"));
}

TEST(Learning, ADuplicateTeachesNothing) {
  TempDir dir;
  auto index = open_index(dir.path());
  Learning learning;
  apply(learning, *index, batch(0, 2, false));
  // Page 1's text again under another URL, and page 1 crawled again.
  const std::vector<Verdict> copy = apply(learning, *index, batch(1, 2, false, 50));
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].status, Verdict::Status::kDuplicate);
  EXPECT_TRUE(apply(learning, *index, batch(1, 2, false))[0].replayed);
  auto state = Learning::read(*index, scheme_id(*learning_config()), *learning_config());
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ((*state)->frequencies.pages(), 2u);
}

TEST(Learning, LearnSeedsTheStateWithoutStoringPages) {
  TempDir dir;
  auto index = open_index(dir.path());
  Learning learning;
  Batch seed = batch(0, 5, false);
  auto learned = learning.learn(*index, seed.pointers);
  ASSERT_TRUE(learned.has_value()) << learned.error().message;
  EXPECT_EQ(*learned, 5u);
  EXPECT_EQ(index->stats().documents, 0u);
  // The first page the index is asked about has its site's notice dropped already.
  Learning fresh;
  const std::vector<Verdict> verdicts = apply(fresh, *index, batch(10, 11));
  EXPECT_EQ(verdicts[0].boilerplate_lines, (std::vector<std::uint32_t>{2}));
}

TEST(Learning, LearnOnAGrownMapLearnsWhatItWouldHaveLearnedOnce) {
  TempDir small, large;
  StoreConfig tight = store_config(small.path());
  tight.map_size = 64 * 1024;
  tight.max_map_size = 1ull << 30;
  auto grown = Index::open(tight);
  ASSERT_TRUE(grown.has_value()) << grown.error().message;
  auto roomy = open_index(large.path());
  const Batch seed = batch(0, 40, false);
  Learning a, b;
  ASSERT_TRUE(a.learn(**grown, seed.pointers).has_value());
  ASSERT_TRUE(b.learn(*roomy, seed.pointers).has_value());
  ASSERT_GT((*grown)->stats().map_size, tight.map_size);
  const std::string scheme = scheme_id(*learning_config());
  auto stored_grown = (*grown)->learned(scheme + "/");
  auto stored_roomy = roomy->learned(scheme + "/");
  ASSERT_TRUE(stored_grown && stored_roomy);
  EXPECT_EQ(*stored_grown, *stored_roomy);
  EXPECT_FALSE(stored_grown->empty());
}

TEST(Learning, DroppingASchemeDropsWhatItLearned) {
  TempDir dir;
  auto index = open_index(dir.path());
  Learning learning;
  apply(learning, *index, batch(0, 5));
  const std::string scheme = scheme_id(*learning_config());
  ASSERT_FALSE(index->learned(scheme + "/")->empty());
  ASSERT_TRUE(index->drop_scheme(scheme).has_value());
  EXPECT_TRUE(index->learned(scheme + "/")->empty());
}

TEST(Learning, ALookupIsFinishedUnderWhatWasLearned) {
  TempDir dir;
  auto index = open_index(dir.path());
  Learning learning;
  const std::vector<Verdict> applied = apply(learning, *index, batch(0, 5));
  Batch probe = batch(4, 5, false, 90);  // page 4's text under a new URL
  auto answer = lookup_record(*index, probe.records[0]);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->tag.status, "duplicate");
  EXPECT_EQ(answer->tag.site_boilerplate, (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(answer->tag.fingerprint, fingerprint_hex(*applied[4].fingerprint));
  EXPECT_EQ(answer->tag.distance, 0);
}

TEST(Learning, ASchemeThatDoesNotLearnIsAppliedAsEver) {
  TempDir dir;
  auto index = open_index(dir.path());
  auto config = std::make_shared<const Config>();
  ProcessedRecord record = process_record(page_record(0), config, scheme_id(*config));
  EXPECT_FALSE(record.result.learn);
  const std::vector<IndexItem> items = {index_item(record)};
  const std::vector<const ProcessedRecord*> records = {&record};
  Learning learning;
  auto verdicts = learning.apply(*index, items, records);
  ASSERT_TRUE(verdicts.has_value());
  EXPECT_FALSE((*verdicts)[0].fingerprint);
  EXPECT_EQ(learning.memory_bytes(), 0u);
}

}  // namespace
}  // namespace neardup
