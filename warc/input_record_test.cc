#include "warc/input_record.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "message/record.h"

namespace neardup::warc {
namespace {

TEST(ToInputRecord, GivesAPageThatParsePageReadsBack) {
  const WarcPage page{.target_uri = "http://a.example/x",
                      .record_id = "urn:uuid:1234",
                      .date = "2026-01-02T03:04:05Z",
                      .content_type = "text/html; charset=gbk",
                      .body = std::string("<p>\xc4\xe3\xba\xc3</p>")};
  const std::string text = to_input_record(page, {.offset = 784}, "crawl.warc.gz", InputFields{});
  auto parsed = parse_page(text, InputConfig{});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().detail;
  EXPECT_EQ(parsed->url, "http://a.example/x");
  EXPECT_EQ(parsed->id, "urn:uuid:1234");
  EXPECT_EQ(parsed->body, page.body);
  EXPECT_EQ(parsed->content_type, "text/html; charset=gbk");
  EXPECT_EQ(parsed->fetched_at_ms, 1767323045000);
  EXPECT_EQ(nlohmann::json::parse(parsed->record)["warc"], (nlohmann::json{{"file", "crawl.warc.gz"}, {"offset", 784}}));
}

TEST(ToInputRecord, UsesTheConfiguredFieldNamesAndLeavesOutWhatIsMissing) {
  InputFields fields;
  fields.url = "link";
  fields.body_base64 = "raw";
  const WarcPage page{.target_uri = "http://a.example/", .date = "yesterday", .body = "<p>x</p>"};
  auto object =
      nlohmann::json::parse(to_input_record(page, {.offset = 0, .in_member = 9}, "f", fields));
  EXPECT_EQ(object["link"], "http://a.example/");
  EXPECT_EQ(object["raw"], "PHA+eDwvcD4=");
  EXPECT_FALSE(object.contains("id"));
  EXPECT_FALSE(object.contains("content_type"));
  EXPECT_FALSE(object.contains("fetched_at"));
  EXPECT_EQ(object["warc"]["in_member"], 9);
}

}  // namespace
}  // namespace neardup::warc
