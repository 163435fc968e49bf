#include "daemon/outgoing.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "message/fingerprinted.h"

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
  // Where the input came from, as on a dead letter: consumers deduplicate redeliveries by it.
  EXPECT_EQ(header(out, "neardup-source"), "pages/2/17");
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

TEST(Outgoing, AWorkerPublishesTheFingerprintedRecordToThePartitionOfItsInputsNumber) {
  auto work = processed(R"({"url":"https://a.example/x","body":"<p>hi</p>"})");
  KafkaConfig kafka = topics();
  kafka.fingerprint_topic = "fingerprinted";
  Outgoing out = render_fingerprinted(*work, kafka, false);
  EXPECT_EQ(out.topic, "fingerprinted");
  EXPECT_EQ(out.partition, 2);
  EXPECT_EQ(out.label, "fingerprinted");
  ASSERT_NE(out.key, nullptr);
  EXPECT_EQ(*out.key, "cluster-1");
  EXPECT_EQ(out.headers, work->input.headers);  // all of them, neardup-* too: the index decides
  auto record = decode_fingerprinted(out.value);
  ASSERT_TRUE(record) << record.error();
  EXPECT_EQ(record->source_topic, "pages");
  EXPECT_EQ(record->source_partition, 2);
  EXPECT_EQ(record->source_offset, 17);
  EXPECT_EQ(record->value, work->input.value);

  Outgoing shrunk = render_fingerprinted(*work, kafka, true);
  auto dropped = decode_fingerprinted(shrunk.value);
  ASSERT_TRUE(dropped);
  EXPECT_TRUE(dropped->value.empty());
  ASSERT_TRUE(dropped->error);
  EXPECT_EQ(dropped->error->code, "fingerprinted_too_large");
}

TEST(Outgoing, TheIndexRolesOutputsAndDeadLettersNameTheCarriedInput) {
  // What the index role consumed: a fingerprinted record of an unreadable input.
  auto worker = processed("not json");
  KafkaConfig kafka = topics();
  Outgoing fingerprinted = render_fingerprinted(*worker, kafka, false);
  auto work = std::make_shared<Work>(ConsumedRecord{.partition = {"fingerprinted", 2},
                                                    .offset = 5,
                                                    .key = "cluster-1",
                                                    .headers = fingerprinted.headers,
                                                    .value = fingerprinted.value});
  auto record = decode_fingerprinted(work->input.value);
  ASSERT_TRUE(record);
  work->carried = ConsumedRecord{.partition = {record->source_topic, record->source_partition},
                                 .offset = record->source_offset,
                                 .key = work->input.key,
                                 .headers = work->input.headers,
                                 .value = record->value};
  auto config = std::make_shared<const Config>();
  work->processed = processed_from(std::move(*record), config, scheme_id(*config));
  Outgoing out = render_outgoing(*work, Verdict{}, kafka, false);
  EXPECT_TRUE(out.dead_letter);
  EXPECT_EQ(header(out, "neardup-source"), "pages/2/17");  // the input, not the fingerprint topic
  EXPECT_EQ(header(out, "neardup-error"), "not_json");
  EXPECT_EQ(out.value, "not json");
}

}  // namespace
}  // namespace neardup::daemon
