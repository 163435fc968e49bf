#include "warc/warc_reader.h"

#include <brotli/encode.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace neardup::warc {
namespace {

using Kind = WarcEntry::Kind;

std::string record(std::string_view type, std::string_view block,
                   std::string_view uri = "http://a.example/", std::string_view extra = "") {
  std::string out = "WARC/1.1\r\nWARC-Type: " + std::string(type) +
                    "\r\nWARC-Record-ID: <urn:uuid:0000-" + std::string(type) + ">\r\n" +
                    "WARC-Date: 2026-01-02T03:04:05.250Z\r\nWARC-Target-URI: " + std::string(uri) +
                    "\r\n" + std::string(extra) +
                    "Content-Length: " + std::to_string(block.size()) + "\r\n\r\n";
  return out + std::string(block) + "\r\n\r\n";
}

std::string http(std::string_view status, std::string_view headers, std::string_view body) {
  return "HTTP/1.1 " + std::string(status) + "\r\n" + std::string(headers) + "\r\n" +
         std::string(body);
}

std::string html(std::string_view text) {
  return "<html><body><p>" + std::string(text) + "</p></body></html>";
}

// One gzip member (window_bits 31), or a raw deflate stream (-15).
std::string deflate_bytes(std::string_view data, int window_bits) {
  z_stream zs{};
  EXPECT_EQ(::deflateInit2(&zs, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(::deflateBound(&zs, data.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = data.size();
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = out.size();
  EXPECT_EQ(::deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  ::deflateEnd(&zs);
  return out;
}
std::string gzip(std::string_view data) { return deflate_bytes(data, 31); }

class WarcReaderTest : public ::testing::Test {
 protected:
  std::string write(const std::string& bytes) {
    paths_.push_back(
        (std::filesystem::temp_directory_path() /
         ("warc_reader_test_" + std::to_string(::getpid()) + "_" + std::to_string(paths_.size())))
            .string());
    std::ofstream(paths_.back(), std::ios::binary) << bytes;
    return paths_.back();
  }
  std::vector<WarcEntry> read_all(const std::string& bytes) {
    auto reader = WarcReader::open(write(bytes));
    EXPECT_TRUE(reader.has_value()) << reader.error();
    std::vector<WarcEntry> entries;
    if (!reader) return entries;
    WarcEntry entry;
    while ((*reader)->next(entry)) entries.push_back(entry);
    return entries;
  }
  void TearDown() override {
    for (const auto& path : paths_) std::filesystem::remove(path);
  }
  std::vector<std::string> paths_;
};

std::string kinds(const std::vector<WarcEntry>& entries) {
  std::string out;
  for (const auto& entry : entries) {
    if (!out.empty()) out += ' ';
    switch (entry.kind) {
      case Kind::kPage:
        out += "page";
        break;
      case Kind::kPassedOver:
        out += "over:" + entry.reason;
        break;
      case Kind::kSkipped:
        out += "skip:" + entry.reason;
        break;
      case Kind::kCorrupt:
        out += "corrupt@" + std::to_string(entry.where.offset);
        break;
    }
  }
  return out;
}

TEST_F(WarcReaderTest, UncompressedFileGivesPagesAndAccountsForEveryOtherRecord) {
  const std::string warcinfo = record("warcinfo", "software: test\r\n");
  const std::string request = record("request", "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n");
  const std::string page =
      record("response", http("200 OK", "Content-Type: text/html; charset=utf-8\r\n", html("one")));
  const std::string missing =
      record("response", http("404 Not Found", "Content-Type: text/html\r\n", "gone"));
  const std::string image =
      record("response", http("200 OK", "Content-Type: image/png\r\n", "\x89PNG"));
  const std::string dns =
      record("response", "20260102030405\nexample.com. 300 IN A 10.0.0.1\n", "dns:example.com");
  const std::string revisit = record("revisit", http("200 OK", "Content-Type: text/html\r\n", ""));
  const auto entries = read_all(warcinfo + request + page + missing + image + dns + revisit);
  EXPECT_EQ(kinds(entries),
            "over:warcinfo over:request page skip:status_404 skip:not_html skip:not_http "
            "over:revisit");
  const WarcEntry& first = entries[2];
  EXPECT_EQ(first.where.offset, warcinfo.size() + request.size());
  EXPECT_EQ(first.page.target_uri, "http://a.example/");
  EXPECT_EQ(first.page.record_id, "urn:uuid:0000-response");
  EXPECT_EQ(first.page.date, "2026-01-02T03:04:05.250Z");
  EXPECT_EQ(first.page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(first.page.body, html("one"));
  EXPECT_EQ(entries[3].where.offset, first.where.offset + page.size());
}

TEST_F(WarcReaderTest, PerRecordGzipMembersGiveTheMemberOffsets) {
  const std::string a = gzip(record("warcinfo", "software: test\r\n"));
  const std::string b =
      gzip(record("response", http("200 OK", "Content-Type: text/html\r\n", html("two")),
                  "<http://b.example/>"));
  const auto entries = read_all(a + b);
  ASSERT_EQ(kinds(entries), "over:warcinfo page");
  EXPECT_EQ(entries[1].where.offset, a.size());
  EXPECT_EQ(entries[1].where.in_member, 0u);
  EXPECT_EQ(describe(entries[1].where), "offset " + std::to_string(a.size()));
  EXPECT_EQ(entries[1].page.target_uri, "http://b.example/");  // WARC 1.0 draft brackets removed
  EXPECT_EQ(entries[1].page.body, html("two"));
}

TEST_F(WarcReaderTest, WholeFileGzipGivesDecompressedPositionsInTheMember) {
  const std::string info = record("warcinfo", "software: test\r\n");
  const auto entries = read_all(gzip(info + record("response", http("200 OK", "", html("three")))));
  ASSERT_EQ(kinds(entries), "over:warcinfo page");
  EXPECT_EQ(entries[1].where.offset, 0u);
  EXPECT_EQ(entries[1].where.in_member, info.size());
  EXPECT_EQ(describe(entries[1].where),
            "offset 0 (+" + std::to_string(info.size()) + " decompressed)");
  EXPECT_EQ(entries[1].page.content_type, "");  // no Content-Type: left to the pipeline
}

TEST_F(WarcReaderTest, TransferAndContentCodingsAreUndone) {
  const std::string body = html("four, compressed and chunked");
  const std::string gz = gzip(body);
  const std::string chunked = "a\r\n" + gz.substr(0, 10) + "\r\n" +
                              [&] {
                                char hex[16];
                                std::snprintf(hex, sizeof hex, "%zx", gz.size() - 10);
                                return std::string(hex);
                              }() +
                              ";ext=1\r\n" + gz.substr(10) + "\r\n0\r\n\r\n";
  std::string br(BrotliEncoderMaxCompressedSize(body.size()), '\0');
  std::size_t br_size = br.size();
  ASSERT_TRUE(BrotliEncoderCompress(5, 22, BROTLI_MODE_TEXT, body.size(),
                                    reinterpret_cast<const std::uint8_t*>(body.data()), &br_size,
                                    reinterpret_cast<std::uint8_t*>(br.data())));
  br.resize(br_size);
  const auto entries = read_all(
      record("response",
             http("200 OK", "Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n", chunked)) +
      record("response",
             http("200 OK", "Content-Encoding: deflate\r\n", deflate_bytes(body, -15))) +
      record("response", http("200 OK", "Content-Encoding: deflate\r\n", deflate_bytes(body, 15))) +
      record("response", http("200 OK", "Content-Encoding: br\r\n", br)) +
      // stored de-chunked with the header kept: read as it is
      record("response", http("200 OK", "Transfer-Encoding: chunked\r\n", body)) +
      record("response", http("200 OK", "Content-Encoding: zstd\r\n", "x")) +
      record("response", http("200 OK", "Content-Encoding: gzip\r\n", "not gzip")));
  ASSERT_EQ(kinds(entries), "page page page page page skip:unsupported_encoding skip:bad_encoding");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(entries[i].page.body, body) << i;
}

TEST_F(WarcReaderTest, DamagedGzipMemberIsReportedAndTheNextMembersAreRead) {
  const std::string a = gzip(record("response", http("200 OK", "", html("first"))));
  std::string b =
      gzip(record("response", http("200 OK", "", html("second page, damaged in the middle"))));
  const std::string c = gzip(record("response", http("200 OK", "", html("third"))));
  b[b.size() / 2] ^= 0x55;
  const auto entries = read_all(a + b + c);
  ASSERT_EQ(kinds(entries), "page corrupt@" + std::to_string(a.size()) + " page");
  EXPECT_NE(entries[1].reason.find("damaged gzip member"), std::string::npos) << entries[1].reason;
  EXPECT_EQ(entries[2].where.offset, a.size() + b.size());
  EXPECT_EQ(entries[2].page.body, html("third"));
}

TEST_F(WarcReaderTest, TruncatedGzipFileReportsTheCutMember) {
  const std::string a = gzip(record("response", http("200 OK", "", html("first"))));
  const std::string b = gzip(record("response", http("200 OK", "", html("second"))));
  const auto entries = read_all(a + b.substr(0, b.size() / 2));
  ASSERT_EQ(kinds(entries), "page corrupt@" + std::to_string(a.size()));
  EXPECT_NE(entries[1].reason.find("truncated"), std::string::npos) << entries[1].reason;
}

TEST_F(WarcReaderTest, WholeFileGzipCutShortKeepsTheRecordsBeforeTheCut) {
  std::string records;
  for (int i = 0; i < 50; ++i) {
    records += record("response", http("200 OK", "", html("page " + std::to_string(i))));
  }
  const std::string whole = gzip(records);
  const auto entries = read_all(whole.substr(0, whole.size() * 3 / 4));
  ASSERT_GE(entries.size(), 2u);
  EXPECT_EQ(entries.back().kind, Kind::kCorrupt);
  EXPECT_EQ(entries.back().where.offset, 0u);
  EXPECT_NE(entries.back().reason.find("truncated"), std::string::npos) << entries.back().reason;
  for (std::size_t i = 0; i + 1 < entries.size(); ++i) {
    ASSERT_EQ(entries[i].kind, Kind::kPage) << i;
    EXPECT_EQ(entries[i].page.body, html("page " + std::to_string(i)));
  }
}

TEST_F(WarcReaderTest, RecordCutShortIsReportedAndTheNextRecordIsRead) {
  const std::string a = record("response", http("200 OK", "", html("first")));
  const std::string cut = record("response", http("200 OK", "", html("second, cut short")));
  const std::string c = record("response", http("200 OK", "", html("third")));
  const auto entries = read_all(a + cut.substr(0, cut.size() - 20) + c + c);
  ASSERT_EQ(kinds(entries), "page corrupt@" + std::to_string(a.size()) + " page page");
  EXPECT_NE(entries[1].reason.find("Content-Length"), std::string::npos) << entries[1].reason;
  EXPECT_EQ(entries[2].where.offset, a.size() + cut.size() - 20);
}

TEST_F(WarcReaderTest, FileEndingInsideARecordReportsTruncation) {
  const std::string a = record("response", http("200 OK", "", html("first")));
  const std::string b = record("response", http("200 OK", "", html("second")));
  const auto entries = read_all(a + b.substr(0, b.size() / 2));
  ASSERT_EQ(kinds(entries), "page corrupt@" + std::to_string(a.size()));
  EXPECT_NE(entries[1].reason.find("truncated"), std::string::npos);
}

TEST_F(WarcReaderTest, GarbledHeaderIsReportedAndReadingResumesAtTheNextRecord) {
  const std::string a = record("response", http("200 OK", "", html("first")));
  std::string b = record("response", http("200 OK", "", html("second")));
  b.replace(b.find("Content-Length"), 14, "Content-Lenxth");
  const std::string c = record("warcinfo", "x: y\r\n");
  const auto entries = read_all(a + b + c);
  ASSERT_EQ(kinds(entries), "page corrupt@" + std::to_string(a.size()) + " over:warcinfo");
  EXPECT_EQ(entries[2].where.offset, a.size() + b.size());
}

TEST_F(WarcReaderTest, SegmentedAndOversizedResponsesAreSkipped) {
  const std::string big =
      "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: " + std::to_string(kMaxBlockBytes + 1) +
      "\r\n\r\n" + std::string(kMaxBlockBytes + 1, 'x') + "\r\n\r\n";
  const auto entries = read_all(record("response", http("200 OK", "", html("x")),
                                       "http://a.example/", "WARC-Segment-Number: 1\r\n") +
                                big + record("response", http("200 OK", "", html("after"))));
  ASSERT_EQ(kinds(entries), "skip:segmented skip:too_large page");
}

TEST_F(WarcReaderTest, BlockDigestMismatchIsReportedAndTheNextRecordIsRead) {
  // SHA-1 of "abc": base32 as warcio, wget and Common Crawl write it, and hex.
  const std::string base32 = "WARC-Block-Digest: sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5\r\n";
  const std::string hex = "WARC-Block-Digest: sha1:a9993e364706816aba3e25717850c26c9cd0d89d\r\n";
  const std::string good = record("response", "abc", "http://a.example/", base32);
  const std::string damaged = record("response", "abd", "http://a.example/", base32);
  const auto entries =
      read_all(good + damaged + record("response", "abd", "http://a.example/", hex) +
               record("response", "abc", "http://a.example/", hex));
  ASSERT_EQ(kinds(entries), "skip:not_http corrupt@" + std::to_string(good.size()) + " corrupt@" +
                                std::to_string(good.size() + damaged.size()) + " skip:not_http");
  EXPECT_NE(entries[1].reason.find("does not match the block"), std::string::npos)
      << entries[1].reason;
}

TEST_F(WarcReaderTest, FileThatIsNotWarcIsRefusedAtOpen) {
  auto reader = WarcReader::open(write("{\"url\": \"http://a.example/\"}\n"));
  ASSERT_FALSE(reader.has_value());
  EXPECT_NE(reader.error().find("not a WARC file (it starts with \"{\"url\""), std::string::npos)
      << reader.error();
  auto gzipped = WarcReader::open(write(gzip("{\"url\": 1}\n")));
  ASSERT_FALSE(gzipped.has_value());
  EXPECT_NE(gzipped.error().find("gzip-compressed"), std::string::npos) << gzipped.error();
  EXPECT_FALSE(WarcReader::open("/nonexistent/x.warc").has_value());
}

// A block of 60 MiB of empty header lines (":\n") is skipped without holding one entry per
// line: the HTTP header block is read to 64 KiB and 512 fields at most.
TEST_F(WarcReaderTest, AnEndlessHttpHeaderBlockIsSkippedInBoundedMemory) {
  std::string block = "HTTP/1.1 200 OK\r\n";
  block.reserve(60 << 20);
  while (block.size() < (60u << 20)) block += ":\n";
  const std::string path =
      write(record("response", block) + record("response", http("200 OK", "", html("after"))));
  block = std::string();
  // In a child, so that the peak is this reading's alone.
  EXPECT_EXIT(
      {
        struct rusage before {};
        ::getrusage(RUSAGE_SELF, &before);
        auto reader = WarcReader::open(path);
        std::string kinds_seen;
        WarcEntry entry;
        while (reader && (*reader)->next(entry)) {
          kinds_seen += entry.kind == Kind::kPage ? "page " : entry.reason + " ";
        }
        struct rusage after {};
        ::getrusage(RUSAGE_SELF, &after);
        const long grew_mib = (after.ru_maxrss - before.ru_maxrss) / 1024;
        std::fprintf(stderr, "%sgrew %ld MiB\n", kinds_seen.c_str(), grew_mib);
        std::exit(kinds_seen == "headers_too_large page " && grew_mib < 300 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "headers_too_large page grew");
}

TEST(ReadHttpResponse, TheHeaderBlockIsReadTo64KiBAnd512FieldsAtMost) {
  WarcPage page;
  std::string many;
  for (int i = 0; i < 512; ++i) many += "X-" + std::to_string(i) + ": y\r\n";
  EXPECT_EQ(read_http_response("HTTP/1.1 200 OK\r\n" + many + "\r\n<p>x</p>", page), std::nullopt);
  EXPECT_EQ(read_http_response("HTTP/1.1 200 OK\r\n" + many + "X: z\r\n\r\n<p>x</p>", page),
            "headers_too_large");
  const std::string long_field = "X: " + std::string(64 << 10, 'v') + "\r\n";
  EXPECT_EQ(read_http_response("HTTP/1.1 200 OK\r\n" + long_field + "\r\n<p>x</p>", page),
            "headers_too_large");
}

TEST(ReadHttpResponse, StatusLineWithoutReasonAndBadHeadersAreTold) {
  WarcPage page;
  EXPECT_EQ(read_http_response("HTTP/1.1 200\r\n\r\n<p>x</p>", page), std::nullopt);
  EXPECT_EQ(page.body, "<p>x</p>");
  EXPECT_EQ(read_http_response("HTTP/1.1 301 Moved\r\nLocation: /\r\n\r\n", page), "status_301");
  EXPECT_EQ(read_http_response("HTTP/1.1 OK\r\n\r\n", page), "bad_http");
  EXPECT_EQ(read_http_response("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n", page), "bad_http");
  EXPECT_EQ(
      read_http_response("HTTP/1.1 200 OK\r\ncontent-type: Application/XHTML+xml\r\n\r\n", page),
      std::nullopt);
}

}  // namespace
}  // namespace neardup::warc
