// Round trips of the documents' records and blocks, and rejection of malformed bytes.
#include "store/doc_records.h"

#include <gtest/gtest.h>

#include <vector>

#include "store/verdict.h"

namespace neardup::records {
namespace {

void expect_same(const DocRecord& a, const DocRecord& b) {
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.cluster, b.cluster);
  EXPECT_EQ(a.first_seen_ms, b.first_seen_ms);
  EXPECT_EQ(a.matched, b.matched);
  EXPECT_EQ(a.scheme, b.scheme);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.distance, b.distance);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.method, b.method);
  EXPECT_EQ(a.similarity, b.similarity);
  EXPECT_EQ(a.stored_at_s, b.stored_at_s);
  EXPECT_EQ(a.anchors, b.anchors);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.sketch, b.sketch);
}

DocRecord duplicate_record() {
  return DocRecord{.fingerprint = 0x9f3a0c1d22e4b807,
                   .cluster = 12,
                   .first_seen_ms = -5,
                   .matched = 11,
                   .scheme = 3,
                   .status = 1,
                   .distance = 2,
                   .flags = DocRecord::kSuperseded,
                   .method = Verdict::kBoth,
                   .similarity = 8125,
                   .stored_at_s = 1700000000,
                   .anchors = 513,
                   .id = "https://a.example/1"};
}

TEST(Records, WideDocRecordRoundTrips) {
  const DocRecord r = duplicate_record();
  const std::string bytes = r.encode_wide();
  EXPECT_EQ(bytes.size(), 48 + r.id.size());
  EXPECT_EQ(r.encode(40, 41), bytes);  // documents before compact_from keep the wide form
  auto back = DocRecord::decode(bytes, 40, 41);
  ASSERT_TRUE(back);
  expect_same(*back, r);
  EXPECT_FALSE(DocRecord::decode_wide(bytes.substr(0, 47)));
  std::string bad = bytes;
  bad[36] = 7;  // no such status
  EXPECT_FALSE(DocRecord::decode_wide(bad));
}

TEST(Records, CompactDocRecordRoundTripsEveryField) {
  std::vector<std::pair<std::uint64_t, DocRecord>> cases;
  cases.emplace_back(40, duplicate_record());
  DocRecord with_sketch = duplicate_record();
  with_sketch.sketch = std::string(128, '\x5a');
  cases.emplace_back(41, with_sketch);
  DocRecord unique{.fingerprint = 1,
                   .cluster = 7,
                   .first_seen_ms = 1700000000123,
                   .scheme = 0,
                   .stored_at_s = 1700000001,
                   .id = "p00001"};
  cases.emplace_back(7, unique);
  DocRecord extremes = duplicate_record();
  extremes.first_seen_ms = INT64_MIN;
  extremes.cluster = ~0ull;  // a cluster after the document: allowed, if never written
  extremes.matched = 1;
  extremes.scheme = UINT32_MAX;
  extremes.flags = DocRecord::kSuperseded | DocRecord::kForgotten | DocRecord::kUnindexed;
  extremes.anchors = 0xffff;
  extremes.similarity = 0;
  extremes.stored_at_s = UINT32_MAX;
  extremes.id = "";
  cases.emplace_back(1ull << 40, extremes);
  extremes.first_seen_ms = INT64_MAX;
  cases.emplace_back(2, extremes);
  for (std::string_view id : {"http://x", "https://x", "http://www.x", "https://www.x",
                              "https://www.", "ftp://x", "HTTP://x", "http:/x"}) {
    DocRecord r = unique;
    r.id = id;
    cases.emplace_back(9, r);
  }
  for (const auto& [doc, r] : cases) {
    const std::string bytes = r.encode(doc, doc);
    EXPECT_EQ(bytes, r.encode_compact(doc));
    auto back = DocRecord::decode(bytes, doc, 1);
    ASSERT_TRUE(back) << r.id;
    expect_same(*back, r);
  }
}

// A unique page of a crawl, document `doc`: its first-seen time minutes before it is stored,
// its id the benchmark's (store_bench).
DocRecord crawled_page(std::uint64_t doc, const char* number) {
  return DocRecord{.fingerprint = 0x0123456789abcdef,
                   .cluster = doc,
                   .first_seen_ms = 1700000000000 - 300000,
                   .stored_at_s = 1700000000,
                   .id = std::string("https://www.example.com/articles/") + number};
}

TEST(Records, CompactDocRecordIsSmallAndDropsTheIdsSchemePrefix) {
  const DocRecord r = crawled_page(1000000, "000000000123");
  const std::string bytes = r.encode_compact(1000000);
  // 2 flag bytes, 8 fingerprint, 1 cluster, 3 first seen, 1 scheme, 4 stored at, the id less
  // "https://www." (12 bytes): 19 + 33, against 48 + 45 wide.
  EXPECT_EQ(bytes.size(), 19u + 33u);
  EXPECT_EQ(r.encode_wide().size(), 93u);
  EXPECT_EQ(bytes.substr(19), "example.com/articles/000000000123");
  for (std::size_t cut = 0; cut < 19; ++cut) {
    EXPECT_FALSE(DocRecord::decode_compact(bytes.substr(0, cut), 1000000)) << cut;
  }
}

