#include "message/fingerprinted.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace neardup {
namespace {

std::string article_record(const std::string& url) {
  std::string body = "<html><body><article><p>";
  const char* words[] = {"river",  "harbour", "winter", "market", "lantern", "orchard", "copper",
                         "meadow", "signal",  "quarry", "timber", "velvet",  "garden",  "bridge"};
  for (int i = 0; i < 120; ++i) body += std::string(words[(i * 7 + i / 14) % 14]) + " ";
  body += "</p></article></body></html>";
  return nlohmann::json{{"url", url}, {"body", body}, {"site", "a.example"}}.dump();
}

struct Fixture {
  // Containment on, so that the passages travel too.
  std::shared_ptr<const Config> config = [] {
    Config c;
    c.containment.enabled = true;
    return std::make_shared<const Config>(c);
  }();
  std::string scheme = scheme_id(*config);

  ProcessedRecord process(std::string_view record) const {
    return process_record(record, config, scheme);
  }
  // Worker -> bytes -> index, as the two roles do.
  ProcessedRecord round_trip(std::string_view value, FingerprintedRecord* decoded = nullptr) const {
    std::string bytes = encode_fingerprinted(
        make_fingerprinted(process(value), "pages", 3, 1234, 1700000000123, value));
    auto record = decode_fingerprinted(bytes);
    EXPECT_TRUE(record) << record.error();
    if (decoded) *decoded = *record;
    return processed_from(std::move(*record), config, scheme);
  }
};

TEST(Fingerprinted, APageGetsTheSameIndexItemAndOutputAsInOneProcess) {
  Fixture f;
  const std::string value = article_record("https://a.example/1");
  FingerprintedRecord decoded;
  ProcessedRecord direct = f.process(value);
  ProcessedRecord carried = f.round_trip(value, &decoded);
  EXPECT_EQ(decoded.source_topic, "pages");
  EXPECT_EQ(decoded.source_partition, 3);
  EXPECT_EQ(decoded.source_offset, 1234);
  EXPECT_EQ(decoded.timestamp_ms, 1700000000123);
  EXPECT_EQ(decoded.value, value);

  ASSERT_TRUE(carried.page);
  ASSERT_FALSE(carried.result.skip);
  ASSERT_FALSE(direct.result.sketch.empty());
  EXPECT_EQ(carried.result.fingerprint, direct.result.fingerprint);
  EXPECT_EQ(carried.result.sketch, direct.result.sketch);
  ASSERT_EQ(direct.result.sketch_upper.size(), direct.result.sketch.size());
  EXPECT_EQ(carried.result.sketch_upper, direct.result.sketch_upper);
  EXPECT_EQ(carried.result.charset, direct.result.charset);
  EXPECT_EQ(carried.result.feature_count, direct.result.feature_count);
  IndexItem a = index_item(direct, SourceOffset{"pages/3", 1234}, 1700000000123);
  IndexItem b = index_item(carried, SourceOffset{"pages/3", 1234}, decoded.timestamp_ms);
  ASSERT_TRUE(a.page && b.page);
  EXPECT_EQ(a.page->id, b.page->id);
  EXPECT_EQ(a.page->seen_at_ms, b.page->seen_at_ms);
  EXPECT_EQ(a.page->sketch, b.page->sketch);
  EXPECT_EQ(a.page->sketch_upper, b.page->sketch_upper);
  EXPECT_EQ(a.page->bands, b.page->bands);
  ASSERT_FALSE(direct.result.passages.anchors.empty());
  EXPECT_EQ(carried.result.passages.anchors, direct.result.passages.anchors);
  EXPECT_EQ(carried.result.passages.paragraphs, direct.result.passages.paragraphs);
  EXPECT_EQ(carried.result.passages.tokens, direct.result.passages.tokens);
  EXPECT_EQ(a.page->anchors, b.page->anchors);
  EXPECT_EQ(a.page->paragraphs, b.page->paragraphs);
  Verdict unique{.status = Verdict::Status::kUnique};
  EXPECT_EQ(render_outcome(direct, unique).value(), render_outcome(carried, unique).value());
}

TEST(Fingerprinted, SkippedPagesAndDeadLettersKeepTheirDecision) {
  Fixture f;
  ProcessedRecord skipped = f.round_trip(R"({"url":"https://a.example/s","body":"<p>hi</p>"})");
  ASSERT_TRUE(skipped.page);
  ASSERT_TRUE(skipped.result.skip);
  EXPECT_EQ(skipped.result.skip->reason, "low_content");
  EXPECT_EQ(index_item(skipped).decided.status, Verdict::Status::kSkipped);

  ProcessedRecord dead = f.round_trip("not json");
  ASSERT_FALSE(dead.page);
  EXPECT_EQ(dead.page.error().code, "not_json");
  EXPECT_EQ(index_item(dead).decided.status, Verdict::Status::kDeadLetter);
}

TEST(Fingerprinted, AValueTooLargeForTheTopicIsCarriedAsADeadLetterWithoutIt) {
  Fixture f;
  const std::string value = article_record("https://a.example/big");
  auto record = decode_fingerprinted(encode_fingerprinted(
      make_fingerprinted(f.process(value), "pages", 0, 5, 0, value, /*drop_value=*/true)));
  ASSERT_TRUE(record);
  EXPECT_TRUE(record->value.empty());
  ProcessedRecord processed = processed_from(std::move(*record), f.config, f.scheme);
  ASSERT_FALSE(processed.page);
  EXPECT_EQ(processed.page.error().code, "fingerprinted_too_large");
}

TEST(Fingerprinted, APageOfAnotherSchemeIsADeadLetterNamingBoth) {
  Fixture f;
  const std::string value = article_record("https://a.example/2");
  auto record = decode_fingerprinted(
      encode_fingerprinted(make_fingerprinted(f.process(value), "pages", 0, 1, 0, value)));
  ASSERT_TRUE(record);
  Config other;
  other.fingerprint.seed += 1;
  auto other_config = std::make_shared<const Config>(other);
  ProcessedRecord processed = processed_from(std::move(*record), other_config, scheme_id(other));
  ASSERT_FALSE(processed.page);
  EXPECT_EQ(processed.page.error().code, "scheme_mismatch");
  EXPECT_NE(processed.page.error().detail.find(f.scheme), std::string::npos);
  EXPECT_NE(processed.page.error().detail.find(scheme_id(other)), std::string::npos);
}

TEST(Fingerprinted, AVersionTwoRecordReadsWithoutUpperValues) {
  Fixture f;
  const std::string value = article_record("https://a.example/4");
  FingerprintedRecord record = make_fingerprinted(f.process(value), "pages", 0, 1, 0, value);
  const std::string with_upper = encode_fingerprinted(record);
  record.result.sketch_upper.clear();
  const std::string without = encode_fingerprinted(record);
  // Version 2 is version 3 without the upper values' count (0 here), which follows the sketch:
  // where the two encodings first differ.
  const std::size_t at = static_cast<std::size_t>(
      std::mismatch(with_upper.begin(), with_upper.end(), without.begin()).first -
      with_upper.begin());
  std::string v2 = without.substr(0, at) + without.substr(at + 4);
  v2[4] = 2;
  auto decoded = decode_fingerprinted(v2);
  ASSERT_TRUE(decoded.has_value()) << decoded.error();
  EXPECT_TRUE(decoded->result.sketch_upper.empty());
  EXPECT_EQ(encode_fingerprinted(*decoded), without);
  // A count of upper values other than 0 or the sketch's length is damage.
  std::string odd = with_upper;
  odd[at] = 5;
  EXPECT_FALSE(decode_fingerprinted(odd).has_value());
}

TEST(Fingerprinted, DamagedBytesAreRefusedWithTheReason) {
  Fixture f;
  const std::string value = article_record("https://a.example/3");
  const std::string bytes =
      encode_fingerprinted(make_fingerprinted(f.process(value), "pages", 0, 1, 0, value));
  EXPECT_EQ(decode_fingerprinted(value).error(), "not a fingerprinted record (no NDFP magic)");
  std::string newer = bytes;
  newer[4] = 9;
  EXPECT_EQ(decode_fingerprinted(newer).error(),
            "fingerprinted record version 9, this reader knows 1 to 3");
  // Every truncation is refused, never read past the end.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(decode_fingerprinted(std::string_view(bytes).substr(0, n))) << n;
  }
  EXPECT_EQ(decode_fingerprinted(bytes + "x").error(), "trailing bytes after the record");
}

TEST(Fingerprinted, ARecordIsCheckedAgainstTheIndexsSchemeAndItsOwnPosition) {
  Fixture f;
  const std::string value = article_record("https://a.example/2");
  FingerprintedRecord record = make_fingerprinted(f.process(value), "pages", 3, 1234, 1, value);
  EXPECT_TRUE(check_fingerprinted(record, *f.config, f.scheme, 3));

  auto error = check_fingerprinted(record, *f.config, f.scheme, 2);
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().find("names input partition 3 but was read from fingerprint partition 2"),
            std::string::npos)
      << error.error();

