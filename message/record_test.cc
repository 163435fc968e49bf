#include "message/record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace neardup {

TEST(Record, ReadsUrlBodyAndDefaultsIdToUrl) {
  auto page = parse_page(R"({"url":"https://a.example/1","body":"<p>hi</p>","x":1})", {});
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->url, "https://a.example/1");
  EXPECT_EQ(page->id, "https://a.example/1");
  EXPECT_EQ(page->body, "<p>hi</p>");
}

TEST(Record, DecodesBodyBase64ToRawBytes) {
  auto page = parse_page(R"({"url":"u","id":"p1","body_base64":"/+4="})", {});
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->id, "p1");
  EXPECT_EQ(page->body, "\xff\xee");
}

TEST(Record, RejectsNotJsonNotObjectMissingUrlBadBase64AndWrongTypes) {
  EXPECT_EQ(parse_page("{oops", {}).error().code, "not_json");
  EXPECT_EQ(parse_page("[1,2]", {}).error().code, "not_object");
  EXPECT_EQ(parse_page(R"({"body":"x"})", {}).error().code, "missing_url");
  EXPECT_EQ(parse_page(R"({"url":"u","body_base64":"***"})", {}).error().code, "invalid_base64");
  auto wrong = parse_page(R"({"url":"u","body":42})", {});
  EXPECT_EQ(wrong.error().code, "wrong_type");
  EXPECT_NE(wrong.error().detail.find("body"), std::string::npos);
  EXPECT_EQ(parse_page(R"({"url":"u","fetched_at":"yesterday"})", {}).error().code,
            "bad_fetched_at");
}

TEST(Record, MissingBodyIsAPageWithEmptyBodyNotAnError) {
  auto page = parse_page(R"({"url":"u"})", {});
  ASSERT_TRUE(page.has_value());
  EXPECT_TRUE(page->body.empty());
}

TEST(Record, HonoursConfiguredFieldNames) {
  InputConfig input;
  input.fields.url = "link";
  input.fields.body = "html";
  auto page = parse_page(R"({"link":"u","html":"b"})", input);
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->url, "u");
  EXPECT_EQ(page->body, "b");
}

TEST(Record, ParsesFetchedAtAsRfc3339OrEpochMillis) {
  EXPECT_EQ(parse_fetched_at("1970-01-01T00:00:01Z"), 1000);
  EXPECT_EQ(parse_fetched_at("2020-02-29T12:00:00.250+01:00"), 1582974000250);
  EXPECT_EQ(parse_fetched_at(1582974000250), 1582974000250);
  EXPECT_FALSE(parse_fetched_at("2020-02-29").has_value());
}

TEST(Record, OutputKeepsInputFieldsAndAddsNeardupField) {
  auto page = parse_page(R"({"url":"u","body":"b","extra":{"k":[1,2]}})", {});
  ASSERT_TRUE(page.has_value());
  Tag tag{.status = "duplicate", .fingerprint = "00000000000000ff", .scheme = "s-1",
          .duplicate_of = "a", .matched = "b", .distance = 2};
  auto out = nlohmann::json::parse(render_output(*page, tag, OutputConfig{}, InputFields{}));
  EXPECT_EQ(out["extra"]["k"][1], 2);
  EXPECT_EQ(out["body"], "b");
  EXPECT_EQ(out["neardup"]["status"], "duplicate");
  EXPECT_EQ(out["neardup"]["duplicate_of"], "a");
  EXPECT_EQ(out["neardup"]["distance"], 2);
}

TEST(Record, OutputIsTheInputsBytesWithTheTagInserted) {
  const std::string input = "{\"url\": \"u\",  \"z\": 1.50, \"a\": [1, 2],\n \"body\": \"b\"}  ";
  auto page = parse_page(input, {});
  ASSERT_TRUE(page.has_value());
  Tag tag{.status = "unique", .fingerprint = "00000000000000ff", .scheme = "s-1"};
  const std::string out = render_output(*page, tag, OutputConfig{}, InputFields{});
  EXPECT_EQ(out, "{\"url\": \"u\",  \"z\": 1.50, \"a\": [1, 2],\n \"body\": \"b\","
                 "\"neardup\":{\"fingerprint\":\"00000000000000ff\",\"scheme\":\"s-1\","
                 "\"status\":\"unique\"}}  ");
  EXPECT_EQ(nlohmann::json::parse(out)["neardup"]["status"], "unique");
}

TEST(Record, AnInputNeardupFieldIsReplacedNotRepeated) {
  auto page = parse_page(R"({"url":"u","neardup":{"status":"old"},"body":"b"})", {});
  ASSERT_TRUE(page.has_value());
  Tag tag{.status = "unique", .fingerprint = "00000000000000ff", .scheme = "s-1"};
  const std::string out = render_output(*page, tag, OutputConfig{}, InputFields{});
  EXPECT_EQ(out.find("\"neardup\""), out.rfind("\"neardup\""));  // one member of that name
  EXPECT_EQ(nlohmann::json::parse(out)["neardup"]["status"], "unique");
}

