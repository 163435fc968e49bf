// Round trips of the pending verdicts and relations, and rejection of malformed bytes.
#include "store/verdict_records.h"

#include <gtest/gtest.h>

#include <vector>

namespace neardup::records {
namespace {

TEST(Records, VerdictRoundTripsWithSimilarityRoundedToFourDecimals) {
  Verdict v;
  v.status = Verdict::Status::kDuplicate;
  v.matched = "m";
  v.duplicate_of = "first";
  v.distance = 9;
  v.method = Verdict::kMinHash;
  v.similarity = 0.73456;
  std::uint64_t digest = 0;
  auto back = decode_verdict(encode_verdict(v, 0xfeed), &digest);
  ASSERT_TRUE(back);
  EXPECT_EQ(digest, 0xfeedu);
  EXPECT_EQ(back->status, v.status);
  EXPECT_EQ(back->matched, "m");
  EXPECT_EQ(back->duplicate_of, "first");
  EXPECT_EQ(back->distance, 9);
  EXPECT_EQ(back->method, Verdict::kMinHash);
  EXPECT_DOUBLE_EQ(back->similarity, 0.7346);
  Verdict skipped{.status = Verdict::Status::kSkipped, .reason = "low_content"};
  auto s = decode_verdict(encode_verdict(skipped, 1));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->reason, "low_content");
  EXPECT_EQ(s->similarity, -1);
  EXPECT_FALSE(decode_verdict(encode_verdict(v, 1) + "x"));  // trailing bytes
  EXPECT_FALSE(decode_verdict("\x09"));
  // Version 4 stored no digest: it reads as unknown.
  std::string v4 = encode_verdict(skipped, 0);
  v4.resize(v4.size() - 8);
  digest = 7;
  ASSERT_TRUE(decode_verdict(v4, &digest));
  EXPECT_EQ(digest, 0u);
}

TEST(Records, AFinishedPagesVerdictKeepsItsFingerprintAndDroppedLines) {
  Verdict v{.status = Verdict::Status::kUnique};
  v.fingerprint = 0x0123456789abcdefull;
  v.boilerplate_lines = {2, 300, 70000};
  for (bool with_passages : {false, true}) {
    if (with_passages) v.paragraphs = 4;
    const std::string bytes = encode_verdict(v, 42);
    auto back = decode_verdict(bytes);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->fingerprint, v.fingerprint);
    EXPECT_EQ(back->boilerplate_lines, v.boilerplate_lines);
    EXPECT_EQ(back->paragraphs, v.paragraphs);
    Verdict unfinished = v;
    unfinished.fingerprint.reset();
    const std::size_t section = encode_verdict(unfinished, 42).size();  // where it begins
    for (std::size_t cut = section + 1; cut < bytes.size(); ++cut) {
      EXPECT_FALSE(decode_verdict(bytes.substr(0, cut))) << cut;
    }
  }
  EXPECT_FALSE(decode_verdict(encode_verdict(Verdict{}, 1)).value().fingerprint);  // none: none
}

TEST(Records, VerdictsWithPassagesRoundTripAndTheirRelationsToo) {
  Verdict v{.status = Verdict::Status::kUnique};
  v.contained_in = {"article", 0.81234};
  v.contains = {"teaser", 1.0};
  v.paragraphs = 12;
  v.paragraphs_seen = 3;
  v.paragraphs_from = {"a", "b"};
  v.paragraphs_seen_at = {0, 4, 7};
  std::uint64_t digest = 0;
  auto back = decode_verdict(encode_verdict(v, 42), &digest);
  ASSERT_TRUE(back);
  EXPECT_EQ(digest, 42u);
  EXPECT_EQ(back->contained_in.id, "article");
  EXPECT_DOUBLE_EQ(back->contained_in.share, 0.8123);
  EXPECT_EQ(back->contains.id, "teaser");
  EXPECT_DOUBLE_EQ(back->contains.share, 1.0);
  EXPECT_EQ(back->paragraphs, 12u);
  EXPECT_EQ(back->paragraphs_seen, 3u);
  EXPECT_EQ(back->paragraphs_from, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(back->paragraphs_seen_at, (std::vector<std::uint16_t>{0, 4, 7}));
  // Without passages nothing is added (a version-6 reader's form): 5 bytes, three empty
  // strings, the digest.
  EXPECT_EQ(encode_verdict(Verdict{}, 1).size(), 5 + 3 * 4 + 8u);
  std::string bad = encode_verdict(v, 42);
  ASSERT_EQ(bad[5 + 3 * 4 + 8], 1);
  bad[5 + 3 * 4 + 8] = 9;  // an unknown section
  EXPECT_FALSE(decode_verdict(bad));
  EXPECT_FALSE(decode_verdict(encode_verdict(v, 42).substr(0, 30)));

  records::Relations r{.contained_in = 7,
                       .contains = 0,
                       .contained_share = 8123,
                       .paragraphs = 12,
                       .paragraphs_seen = 3,
                       .paragraphs_from = {5, 6}};
  auto relations = records::Relations::decode(r.encode());
  ASSERT_TRUE(relations);
  EXPECT_EQ(*relations, r);
  EXPECT_FALSE(records::Relations::decode(r.encode() + "x"));
  EXPECT_FALSE(records::Relations::decode(r.encode().substr(1)));
  EXPECT_TRUE(records::Relations{}.empty());
  EXPECT_EQ(records::decode_keys(records::encode_keys({1, 2, ~0ull})),
            (std::vector<std::uint64_t>{1, 2, ~0ull}));
  EXPECT_FALSE(records::decode_keys("1234567"));
}

TEST(Records, PendingKeysSortByPartitionThenOffsetAndEntriesRoundTrip) {
  EXPECT_LT(pending_key("p/0", -1), pending_key("p/0", 0));
  EXPECT_LT(pending_key("p/0", 255), pending_key("p/0", 256));
  EXPECT_TRUE(pending_key("p/1", 7).starts_with(pending_prefix("p/1")));
  std::string record;
  append_pending_entry(record, 10, "ten");
  append_pending_entry(record, 11, "");
  std::vector<std::pair<std::int64_t, std::string>> seen;
  EXPECT_TRUE(for_each_pending_entry(
      record, [&](std::int64_t o, std::string_view v) { seen.emplace_back(o, std::string(v)); }));
  EXPECT_EQ(seen, (std::vector<std::pair<std::int64_t, std::string>>{{10, "ten"}, {11, ""}}));
  EXPECT_FALSE(for_each_pending_entry(record.substr(0, record.size() - 1),
                                      [](std::int64_t, std::string_view) {}));
}

}  // namespace
}  // namespace neardup::records