  FingerprintedRecord other_topic = record;
  other_topic.source_topic = "elsewhere";
  EXPECT_FALSE(check_fingerprinted(other_topic, *f.config, f.scheme, 3));
  FingerprintedRecord negative = record;
  negative.source_offset = -5;
  EXPECT_FALSE(check_fingerprinted(negative, *f.config, f.scheme, 3));

  // The sketch of a page of the index's scheme has the scheme's length.
  FingerprintedRecord short_sketch = record;
  short_sketch.result.sketch.resize(5);
  error = check_fingerprinted(short_sketch, *f.config, f.scheme, 3);
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().find("a sketch of 5 values, where the scheme has 128"), std::string::npos)
      << error.error();
  // A skipped page has no sketch.
  const std::string short_page = R"({"url": "https://a.example/4", "body": "<p>hi</p>"})";
  FingerprintedRecord skipped =
      make_fingerprinted(f.process(short_page), "pages", 3, 7, 1, short_page);
  ASSERT_TRUE(skipped.result.skip);
  EXPECT_TRUE(check_fingerprinted(skipped, *f.config, f.scheme, 3));
  // Another scheme's page is left to processed_from (scheme_mismatch), a dead letter to itself.
  short_sketch.scheme = "s-00000000";
  EXPECT_TRUE(check_fingerprinted(short_sketch, *f.config, f.scheme, 3));
}

