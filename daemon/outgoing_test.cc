#include "daemon/outgoing.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "message/fingerprinted.h"
#include "message/shard_answer.h"

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

TEST(Outgoing, AShardAnswersToTheCandidatesPartitionOfItsSourceAndShardZeroCarriesThePage) {
  auto work = std::make_shared<Work>(
      ConsumedRecord{.partition = {"fingerprinted", 3},
                     .offset = 40,
                     .key = "cluster-1",
                     .headers = {{"trace", "abc"}, {"neardup-signature", "x"}},
                     .value = "the fingerprinted record"});
  work->carried = ConsumedRecord{.partition = {"pages", 3}, .offset = 17};
  KafkaConfig kafka = topics();
  kafka.candidates_topic = "candidates";
  Verdict verdict{
      .status = Verdict::Status::kDuplicate, .matched = "https://a.example/", .distance = 2};
  Outgoing zero = render_shard_answer(*work, verdict, kafka, 0, 3, false);
  EXPECT_EQ(zero.topic, "candidates");
  EXPECT_EQ(zero.partition, 3);
  EXPECT_EQ(zero.label, "answered");
  ASSERT_NE(zero.key, nullptr);
  EXPECT_EQ(*zero.key, "cluster-1");
  EXPECT_EQ(zero.headers, (kafka::Headers{{"trace", "abc"}}));  // never the signature
  auto answer = decode_shard_answer(zero.value);
  ASSERT_TRUE(answer) << answer.error();
  EXPECT_EQ(answer->shard, 0u);
  EXPECT_EQ(answer->shards, 3u);
  EXPECT_EQ(answer->source_topic, "pages");
  EXPECT_EQ(answer->source_offset, 17);
  EXPECT_EQ(answer->verdict.matched, "https://a.example/");
  EXPECT_EQ(answer->verdict.distance, 2);
  EXPECT_EQ(answer->fingerprinted, "the fingerprinted record");

  Outgoing two = render_shard_answer(*work, verdict, kafka, 2, 3, false);
  EXPECT_TRUE(two.headers.empty());
  answer = decode_shard_answer(two.value);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->shard, 2u);
  EXPECT_TRUE(answer->fingerprinted.empty());
  answer = decode_shard_answer(render_shard_answer(*work, verdict, kafka, 0, 3, true).value);
  ASSERT_TRUE(answer);
  EXPECT_TRUE(answer->fingerprinted.empty());
}

TEST(Outgoing, ARecordWithAKeyOfItsOwnProducesThatKey) {
  const std::string borrowed = "borrowed";
  const Outgoing out{
      .key = &borrowed, .own_key = std::string(3, 'k'), .value = std::string(1, 'v')};
  EXPECT_EQ(*out.record().key, "kkk");
  EXPECT_EQ(out.size(), 4u);
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
