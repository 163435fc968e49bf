#include "cli/line_reader.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace neardup::cli {
namespace {

class LineReaderTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("line_reader_test_" + std::to_string(::getpid()) + "_" + name))
        .string();
  }
  std::string write_plain(const std::string& name, const std::string& data) {
    std::string p = path(name);
    std::ofstream(p, std::ios::binary) << data;
    created_.push_back(p);
    return p;
  }
  std::string write_gzip(const std::string& name, const std::string& data) {
    std::string p = path(name);
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
    gzclose(f);
    created_.push_back(p);
    return p;
  }
  std::vector<std::string> read_all(const std::string& p, bool* gzipped = nullptr,
                                    std::string* error = nullptr) {
    auto reader = LineReader::open(p);
    EXPECT_TRUE(reader) << reader.error();
    std::vector<std::string> lines;
    std::string line;
    while ((*reader)->next(line)) lines.push_back(line);
    if (gzipped) *gzipped = (*reader)->gzipped();
    if (error) *error = (*reader)->error();
    return lines;
  }
  void TearDown() override {
    for (const auto& p : created_) std::filesystem::remove(p);
  }
  std::vector<std::string> created_;
};

TEST_F(LineReaderTest, ReadsPlainAndGzipInputAlikeWhateverTheFileIsCalled) {
  const std::string data = "{\"url\":\"a\"}\n\n{\"url\":\"b\"}\nlast line without newline";
  bool plain_gz = true, gz_gz = false;
  auto plain = read_all(write_plain("pages.jsonl.gz", data), &plain_gz);
  auto gz = read_all(write_gzip("pages.jsonl", data), &gz_gz);
  EXPECT_EQ(plain, (std::vector<std::string>{"{\"url\":\"a\"}", "", "{\"url\":\"b\"}",
                                             "last line without newline"}));
  EXPECT_EQ(gz, plain);
  EXPECT_FALSE(plain_gz);
  EXPECT_TRUE(gz_gz);
}

TEST_F(LineReaderTest, ReadsLinesLongerThanItsBuffer) {
  const std::string long_line(3 << 20, 'x');
  auto lines = read_all(write_gzip("long", "a\n" + long_line + "\nb\n"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], long_line);
  EXPECT_EQ(lines[2], "b");
}

TEST_F(LineReaderTest, ALineOverTheBoundIsReadPastToItsNewlineAndToldByItsLength) {
  const std::string data = "a\n" + std::string(5000, 'x') + "\nb\n" + std::string(1000, 'y') +
                           "\n" + std::string(3 << 20, 'z');  // the last without '\n'
  for (const std::string& p : {write_plain("bound-plain", data), write_gzip("bound-gz", data)}) {
    auto reader = LineReader::open(p, 1000);
    ASSERT_TRUE(reader) << reader.error();
    std::vector<std::string> lines;  // each line as its first byte and size, and over_long()
    std::string line;
    while ((*reader)->next(line)) {
      lines.push_back(line.substr(0, 1) + std::to_string(line.size()) + " over " +
                      std::to_string((*reader)->over_long()));
    }
    EXPECT_EQ((*reader)->error(), "");
    EXPECT_EQ(lines, (std::vector<std::string>{"a1 over 0", "0 over 5000", "b1 over 0",
                                               "y1000 over 0", "0 over 3145728"}))
        << p;
  }
}

// A gzip stream of a few MB that holds a line of 4 GiB: it is read past in bounded memory
// (the reader holds at most the bound and one read's worth of bytes).
TEST_F(LineReaderTest, AGzipBombLineIsReadPastInBoundedMemory) {
  const std::string p = path("bomb.gz");
  created_.push_back(p);
  {
    // Concatenated gzip members read as one stream: one member of 1 MiB of 'x', written 4096
    // times, makes the line without holding it.
    z_stream zs{};
    ASSERT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY), Z_OK);
    std::string mib(1 << 20, 'x');
    std::string member(deflateBound(&zs, mib.size()), '\0');
    zs.next_in = reinterpret_cast<Bytef*>(mib.data());
    zs.avail_in = static_cast<uInt>(mib.size());
    zs.next_out = reinterpret_cast<Bytef*>(member.data());
    zs.avail_out = static_cast<uInt>(member.size());
    ASSERT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
    member.resize(zs.total_out);
    deflateEnd(&zs);
    {
      std::ofstream out(p, std::ios::binary);
      for (int i = 0; i < 4096; ++i) out << member;
    }
    gzFile tail = gzopen(p.c_str(), "ab");
    ASSERT_NE(tail, nullptr);
    gzputs(tail, "\n{\"url\":\"after\"}\n");
    gzclose(tail);
  }
  struct rusage before {};
  ::getrusage(RUSAGE_SELF, &before);
  auto reader = LineReader::open(p, 1 << 20);
  ASSERT_TRUE(reader) << reader.error();
  std::string line;
  ASSERT_TRUE((*reader)->next(line));
  EXPECT_EQ(line, "");
  EXPECT_EQ((*reader)->over_long(), std::uint64_t{4096} << 20);
  ASSERT_TRUE((*reader)->next(line));
  EXPECT_EQ(line, "{\"url\":\"after\"}");
  EXPECT_EQ((*reader)->over_long(), 0u);
  EXPECT_FALSE((*reader)->next(line));
  EXPECT_EQ((*reader)->error(), "");
  struct rusage after {};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss, before.ru_maxrss + 64 * 1024)
      << "max RSS grew by " << (after.ru_maxrss - before.ru_maxrss) << " KiB";
}