TEST(Records, CompactDocRecordRefusesBadFlagsAndCodes) {
  const DocRecord r = duplicate_record();
  const std::string bytes = r.encode_compact(40);
  ASSERT_TRUE(DocRecord::decode_compact(bytes, 40));
  std::string bad = bytes;
  bad[0] = static_cast<char>((bad[0] & ~0x07) | 5);  // no id prefix 5
  EXPECT_FALSE(DocRecord::decode_compact(bad, 40));
  bad = bytes;
  bad[1] = static_cast<char>(bad[1] | 0x80);  // a sketch flagged: its length is the id's bytes
  EXPECT_FALSE(DocRecord::decode_compact(bad, 40));
  // Matched flagged, and its varint (zigzag 40 after the one-byte cluster at offset 10) naming
  // document 0, which is "none": refused.
  DocRecord no_match = r;
  no_match.matched = 0;
  bad = no_match.encode_compact(40);
  bad[0] = static_cast<char>(bad[0] | 0x10);
  bad.insert(bad.begin() + 11, static_cast<char>(80));
  EXPECT_FALSE(DocRecord::decode_compact(bad, 40));
  bad[11] = static_cast<char>(78);  // document 1: read
  ASSERT_TRUE(DocRecord::decode_compact(bad, 40));
  EXPECT_EQ(DocRecord::decode_compact(bad, 40)->matched, 1u);
}

TEST(Records, ABlocksLaterRecordsAreCodedAgainstItsFirst) {
  const DocRecord first = crawled_page(100, "000000000100");
  DocRecord next = crawled_page(101, "000000000101");
  next.stored_at_s = 1700000002;
  const std::string alone = next.encode_compact(101);
  const std::string relative = next.encode_compact(101, &first);
  // The time: a one-byte difference for 4 bytes; the id: a byte for the 32 it shares.
  EXPECT_EQ(alone.size() - relative.size(), 3u + 32u - 1u);
  auto back = DocRecord::decode_compact(relative, 101, &first);
  ASSERT_TRUE(back);
  expect_same(*back, next);
  // Against another base the bytes read as another record, or fail: never silently alike.
  DocRecord other = first;
  other.id = "https://www.e";
  EXPECT_FALSE(DocRecord::decode_compact(relative, 101, &other));  // shares past its id
  // Whatever the two ids and times, the pair round-trips: prefixes of either scheme, an id
  // that is the base's prefix or extends it, times before the base's.
  const std::vector<std::string> ids = {"",
                                        "https://www.a.example/x",
                                        "https://www.a.example/xy",
                                        "http://a.example/x",
                                        "https://www.a",
                                        "ftp://a.example/x",
                                        "https://www.b.example/"};
  for (const std::string& a : ids) {
    for (const std::string& b : ids) {
      DocRecord base = duplicate_record(), r = duplicate_record();
      base.id = a;
      r.id = b;
      r.stored_at_s = 5;
      base.stored_at_s = UINT32_MAX;
      auto decoded = DocRecord::decode_compact(r.encode_compact(40, &base), 40, &base);
      ASSERT_TRUE(decoded) << a << " " << b;
      expect_same(*decoded, r);
    }
  }
}

TEST(Records, DocBlocksRoundTripAndReadOneRecordAlone) {
  std::vector<DocRecord> block;
  for (int i = 0; i < 40; ++i) {
    DocRecord r = duplicate_record();
    r.id =
        "https://www.example.com/" + std::string(i % 3 == 0 ? "news/" : "a/") + std::to_string(i);
    r.stored_at_s = 1700000000 + i * 7 - 100;
    r.sketch = i % 2 == 0 ? std::string(128, static_cast<char>(i)) : std::string();
    r.cluster = 1000 + i;
    r.matched = 900;
    block.push_back(r);
  }
  const std::string bytes = records::DocBlock::encode(block, 1000);
  EXPECT_EQ(records::DocBlock::count(bytes), 40u);
  auto all = records::DocBlock::decode(bytes, 1000);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), block.size());
  for (std::size_t i = 0; i < block.size(); ++i) {
    expect_same((*all)[i], block[i]);
    auto one = records::DocBlock::decode_one(bytes, 1000, 1000 + i);
    ASSERT_TRUE(one) << i;
    expect_same(*one, block[i]);
  }
  EXPECT_FALSE(records::DocBlock::decode_one(bytes, 1000, 999));
  EXPECT_FALSE(records::DocBlock::decode_one(bytes, 1000, 1040));
  // Cut anywhere, or with a byte more, a block does not decode whole.
  for (std::size_t cut = 0; cut < bytes.size(); cut += 7) {
    EXPECT_FALSE(records::DocBlock::decode(bytes.substr(0, cut), 1000)) << cut;
  }
  EXPECT_FALSE(records::DocBlock::decode(bytes + "x", 1000));
  EXPECT_FALSE(records::DocBlock::count(""));
  EXPECT_FALSE(records::DocBlock::decode_one(bytes.substr(0, bytes.size() / 2), 1000, 1039));
}

}  // namespace
}  // namespace neardup::records
