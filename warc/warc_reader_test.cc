#include "warc/warc_reader.h"

#include <brotli/encode.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "warc/record_block.h"
#include "warc/test_gzip.h"

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

// The record with its Content-Length replaced by `claimed` (its block left as it is).
std::string claiming(std::string record, std::uint64_t claimed) {
  const std::size_t at = record.find("Content-Length: ") + 16;
  return record.replace(at, record.find('\r', at) - at, std::to_string(claimed));
}

// Response record number `i`, an HTML page of about `size` bytes that says its number.
std::string page_record(int i, std::size_t size = 600) {
  std::string text = "page " + std::to_string(i) + " ";
  while (text.size() < size) text += "lorem ipsum dolor sit amet " + std::to_string(i) + " ";
  return record("response", http("200 OK", "Content-Type: text/html\r\n", html(text)),
                "http://a.example/" + std::to_string(i));
}

// The three ways a WARC file is laid out, and where each record starts in it (for gzip, the
// offset of the member it starts in).
enum class Layout { kUncompressed, kPerRecordGzip, kWholeFileGzip };
constexpr Layout kLayouts[] = {Layout::kUncompressed, Layout::kPerRecordGzip,
                               Layout::kWholeFileGzip};
struct LaidOut {
  std::string bytes;
  std::vector<std::uint64_t> offsets;
};
LaidOut lay_out(const std::vector<std::string>& records, Layout layout, int level = 6) {
  LaidOut out;
  for (const std::string& r : records) {
    out.offsets.push_back(layout == Layout::kWholeFileGzip ? 0 : out.bytes.size());
    out.bytes += layout == Layout::kPerRecordGzip ? gzip(r, level) : r;
  }
  if (layout == Layout::kWholeFileGzip) out.bytes = gzip(out.bytes, level);
  return out;
}
const char* name(Layout layout) {
  return layout == Layout::kUncompressed    ? "uncompressed"
         : layout == Layout::kPerRecordGzip ? "per-record gzip"
                                            : "whole-file gzip";
}

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

// The page numbers of the pages read (page_record), and the offsets of the damage reports.
struct Outcome {
  std::vector<int> pages;
  std::vector<std::uint64_t> damage;
};
Outcome outcome_of(const std::vector<WarcEntry>& entries) {
  Outcome out;
  for (const WarcEntry& entry : entries) {
    if (entry.kind == Kind::kPage) {
      out.pages.push_back(std::stoi(entry.page.body.substr(entry.page.body.find("page ") + 5)));
    } else if (entry.kind == Kind::kCorrupt) {
      out.damage.push_back(entry.where.offset);
    }
  }
  return out;
}
std::vector<int> numbers(int from, int to) {
  std::vector<int> out;
  for (int i = from; i < to; ++i) out.push_back(i);
  return out;
}

// A record whose Content-Length claims more than the rest of the file (60 MiB, within
// kMaxBlockBytes, and 100 MiB, over it): it is reported, and every record after it is read.
TEST_F(WarcReaderTest, ALengthPastTheEndOfTheFileLosesOnlyItsOwnRecord) {
  for (const std::uint64_t lie : {std::uint64_t{60} << 20, std::uint64_t{100} << 20}) {
    std::vector<std::string> records = {page_record(0), claiming(page_record(1), lie)};
    for (int i = 2; i < 2002; ++i) records.push_back(page_record(i));
    for (const Layout layout : kLayouts) {
      const LaidOut file = lay_out(records, layout);
      const auto entries = read_all(file.bytes);
      const Outcome got = outcome_of(entries);
      std::vector<int> want = numbers(2, 2002);
      want.insert(want.begin(), 0);
      EXPECT_EQ(got.pages.size(), want.size()) << name(layout) << ", a lie of " << lie;
      EXPECT_TRUE(got.pages == want) << name(layout) << ", a lie of " << lie;
      EXPECT_EQ(got.damage, std::vector<std::uint64_t>{file.offsets[1]})
          << name(layout) << ", a lie of " << lie;
      const auto liar = std::find_if(entries.begin(), entries.end(),
                                     [](const WarcEntry& e) { return e.kind == Kind::kCorrupt; });
      ASSERT_NE(liar, entries.end());
      EXPECT_NE(liar->reason.find(std::to_string(lie)), std::string::npos) << liar->reason;
    }
  }
}

// Lies whose claimed end lands inside the records after them: 100 MiB (passed over without
// being held, then found wrong) with a 60 MiB one (held, then found wrong) among the records it
// covers. Every record after each is read.
TEST_F(WarcReaderTest, ALengthEndingInsideTheRecordsAfterItLosesOnlyItsOwnRecord) {
  std::vector<std::string> records = {claiming(page_record(0), std::uint64_t{100} << 20)};
  std::size_t bytes = 0;
  int i = 1;
  for (; bytes < (30u << 20); ++i) bytes += records.emplace_back(page_record(i, 4000)).size();
  const std::size_t second_liar = records.size();
  records.push_back(claiming(page_record(i++, 4000), std::uint64_t{60} << 20));
  for (; bytes < (110u << 20); ++i) bytes += records.emplace_back(page_record(i, 4000)).size();
  const int last = i;
  for (const Layout layout : kLayouts) {
    const LaidOut file = lay_out(records, layout, 1);
    const Outcome got = outcome_of(read_all(file.bytes));
    std::vector<int> want = numbers(1, last);
    want.erase(want.begin() + static_cast<std::ptrdiff_t>(second_liar) - 1);
    EXPECT_EQ(got.pages.size(), want.size()) << name(layout);
    EXPECT_TRUE(got.pages == want) << name(layout);
    EXPECT_EQ(got.damage, (std::vector<std::uint64_t>{file.offsets[0], file.offsets[second_liar]}))
        << name(layout);
  }
}

