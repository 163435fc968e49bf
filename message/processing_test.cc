#include "message/processing.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace neardup {
namespace {

std::shared_ptr<const Config> config_with(std::uint32_t max_distance) {
  Config config;
  config.dedup.max_distance = max_distance;
  return std::make_shared<const Config>(config);
}

ProcessedRecord process(std::string_view record, std::shared_ptr<const Config> config) {
  std::string scheme = scheme_id(*config);
  return process_record(record, std::move(config), std::move(scheme));
}

// A page with enough distinct words to be fingerprinted.
std::string article(const std::string& url, const std::string& fetched_at = "") {
  std::string body = "<html><body><article><p>";
  const char* words[] = {"river",  "harbour", "winter", "market", "lantern", "orchard", "copper",
                         "meadow", "signal",  "quarry", "timber", "velvet",  "garden",  "bridge"};
  for (int i = 0; i < 120; ++i) body += std::string(words[(i * 7 + i / 14) % 14]) + " ";
  body += "</p></article></body></html>";
  nlohmann::json page{{"url", url}, {"body", body}, {"site", "a.example"}};
  if (!fetched_at.empty()) page["fetched_at"] = fetched_at;
  return page.dump();
}

TEST(Processing, AFingerprintedPageAsksTheIndexUnderItsConfig) {
  auto record = process(article("https://a.example/1", "2024-01-02T03:04:05Z"), config_with(2));
  ASSERT_TRUE(record.page);
  ASSERT_FALSE(record.result.skip);
  IndexItem item = index_item(record, SourceOffset{"pages/0", 41}, 5);
  ASSERT_TRUE(item.page);
  EXPECT_EQ(item.page->id, "https://a.example/1");
  EXPECT_EQ(item.page->fingerprint, record.result.fingerprint);
  EXPECT_EQ(item.page->scheme, record.scheme);
  EXPECT_EQ(item.page->max_distance, 2u);
  EXPECT_EQ(item.page->seen_at_ms, 1704164645000);  // fetched_at wins over the record time
  ASSERT_TRUE(item.source);
  EXPECT_EQ(item.source->offset, 41);
}

TEST(Processing, APageWithoutFetchedAtIsFirstSeenAtTheRecordTime) {
  auto record = process(article("https://a.example/2"), config_with(3));
  EXPECT_EQ(index_item(record, std::nullopt, 1700000000123).page->seen_at_ms, 1700000000123);
}

TEST(Processing, SkippedAndUnreadableRecordsCarryTheirVerdictWithoutTheIndex) {
  auto skipped = process(R"({"url":"https://a.example/short","body":"<p>hi</p>"})", config_with(3));
  IndexItem item = index_item(skipped);
  EXPECT_FALSE(item.page);
  EXPECT_EQ(item.decided.status, Verdict::Status::kSkipped);
  EXPECT_EQ(item.decided.reason, "low_content");
  Outcome outcome = render_outcome(skipped, item.decided);
  EXPECT_FALSE(outcome.dead_letter);
  EXPECT_EQ(outcome.tag.status, "skipped");
  EXPECT_EQ(nlohmann::json::parse(outcome.value())["neardup"]["reason"], "low_content");

  auto unreadable = process("not json", config_with(3));
  item = index_item(unreadable, SourceOffset{"pages/1", 7});
  EXPECT_FALSE(item.page);
  EXPECT_EQ(item.decided.status, Verdict::Status::kDeadLetter);
  EXPECT_EQ(item.decided.reason, "not_json");
  outcome = render_outcome(unreadable, item.decided);
  EXPECT_TRUE(outcome.dead_letter);
  EXPECT_EQ(outcome.error.code, "not_json");
}

TEST(Processing, ARecordTooLongToBeHeldIsTheDeadLetterOfOneThatWasHeld) {
  auto config = std::make_shared<Config>();
  config->input.max_record_bytes = 1024;
  const std::string scheme = scheme_id(*config);
  auto held = process_record(std::string(2000, ' '), config, scheme);
  auto unheld = process_unheld_record(2000, config, scheme);
  ASSERT_FALSE(unheld.page);
  EXPECT_EQ(unheld.page.error().code, "record_too_large");
  EXPECT_EQ(unheld.page.error().detail, held.page.error().detail);
  EXPECT_EQ(unheld.page.error().detail, "2000 bytes > input.max_record_bytes 1024");
  Outcome outcome = render_outcome(unheld, index_item(unheld).decided);
  EXPECT_TRUE(outcome.dead_letter);
  EXPECT_EQ(outcome.error.code, "record_too_large");
}

TEST(Processing, TheOutputCarriesTheVerdictAndDropsTheBodyWhenAsked) {
  auto record = process(article("https://a.example/3"), config_with(3));
  Verdict duplicate{.status = Verdict::Status::kDuplicate,
                    .matched = "https://a.example/2",
                    .duplicate_of = "https://a.example/1",
                    .distance = 1};
  Outcome full = render_outcome(record, duplicate);
  auto object = nlohmann::json::parse(full.value());
  EXPECT_EQ(full.tag.status, "duplicate");
  EXPECT_EQ(object["neardup"]["duplicate_of"], "https://a.example/1");
  EXPECT_EQ(object["site"], "a.example");
  EXPECT_TRUE(object.contains("body"));
  auto shrunk = nlohmann::json::parse(render_outcome(record, duplicate, true).value());
  EXPECT_FALSE(shrunk.contains("body"));
  EXPECT_EQ(shrunk["neardup"], object["neardup"]);
}

TEST(Processing, AReadablePageWhoseOffsetWasDeadLetteredIsADeadLetterAgain) {
  auto record = process(article("https://a.example/4"), config_with(3));
  Outcome outcome =
      render_outcome(record, Verdict{.status = Verdict::Status::kDeadLetter, .reason = "not_json"});
  EXPECT_TRUE(outcome.dead_letter);
  EXPECT_EQ(outcome.error.code, "not_json");
  EXPECT_EQ(outcome.error.detail, "verdict stored for this offset");
}

}  // namespace
}  // namespace neardup
