// Round trips of every record the store writes, and rejection of malformed bytes.
#include "store/records.h"

#include <gtest/gtest.h>

#include <bit>
#include <vector>

#include "common/coding.h"

namespace neardup::records {
namespace {

TEST(Coding, FixedWidthIntegersAreLittleEndianOnEveryMachine) {
  std::string out;
  coding::put_fixed32(out, 0x01020304);
  coding::put_fixed64(out, 0x0102030405060708ull);
  coding::put_fixed16(out, 0x0a0b);
  EXPECT_EQ(out, std::string("\x04\x03\x02\x01\x08\x07\x06\x05\x04\x03\x02\x01\x0b\x0a", 14));
  EXPECT_EQ(coding::decode_fixed32(out.data()), 0x01020304u);
  EXPECT_EQ(coding::decode_fixed64(out.data() + 4), 0x0102030405060708ull);
  EXPECT_EQ(coding::be64_key(0x0102030405060708ull), "\x01\x02\x03\x04\x05\x06\x07\x08");
  EXPECT_EQ(coding::decode_be64("\x01\x02\x03\x04\x05\x06\x07\x08"), 0x0102030405060708ull);
  char forty[5];
  coding::encode_fixed40(forty, 0xff0102030405ull);  // the low 40 bits
  EXPECT_EQ(std::string(forty, 5), std::string("\x05\x04\x03\x02\x01", 5));
  EXPECT_EQ(coding::decode_fixed40(forty), 0x0102030405ull);
}

TEST(Coding, ByteReaderFailsInsteadOfReadingPastTheEnd) {
  coding::ByteReader in(std::string_view("\x01\x02\x03", 3));
  EXPECT_EQ(in.u16(), 0x0201);
  EXPECT_EQ(in.u32(), 0u);  // only one byte left
  EXPECT_FALSE(in.ok());
  EXPECT_EQ(in.u8(), 0u);  // and it stays failed
  coding::ByteReader lengths(std::string_view("\xff\xff\xff\x7f" "ab", 6));
  EXPECT_TRUE(lengths.length_prefixed().empty());
  EXPECT_FALSE(lengths.ok());
}

TEST(Coding, VarintsRoundTripAndRejectOverlongOrTruncatedBytes) {
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, 1ull << 35, ~0ull}) {
    std::string out;
    coding::put_varint64(out, v);
    EXPECT_EQ(out.size(), v == 0 ? 1u : (std::bit_width(v) + 6) / 7) << v;
    coding::ByteReader in(out);
    EXPECT_EQ(in.varint64(), v);
    EXPECT_TRUE(in.done());
    coding::ByteReader cut(std::string_view(out).substr(0, out.size() - 1));
    cut.varint64();
    EXPECT_FALSE(cut.ok()) << v;
  }
  const std::string eleven = std::string(10, '\x80') + '\x01';
  coding::ByteReader overlong(eleven);
  overlong.varint64();
  EXPECT_FALSE(overlong.ok());
  const std::string wide = std::string(9, '\xff') + '\x02';
  coding::ByteReader past_64_bits(wide);
  past_64_bits.varint64();
  EXPECT_FALSE(past_64_bits.ok());
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1}, INT64_MIN, INT64_MAX}) {
    EXPECT_EQ(coding::unzigzag(coding::zigzag(v)), v);
  }
  EXPECT_EQ(coding::zigzag(-1), 1u);
  EXPECT_EQ(coding::zigzag(1), 2u);
}

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

  records::Relations r{.contained_in = 7, .contains = 0, .contained_share = 8123,
                       .paragraphs = 12, .paragraphs_seen = 3, .paragraphs_from = {5, 6}};
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
  EXPECT_TRUE(for_each_pending_entry(record, [&](std::int64_t o, std::string_view v) {
    seen.emplace_back(o, std::string(v));
  }));
  EXPECT_EQ(seen, (std::vector<std::pair<std::int64_t, std::string>>{{10, "ten"}, {11, ""}}));
  EXPECT_FALSE(for_each_pending_entry(record.substr(0, record.size() - 1),
                                      [](std::int64_t, std::string_view) {}));
}

TEST(Records, MetaStatesRoundTrip) {
  ColumnState c{.watermark = 99, .next_run = 4, .runs = {{1, 100}, {3, 20}}};
  EXPECT_EQ(ColumnState::decode(c.encode()), c);
  EXPECT_FALSE(ColumnState::decode(c.encode().substr(1)));
  SchemeState s{.number = 2, .hashes = 128, .bands = 42, .rows = 3};
  EXPECT_EQ(SchemeState::decode(s.encode()), s);
  EXPECT_FALSE(SchemeState::decode(SchemeState{0, 16, 42, 3}.encode()));  // bands x rows > hashes
  DesignState d{3, 1, 4};
  EXPECT_EQ(DesignState::decode(d.encode()), d);
  KeyBits bits{.tables = 64, .ids = 40};
  EXPECT_EQ(KeyBits::decode(bits.encode()), bits);
  EXPECT_EQ(KeyBits::decode(KeyBits{.tables = 50}.encode()), (KeyBits{.tables = 50}));
  EXPECT_FALSE(KeyBits::decode(KeyBits{.tables = 39}.encode()));  // 40 to 64 only
  EXPECT_FALSE(KeyBits::decode(KeyBits{.ids = 65}.encode()));
  EXPECT_FALSE(KeyBits::decode(bits.encode().substr(4)));
  EXPECT_EQ(decode_u64(encode_u64(1ull << 40)), 1ull << 40);
  EXPECT_FALSE(decode_u32("abc"));
}

TEST(Records, SketchesKeepTheirLowBitsAndTheHighBitsJoinThem) {
  const std::vector<std::uint16_t> sketch = {0, 1, 0xffff, 0x1234};
  const std::string low = encode_sketch(sketch);
  EXPECT_EQ(low.size(), 4u);  // a byte a value
  EXPECT_EQ(decode_sketch(low, 4), (std::vector<std::uint16_t>{0, 1, 0xff, 0x34}));
  EXPECT_EQ(join_sketch(*decode_sketch(low, 4), encode_sketch_high(sketch)), sketch);
  EXPECT_FALSE(join_sketch(*decode_sketch(low, 4), "abc"));  // lengths differ
  // A store of version 5 kept all 16 bits of each value, u16 little-endian: read whole.
  std::string whole;
  for (std::uint16_t v : sketch) coding::put_fixed16(whole, v);
  EXPECT_TRUE(whole_sketch(whole, 4));
  EXPECT_FALSE(whole_sketch(low, 4));
  EXPECT_EQ(decode_sketch(whole, 4), sketch);
  EXPECT_FALSE(decode_sketch("odd", 4));  // neither 4 nor 8 bytes
  EXPECT_FALSE(decode_sketch(low, 3));
  // Keys sort by scheme, then document.
  EXPECT_LT(sketch_high_key(0, 1ull << 40), sketch_high_key(1, 0));
  EXPECT_LT(sketch_high_key(1, 255), sketch_high_key(1, 256));
  EXPECT_EQ(sketch_high_key(1, 2).size(), 12u);
}

}  // namespace
}  // namespace neardup::records
