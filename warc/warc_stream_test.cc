#include "warc/warc_stream.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "warc/test_gzip.h"

namespace neardup::warc {
namespace {

// Text of about `size` bytes that says which part it is, so that a misplaced byte shows.
std::string part(char name, std::size_t size = 5000) {
  std::string text;
  for (int i = 0; text.size() < size; ++i) text += std::string(1, name) + std::to_string(i) + " ";
  return text;
}

class WarcStreamTest : public ::testing::Test {
 protected:
  std::unique_ptr<WarcStream> open(const std::string& bytes) {
    paths_.push_back(
        (std::filesystem::temp_directory_path() /
         ("warc_stream_test_" + std::to_string(::getpid()) + "_" + std::to_string(paths_.size())))
            .string());
    std::ofstream(paths_.back(), std::ios::binary) << bytes;
    auto stream = WarcStream::open(paths_.back());
    EXPECT_TRUE(stream.has_value()) << stream.error();
    return stream ? std::move(*stream) : nullptr;
  }
  // Fills to the end of the file, with the cursor left where it is; the drops on the way.
  static std::vector<WarcStream::Drop> fill_all(WarcStream& stream) {
    std::vector<WarcStream::Drop> drops;
    while (stream.fill()) {
      if (auto drop = stream.take_drop()) drops.push_back(*drop);
    }
    return drops;
  }
  void TearDown() override {
    for (const auto& path : paths_) std::filesystem::remove(path);
  }
  std::vector<std::string> paths_;
};

TEST_F(WarcStreamTest, AnUncompressedFileIsItsOwnBytesAtItsOwnOffsets) {
  const std::string bytes = part('a', 3 << 20);  // more than one read
  auto stream = open(bytes);
  ASSERT_NE(stream, nullptr);
  EXPECT_FALSE(stream->gzip());
  EXPECT_TRUE(fill_all(*stream).empty());
  EXPECT_TRUE(stream->at_eof());
  EXPECT_EQ(stream->window(), bytes);
  EXPECT_EQ(stream->position(), bytes.size());
  EXPECT_EQ(stream->offset_of(12345).offset, 12345u);
  EXPECT_EQ(stream->offset_of(12345).in_member, 0u);
  EXPECT_FALSE(stream->take_damage(UINT64_MAX).has_value());
}

TEST_F(WarcStreamTest, GzipMembersAreKnownByWhereTheirOutputStarts) {
  const std::string a = part('a'), b = part('b'), c = part('c');
  const std::string ga = gzip(a), gb = gzip(b), gc = gzip(c);
  auto stream = open(ga + gb + gc);
  ASSERT_NE(stream, nullptr);
  EXPECT_TRUE(stream->gzip());
  EXPECT_TRUE(fill_all(*stream).empty());
  EXPECT_EQ(stream->window(), a + b + c);
  EXPECT_TRUE(stream->starts_member(0));
  EXPECT_TRUE(stream->starts_member(a.size()));
  EXPECT_FALSE(stream->starts_member(a.size() + 1));
  EXPECT_EQ(stream->member_end(0), a.size());
  EXPECT_EQ(stream->member_end(a.size() + 7), a.size() + b.size());
  EXPECT_EQ(stream->member_end(a.size() + b.size()), stream->end());  // the last one
  const WarcOffset in_b = stream->offset_of(a.size() + 7);
  EXPECT_EQ(in_b.offset, ga.size());
  EXPECT_EQ(in_b.in_member, 7u);
  EXPECT_EQ(describe(in_b), "offset " + std::to_string(ga.size()) + " (+7 decompressed)");
}

TEST_F(WarcStreamTest, ADamagedMemberIsDroppedAndReadingResumesAtTheNextOne) {
  const std::string a = part('a'), b = part('b'), c = part('c');
  const std::string ga = gzip(a), gc = gzip(c);
  std::string gb = gzip(b);
  gb[gb.size() / 2] ^= 0x55;
  auto stream = open(ga + gb + gc);
  ASSERT_NE(stream, nullptr);
  const std::vector<WarcStream::Drop> drops = fill_all(*stream);
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_EQ(drops[0].out_start, a.size());
  EXPECT_EQ(drops[0].keep_to, a.size());  // the cursor is before it: none of it is kept
  EXPECT_EQ(stream->window(), a + c);
  EXPECT_TRUE(stream->starts_member(a.size()));  // c's output starts where b's did
  EXPECT_EQ(stream->offset_of(a.size()).offset, ga.size() + gb.size());
  // The damage comes after the bytes before it.
  EXPECT_FALSE(stream->take_damage(a.size() - 1).has_value());
  const auto damage = stream->take_damage(a.size());
  ASSERT_TRUE(damage.has_value());
  EXPECT_EQ(damage->at, a.size());
  EXPECT_EQ(damage->offset, ga.size());
  EXPECT_NE(damage->reason.find("damaged gzip member"), std::string::npos) << damage->reason;
  EXPECT_NE(
      damage->reason.find("reading resumes at offset " + std::to_string(ga.size() + gb.size())),
      std::string::npos)
      << damage->reason;
  EXPECT_FALSE(stream->take_damage(UINT64_MAX).has_value());
}

TEST_F(WarcStreamTest, OutputReadPastBeforeTheDamageIsKept) {
  // One member: the part read past (the cursor) stays, the rest of the member goes.
  const std::string a = part('a', 1 << 20);
  std::string ga = gzip(a);
  ga[ga.size() * 3 / 4] ^= 0x55;
  auto stream = open(ga);
  ASSERT_NE(stream, nullptr);
  ASSERT_TRUE(stream->fill());
  const std::size_t cursor = stream->window().size();
  ASSERT_GT(cursor, 0u);
  stream->set_pos(cursor);
  const std::vector<WarcStream::Drop> drops = fill_all(*stream);
  ASSERT_EQ(drops.size(), 1u);
  EXPECT_EQ(drops[0].out_start, 0u);
  EXPECT_EQ(drops[0].keep_to, cursor);
  EXPECT_EQ(stream->end(), cursor);
  const auto damage = stream->take_damage(UINT64_MAX);
  ASSERT_TRUE(damage.has_value());
  EXPECT_NE(damage->reason.find("no gzip member follows"), std::string::npos) << damage->reason;
}

TEST_F(WarcStreamTest, BytesThatAreNotAGzipMemberArePassedOver) {
  const std::string a = part('a'), b = part('b');
  const std::string ga = gzip(a), gb = gzip(b);
  auto stream = open(ga + "garbage" + gb);
  ASSERT_NE(stream, nullptr);
  EXPECT_TRUE(fill_all(*stream).empty());
  EXPECT_EQ(stream->window(), a + b);
  const auto damage = stream->take_damage(UINT64_MAX);
  ASSERT_TRUE(damage.has_value());
  EXPECT_EQ(damage->at, a.size());
  EXPECT_EQ(damage->offset, ga.size());
  EXPECT_EQ(damage->reason, "7 bytes that are not a gzip member");
}

TEST_F(WarcStreamTest, RewindReadsTheSameBytesAgainWithTheDamageAsItWas) {
  const std::string a = part('a'), b = part('b'), c = part('c');
  std::string gb = gzip(b);
  gb[gb.size() / 2] ^= 0x55;
  const std::string files[] = {a + b + c, gzip(a) + gb + gzip(c)};
  const std::string expected[] = {a + b + c, a + c};
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i == 0 ? "uncompressed" : "per-member gzip, one member damaged");
    auto stream = open(files[i]);
    ASSERT_NE(stream, nullptr);
    while (stream->window().size() < 100 && stream->fill()) {
    }
    stream->set_pos(100);
    auto mark = stream->mark();
    const std::size_t drops = fill_all(*stream).size();
    EXPECT_EQ(drops, i == 0 ? 0u : 1u);
    stream->set_pos(stream->window().size());
    stream->rewind(*mark);
    EXPECT_EQ(stream->here(), 100u);
    EXPECT_EQ(fill_all(*stream).size(), drops);  // found again, once
    EXPECT_EQ(std::string(stream->window().substr(stream->pos())), expected[i].substr(100));
    int damage = 0;
    while (stream->take_damage(UINT64_MAX)) ++damage;
    EXPECT_EQ(damage, i == 0 ? 0 : 1);
  }
}

TEST_F(WarcStreamTest, AFileThatShrinksEndsWhereItNowEnds) {
  const std::string bytes = part('a', 3 << 20);
  auto stream = open(bytes);
  ASSERT_NE(stream, nullptr);
  ASSERT_TRUE(stream->fill());
  ASSERT_EQ(::truncate(paths_.back().c_str(), 1 << 20), 0);
  fill_all(*stream);
  EXPECT_EQ(stream->size(), std::uint64_t{1} << 20);
  EXPECT_EQ(stream->window(), bytes.substr(0, 1 << 20));
  const auto damage = stream->take_damage(UINT64_MAX);
  ASSERT_TRUE(damage.has_value());
  EXPECT_EQ(damage->at, std::uint64_t{1} << 20);
  EXPECT_NE(damage->reason.find("shrank"), std::string::npos) << damage->reason;
}

TEST_F(WarcStreamTest, OpenNamesTheFileAndWhatIsWrong) {
  auto missing = WarcStream::open("/nonexistent/x.warc");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().find("/nonexistent/x.warc: cannot open"), std::string::npos);
  auto directory = WarcStream::open(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(directory.has_value());
  EXPECT_NE(directory.error().find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace neardup::warc