TEST(Fingerprinted, ASignatureCoversKeyHeadersAndValueAndOnlyTheKeyMakesIt) {
  const std::string key = "https://a.example/3";
  RecordHeaders headers = {{"crawler", "c1"}};
  const std::string value = "NDFP...";
  headers.emplace_back(kSignatureHeader, fingerprinted_signature("secret", &key, headers, value));
  EXPECT_EQ(headers.back().second.size(), 64u);
  EXPECT_TRUE(signature_matches("secret", &key, headers, value));
  EXPECT_FALSE(signature_matches("other secret", &key, headers, value));
  EXPECT_FALSE(signature_matches("secret", &key, headers, value + "x"));
  EXPECT_FALSE(signature_matches("secret", nullptr, headers, value));
  const std::string other_key = key + "/";
  EXPECT_FALSE(signature_matches("secret", &other_key, headers, value));
  RecordHeaders changed = headers;
  changed[0].second = "c2";
  EXPECT_FALSE(signature_matches("secret", &key, changed, value));
  RecordHeaders unsigned_headers = {{"crawler", "c1"}};
  EXPECT_FALSE(signature_matches("secret", &key, unsigned_headers, value));
  RecordHeaders twice = headers;
  twice.push_back(headers.back());
  EXPECT_FALSE(signature_matches("secret", &key, twice, value));
}

}  // namespace
}  // namespace neardup