TEST(Record, IncludeBodyFalseDropsBodyFields) {
  auto page = parse_page(R"({"url":"u","body":"b"})", {});
  OutputConfig output;
  output.include_body = false;
  Tag tag{.status = "skipped", .reason = "low_content"};
  auto out = nlohmann::json::parse(render_output(*page, tag, output, InputFields{}));
  EXPECT_FALSE(out.contains("body"));
  EXPECT_EQ(out["neardup"]["reason"], "low_content");
  EXPECT_FALSE(out["neardup"].contains("duplicate_of"));
}

TEST(Record, TooLargePageIsOutputWithoutItsBody) {
  auto page = parse_page(R"({"url":"u","body":"big","extra":1})", {});
  ASSERT_TRUE(page.has_value());
  Tag tag{.status = "skipped", .reason = "too_large"};
  auto out = nlohmann::json::parse(render_output(*page, tag, OutputConfig{}, InputFields{}));
  EXPECT_FALSE(out.contains("body"));
  EXPECT_EQ(out["extra"], 1);
  EXPECT_EQ(out["neardup"]["reason"], "too_large");
  auto b64 = parse_page(R"({"url":"u","body_base64":"Ymln"})", {});
  ASSERT_TRUE(b64.has_value());
  out = nlohmann::json::parse(render_output(*b64, tag, OutputConfig{}, InputFields{}));
  EXPECT_FALSE(out.contains("body_base64"));
  Tag other{.status = "skipped", .reason = "low_content"};
  out = nlohmann::json::parse(render_output(*page, other, OutputConfig{}, InputFields{}));
  EXPECT_EQ(out["body"], "big");
}

}  // namespace neardup

namespace neardup {
namespace {

// A pass-through field nested 100,000 levels deep used to overflow the stack when the output
// was serialised (and crash again on every replay of the record).
TEST(Record, DeeplyNestedRecordIsADeadLetterNotACrash) {
  std::string record = R"({"url":"u","body":"<p>x</p>","x":)" + std::string(100000, '[') +
                       std::string(100000, ']') + "}";
  auto page = parse_page(record, {});
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().code, "too_deep");
  EXPECT_NE(page.error().detail.find("64"), std::string::npos);
}

TEST(Record, NestingUpToTheLimitIsAccepted) {
  const std::size_t inner = kMaxJsonDepth - 1;  // the record object itself is one level
  std::string record = R"({"url":"u","x":)" + std::string(inner, '[') + std::string(inner, ']') +
                       "}";
  EXPECT_TRUE(parse_page(record, {}).has_value());
  EXPECT_EQ(parse_page(R"({"url":"u","x":)" + std::string(inner + 1, '[') +
                           std::string(inner + 1, ']') + "}",
                       {})
                .error()
                .code,
            "too_deep");
}

TEST(Record, ObjectsCountTowardTheLimitLikeArrays) {
  auto nested = [](std::size_t levels) {  // the record object plus levels - 1 objects in it
    std::string text;
    for (std::size_t i = 1; i < levels; ++i) text += R"({"k":)";
    return R"({"url":"u","x":)" + text + "1" + std::string(levels - 1, '}') + "}";
  };
  EXPECT_TRUE(parse_page(nested(kMaxJsonDepth), {}).has_value());
  EXPECT_EQ(parse_page(nested(kMaxJsonDepth + 1), {}).error().code, "too_deep");
  EXPECT_EQ(parse_page(nested(kMaxJsonDepth + 3), {}).error().code, "too_deep");
}

TEST(Record, RepeatedMembersLastOneCountsAndBadJsonIsNamed) {
  auto page = parse_page(R"({"url":"first","url":"second","body":"b"})", {});
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->url, "second");
  auto utf8 = parse_page("{\"url\":\"u\",\"body\":\"\xff\"}", {});
  ASSERT_FALSE(utf8.has_value());
  EXPECT_EQ(utf8.error().code, "not_json");
  EXPECT_NE(utf8.error().detail.find("UTF-8"), std::string::npos) << utf8.error().detail;
  EXPECT_EQ(parse_page(R"({"url":"u","n":123456789012345678901234567890})", {}).error().code,
            "not_json");
  EXPECT_EQ(parse_page(R"({"url":"u"} {"url":"v"})", {}).error().code, "not_json");
  // The parse reads into the record's padding, never past the input's own bytes.
  const std::string text = R"({"url":"u","body":"<p>x</p>"})";
  auto exact = parse_page(std::string_view(text.data(), text.size()), {});
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->record, text);
}

