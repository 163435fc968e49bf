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

TEST(Records, MetaStatesRoundTrip) {
  ColumnState c{.watermark = 99, .next_run = 4, .runs = {{1, 100}, {3, 20}}};
  EXPECT_EQ(ColumnState::decode(c.encode()), c);
  EXPECT_FALSE(ColumnState::decode(c.encode().substr(1)));
  SchemeState s{.number = 2, .hashes = 128, .bands = 42, .rows = 3};
  EXPECT_EQ(SchemeState::decode(s.encode()), s);
  EXPECT_FALSE(SchemeState::decode(SchemeState{0, 16, 42, 3}.encode()));  // bands x rows > hashes
  // Wide band keys: a fifth u32, 1, written only when set; any other value, or on a scheme
  // without sketches, refused.
  SchemeState w = s;
  w.wide_bands = true;
  EXPECT_EQ(SchemeState::decode(w.encode()), w);
  EXPECT_EQ(w.encode().size(), s.encode().size() + 4);
  std::string two = s.encode();
  coding::put_fixed32(two, 2);
  EXPECT_FALSE(SchemeState::decode(two));
  EXPECT_FALSE(SchemeState::decode(SchemeState{.number = 1, .wide_bands = true}.encode()));
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
  // A scheme of wide band keys keeps the upper values after the high bits, u16 little-endian.
  const std::vector<std::uint16_t> upper = {7, 0x8001, 0, 0xffff};
  const std::string high = encode_sketch_high(sketch, upper);
  EXPECT_EQ(high.size(), 12u);
  std::vector<std::uint16_t> joined_upper = {1};
  EXPECT_EQ(join_sketch(*decode_sketch(low, 4), high, &joined_upper), sketch);
  EXPECT_EQ(joined_upper, upper);
  EXPECT_EQ(join_sketch(*decode_sketch(low, 4), encode_sketch_high(sketch), &joined_upper), sketch);
  EXPECT_TRUE(joined_upper.empty());
  EXPECT_FALSE(join_sketch(*decode_sketch(low, 4), high.substr(1)));  // half an upper value
  // Those of the values its bands hold alone (the first bands x rows).
  EXPECT_EQ(join_sketch(*decode_sketch(low, 4), encode_sketch_high(sketch, {upper.data(), 2}),
                        &joined_upper),
            sketch);
  EXPECT_EQ(joined_upper, (std::vector<std::uint16_t>{7, 0x8001}));
  EXPECT_FALSE(join_sketch(*decode_sketch(low, 4), high + "xy"));  // more than a value each
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
