#include "daemon/outgoing.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace neardup::daemon {
namespace {

std::string header(const Outgoing& out, const std::string& name) {
  for (const auto& [n, v] : out.headers) {
    if (n == name) return v;
  }
  return "<none>";
}

// A consumed record after the pipeline, under the default config.
WorkPtr processed(std::string value) {
  auto work = std::make_shared<Work>(
      ConsumedRecord{.partition = {"pages", 2},
                     .offset = 17,
                     .key = "cluster-1",
                     .headers = {{"trace", "abc"}, {"neardup-status", "forged"}},
                     .value = std::move(value)});
  auto config = std::make_shared<const Config>();
  work->processed = process_record(work->input.value, config, scheme_id(*config));
  return work;
}

KafkaConfig topics() {
  KafkaConfig kafka;
  kafka.output_topic = "tagged";
  kafka.dead_letter_topic = "dead";
  return kafka;
}

TEST(Outgoing, AnOutputKeepsKeyAndHeadersAndAddsNeardupsOwn) {
  auto work = processed(R"({"url":"https://a.example/x","body":"<p>hi</p>"})");
  Outgoing out = render_outgoing(*work, Verdict{}, topics(), false);
  EXPECT_FALSE(out.dead_letter);
  EXPECT_EQ(out.topic, "tagged");
  EXPECT_EQ(out.label, "skipped");
  ASSERT_NE(out.key, nullptr);
  EXPECT_EQ(*out.key, "cluster-1");
  EXPECT_EQ(header(out, "trace"), "abc");
  EXPECT_EQ(header(out, "neardup-status"), "skipped");  // the input's forged one is dropped
  EXPECT_EQ(header(out, "neardup-scheme"), work->processed.scheme);
  EXPECT_EQ(header(out, "neardup-duplicate-of"), "<none>");
  auto value = nlohmann::json::parse(out.value);
  EXPECT_EQ(value["body"], "<p>hi</p>");
  EXPECT_EQ(value["neardup"]["reason"], "low_content");
  EXPECT_EQ(out.record().value, out.value);
}

TEST(Outgoing, AShrunkOutputHasNoBody) {
  auto work = processed(R"({"url":"https://a.example/x","body":"<p>hi</p>","site":"a"})");
  auto value = nlohmann::json::parse(render_outgoing(*work, Verdict{}, topics(), true).value);
  EXPECT_FALSE(value.contains("body"));
  EXPECT_EQ(value["site"], "a");
}

TEST(Outgoing, ADuplicateNamesItsClusterInAHeader) {
  auto work = processed(R"({"url":"https://a.example/x","body":"<p>hi</p>"})");
  work->processed.result.skip.reset();  // as if fingerprinted
  Verdict duplicate{.status = Verdict::Status::kDuplicate, .matched = "m", .duplicate_of = "d"};
  Outgoing out = render_outgoing(*work, duplicate, topics(), false);
  EXPECT_EQ(out.label, "duplicate");
  EXPECT_EQ(header(out, "neardup-duplicate-of"), "d");
}

TEST(Outgoing, ADeadLetterCarriesTheInputBytesAndWhy) {
  auto work = processed("not json at all");
  Outgoing out = render_outgoing(*work, Verdict{}, topics(), false);
  EXPECT_TRUE(out.dead_letter);
  EXPECT_EQ(out.topic, "dead");
  EXPECT_EQ(out.label, "not_json");
  EXPECT_EQ(out.value, "not json at all");
  EXPECT_EQ(header(out, "neardup-error"), "not_json");
  EXPECT_EQ(header(out, "neardup-source"), "pages/2/17");
  EXPECT_EQ(header(out, "trace"), "abc");
  EXPECT_EQ(
      out.size(), out.value.size() + 9 + [&] {
        std::size_t bytes = 0;
        for (const auto& [n, v] : out.headers) bytes += n.size() + v.size();
        return bytes;
      }());

  Outgoing shrunk = render_outgoing(*work, Verdict{}, topics(), true);
  EXPECT_EQ(shrunk.value, "");
  EXPECT_NE(header(shrunk, "neardup-error-detail").find("value dropped"), std::string::npos);
}

}  // namespace
}  // namespace neardup::daemon