TEST(Record, BracketsInsideStringsDoNotCount) {
  std::string brackets(1000, '[');
  // An escaped quote does not end the string.
  EXPECT_TRUE(json_depth_within(R"({"a":")" + brackets + R"(\")" + brackets + R"("})", 2));
  EXPECT_FALSE(json_depth_within("[[[", 2));
}

TEST(Record, RecordOverMaxRecordBytesIsRefusedUnread) {
  InputConfig input;
  input.max_record_bytes = 1024;
  auto page = parse_page(R"({"url":"u","body":")" + std::string(2000, 'a') + R"("})", input);
  ASSERT_FALSE(page.has_value());
  EXPECT_EQ(page.error().code, "record_too_large");
}

TEST(Record, FetchedAtOutOfRangeOrNotACalendarDateIsRefused) {
  for (const char* bad : {"1e308", "-1e308", "9007199254740993", "1.5", R"("2021-02-31T00:00:00Z")",
                          R"("2021-01-01T00:00:00+99:99")", R"("-999-01-01T00:00:00Z")",
                          R"("2021-1-01T00:00:00Z")", R"("2021-01-01T00:00:00+01")"}) {
    auto page = parse_page(std::string(R"({"url":"u","fetched_at":)") + bad + "}", {});
    ASSERT_FALSE(page.has_value()) << bad;
    EXPECT_EQ(page.error().code, "bad_fetched_at") << bad;
  }
  EXPECT_EQ(*parse_fetched_at(nlohmann::json::parse(R"("2024-02-29T12:00:00+01:30")")),
            1709202600000);
  EXPECT_EQ(*parse_fetched_at(nlohmann::json(1.7e12)), 1700000000000);
}

// The tag written directly is tag_to_json's text byte for byte, for every kind of tag and for
// strings that take the direct path and strings that do not (quotes, backslashes, controls,
// non-ASCII, invalid UTF-8), similarities of every kind included.
TEST(Record, TagTextIsTagToJsonsDump) {
  std::mt19937 rng(3);
  const std::vector<std::string> pieces = {"https://example.com/a?b=c&d",
                                           "p00001",
                                           "",
                                           "\"",
                                           "\\",
                                           "\n",
                                           "\x01",
                                           "\x7f",
                                           "\xc3\xa9",
                                           "\xe4\xb8\xad",
                                           "\xff",
                                           "\xc3",
                                           "/",
                                           "s-254f7b7c"};
  auto text = [&] {
    std::string s;
    const int n = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int i = 0; i < n; ++i) {
      s += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(rng)];
    }
    return s;
  };
  const std::vector<std::string> statuses = {"unique", "duplicate", "skipped"};
  const std::vector<double> similarities = {-1, 0, 1, 0.5, 0.9921875, 1.0 / 3, 1e-5, 0.1};
  int direct = 0;
  for (int i = 0; i < 20000; ++i) {
    Tag tag;
    tag.status = statuses[static_cast<std::size_t>(i) % statuses.size()];
    tag.fingerprint = i % 5 == 0 ? "" : "0123456789abcdef";
    tag.scheme = i % 7 == 0 ? text() : "s-254f7b7c";
    tag.duplicate_of = text();
    tag.matched = text();
    tag.distance = std::uniform_int_distribution<int>(0, 64)(rng);
    tag.method = i % 3 == 0 ? "" : "both";
    tag.similarity = similarities[static_cast<std::size_t>(i) % similarities.size()];
    tag.reason = i % 4 == 0 ? text() : "";
    tag.charset = i % 6 == 0 ? "" : "utf-8";
    tag.charset_source = i % 6 == 0 ? "" : (i % 11 == 0 ? text() : "meta");
    if (i % 5 == 1) tag.contained_in = {text(), similarities[static_cast<std::size_t>(i / 5) % 8]};
    if (i % 9 == 2) tag.contains = {text(), 0.75};
    if (i % 4 == 1) {
      tag.paragraphs = static_cast<std::uint32_t>(i % 13);
      tag.paragraphs_seen = tag.paragraphs / 2;
      for (std::uint32_t p = 0; p < tag.paragraphs_seen % 3; ++p) tag.paragraphs_first.push_back(text());
    }
    if (i % 7 == 3) tag.text = i % 2 == 0 ? text() : text() + "\n" + text();
    const std::string expected =
        tag_to_json(tag).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    ASSERT_EQ(tag_json_text(tag), expected) << i;
    direct += std::all_of(expected.begin(), expected.end(),
                          [](char c) { return c >= 0x20 && c < 0x7F && c != '\\'; });
  }
  EXPECT_GT(direct, 5000);  // both paths were taken
  EXPECT_LT(direct, 15000);
}

}  // namespace
}  // namespace neardup