// A wrong length that ends on the CRLF CRLF ending another record's HTTP header is not a record
// boundary: the next record must follow it.
TEST_F(WarcReaderTest, ALengthEndingOnCrLfCrLfThatNoRecordFollowsIsNotTrusted) {
  const std::string a = page_record(1);
  const std::string b = page_record(2);
  const std::string c = page_record(3);
  // a's claimed block ends where b's HTTP header ends: "\r\n\r\n<html>..." follows.
  const std::size_t b_http_end = a.size() + b.find("\r\n\r\n<html>");
  const std::size_t a_block = a.find("\r\n\r\nHTTP/") + 4;
  const std::string liar = claiming(a, b_http_end - a_block);
  for (const Layout layout : {Layout::kUncompressed, Layout::kWholeFileGzip}) {
    const LaidOut file = lay_out({liar, b, c}, layout);
    const Outcome got = outcome_of(read_all(file.bytes));
    EXPECT_EQ(got.pages, (std::vector<int>{2, 3})) << name(layout);
    EXPECT_EQ(got.damage, std::vector<std::uint64_t>{0}) << name(layout);
  }
}

// Per-record gzip: a record that starts a member ends in it when the next member starts a
// record; one that is continued in the next member (as in a file gzipped in blocks) is read.
TEST_F(WarcReaderTest, ARecordThatStartsAGzipMemberMustEndInItUnlessItIsContinued) {
  const std::string a = gzip(page_record(1));
  const std::string liar = gzip(claiming(page_record(2), page_record(2).size()));
  const std::string c = gzip(page_record(3));
  const std::string split = page_record(4);
  const std::string halves = gzip(split.substr(0, 300)) + gzip(split.substr(300));
  const auto entries = read_all(a + liar + c + halves + c);
  EXPECT_EQ(outcome_of(entries).pages, (std::vector<int>{1, 3, 4, 3}));
  ASSERT_EQ(outcome_of(entries).damage, std::vector<std::uint64_t>{a.size()});
  EXPECT_NE(entries[1].reason.find("gzip member"), std::string::npos) << entries[1].reason;
}

TEST_F(WarcReaderTest, OversizedRecordsArePassedOverInEveryLayout) {
  const std::string big =
      "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: " + std::to_string(kMaxBlockBytes + 1) +
      "\r\n\r\n" + std::string(kMaxBlockBytes + 1, 'x') + "\r\n\r\n";
  for (const Layout layout : kLayouts) {
    const auto entries =
        read_all(lay_out({page_record(1), big, page_record(2), big}, layout, 1).bytes);
    EXPECT_EQ(kinds(entries), "page skip:too_large page skip:too_large") << name(layout);
  }
}

// The file is cut (ftruncate) while a reader is in the middle of it: what was cut is reported
// as damage, never a crash (SIGBUS when the file was mapped).
TEST_F(WarcReaderTest, AFileCutWhileBeingReadIsReportedNotACrash) {
  std::vector<std::string> records;
  for (int i = 0; i < 20000; ++i) records.push_back(page_record(i, 1000));
  for (const Layout layout : {Layout::kUncompressed, Layout::kPerRecordGzip}) {
    const std::string path = write(lay_out(records, layout, 1).bytes);
    auto reader = WarcReader::open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error();
    WarcEntry entry;
    for (int i = 0; i < 10; ++i) ASSERT_TRUE((*reader)->next(entry));
    const std::uint64_t cut_to = 4 << 20;
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut_to)), 0);
    std::vector<WarcEntry> rest;
    while ((*reader)->next(entry)) rest.push_back(entry);
    const Outcome got = outcome_of(rest);
    EXPECT_FALSE(got.damage.empty()) << name(layout);
    EXPECT_LT(got.pages.size(), records.size() - 10) << name(layout);
    const bool told = std::any_of(rest.begin(), rest.end(), [](const WarcEntry& e) {
      return e.kind == Kind::kCorrupt && e.reason.find("shrank") != std::string::npos;
    });
    EXPECT_TRUE(told) << name(layout);
    for (const std::uint64_t at : got.damage) EXPECT_LE(at, cut_to) << name(layout);
  }
}

// A block of 60 MiB of empty header lines (":\n") is skipped without holding one entry per
// line: the HTTP header block is read to 64 KiB and 512 fields at most.
TEST_F(WarcReaderTest, AnEndlessHttpHeaderBlockIsSkippedInBoundedMemory) {
  std::string block = "HTTP/1.1 200 OK\r\n";
  block.reserve(60 << 20);
  while (block.size() < (60u << 20)) block += ":\n";
  const std::string path = write(record("response", block) + page_record(1));
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