TEST_F(LineReaderTest, ATruncatedGzipStreamIsAnError) {
  std::string full = write_gzip("full", std::string(100000, 'y') + "\n");
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string error;
  read_all(write_plain("cut", bytes.substr(0, bytes.size() / 2)), nullptr, &error);
  EXPECT_NE(error.find("cut"), std::string::npos) << error;
}

TEST_F(LineReaderTest, KnowsAFilesSizeAndHowMuchOfItWasRead) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"url\":\"https://a.example/" + std::to_string(i) + "\"}\n";
  for (const std::string& file : {write_plain("plain", text), write_gzip("gz", text)}) {
    auto reader = LineReader::open(file);
    ASSERT_TRUE(reader) << reader.error();
    const auto size = (*reader)->size();
    ASSERT_TRUE(size);
    EXPECT_EQ(*size, std::filesystem::file_size(file));
    std::string line;
    ASSERT_TRUE((*reader)->next(line));
    EXPECT_LE((*reader)->position(), *size);
    while ((*reader)->next(line)) {
    }
    EXPECT_EQ((*reader)->position(), *size) << file;
  }
}

TEST_F(LineReaderTest, AMissingFileIsNamed) {
  auto reader = LineReader::open(path("missing"));
  ASSERT_FALSE(reader);
  EXPECT_NE(reader.error().find("missing: cannot open for reading: No such file"), std::string::npos)
      << reader.error();
}

std::string first_line_of(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

TEST(DescribeInput, NamesWhatTheInputLooksLike) {
  EXPECT_NE(describe_input("\x28\xb5\x2f\xfd....", first_line_of("\x28\xb5\x2f\xfd...."), "url").find("zstd"), std::string::npos);
  EXPECT_NE(describe_input("BZh91AY", first_line_of("BZh91AY"), "url").find("bzip2"), std::string::npos);
  EXPECT_NE(describe_input("<!doctype html><html>", first_line_of("<!doctype html><html>"), "url").find("HTML"), std::string::npos);
  EXPECT_NE(describe_input("[{\"url\": 1}]", first_line_of("[{\"url\": 1}]"), "url").find("JSON array"), std::string::npos);
  EXPECT_NE(describe_input("{\n  \"url\": 1\n}", first_line_of("{\n  \"url\": 1\n}"), "url").find("pretty-printed"), std::string::npos);
  EXPECT_EQ(describe_input("{\"link\":\"x\",\"html\":\"y\"}\n", first_line_of("{\"link\":\"x\",\"html\":\"y\"}\n"), "url"),
            "JSON objects with the fields html, link but no \"url\" (name the page's fields in "
            "--config: input.fields.url, input.fields.body)");
  EXPECT_NE(describe_input(std::string("\x00\x01\x02\x03\x04garbage", 12), first_line_of(std::string("\x00\x01\x02\x03\x04garbage", 12)), "url").find("binary"),
            std::string::npos);
  // The first line is judged whole, even when it is longer than the head.
  const std::string long_line = "{\"link\":\"x\",\"html\":\"" + std::string(10000, 'y') + "\"}";
  EXPECT_EQ(describe_input(long_line.substr(0, 4096), long_line, "url"),
            "JSON objects with the fields html, link but no \"url\" (name the page's fields in "
            "--config: input.fields.url, input.fields.body)");
  EXPECT_EQ(describe_input("url,body\nhttps://a,<p>x\n", first_line_of("url,body\nhttps://a,<p>x\n"), "url"),
            "text that is not JSON (first line: \"url,body\")");
}

TEST(DescribeMissingBody, NamesTheFieldThatLooksLikeHtml) {
  EXPECT_EQ(describe_missing_body(R"({"url":"https://a.example/","html":"<!DOCTYPE html><html>x"})",
                                  "body", "body_base64"),
            "JSON objects with the fields html, url but no \"body\" or \"body_base64\" (html looks "
            "like HTML: set input.fields.body: html in --config)");
}

TEST(DescribeMissingBody, NamesAFieldThatLooksLikeBase64) {
  const std::string record =
      R"({"url":"u","content":")" + std::string(80, 'Q') + R"(=="})";
  EXPECT_NE(describe_missing_body(record, "body", "body_base64")
                ->find("content looks like base64: set input.fields.body_base64: content"),
            std::string::npos);
}

TEST(DescribeMissingBody, SaysWhatToSetWhenNoFieldLooksLikeABody) {
  EXPECT_NE(describe_missing_body(R"({"url":"u","title":"x"})", "body", "body_base64")
                ->find("name the page's body field in --config"),
            std::string::npos);
}

TEST(DescribeMissingBody, IsEmptyWhenEitherBodyFieldIsThereEvenEmpty) {
  EXPECT_FALSE(describe_missing_body(R"({"url":"u","body":""})", "body", "body_base64"));
  EXPECT_FALSE(describe_missing_body(R"({"url":"u","b64":"eA=="})", "body", "b64"));
  EXPECT_FALSE(describe_missing_body("not json", "body", "body_base64"));
}

}  // namespace
}  // namespace neardup::cli
