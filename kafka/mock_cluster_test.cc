#include "kafka/mock_cluster.h"

#include <gtest/gtest.h>

#include "kafka/client.h"

namespace neardup::kafka {
namespace {

TEST(MockCluster, ApiKeysAreReadByNameOrNumber) {
  EXPECT_EQ(api_key_from_text("Produce"), 0);
  EXPECT_EQ(api_key_from_text("fetch"), 1);
  EXPECT_EQ(api_key_from_text("OffsetCommit"), 8);
  EXPECT_EQ(api_key_from_text("22"), 22);
  EXPECT_EQ(api_key_from_text("NoSuchApi"), std::nullopt);
}

TEST(MockCluster, ErrorCodesAreReadByNameWithOrWithoutPrefixOrByNumber) {
  EXPECT_EQ(error_code_from_text("NOT_LEADER_FOR_PARTITION"),
            RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  EXPECT_EQ(error_code_from_text("RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT"),
            RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT);
  EXPECT_EQ(error_code_from_text("_transport"), RD_KAFKA_RESP_ERR__TRANSPORT);
  EXPECT_EQ(error_code_from_text("6"), RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  EXPECT_EQ(error_code_from_text("NOT_AN_ERROR_NAME"), std::nullopt);
}

TEST(MockCluster, ARecordProducedWithHeadersIsConsumedBack) {
  auto cluster = MockCluster::start(1);
  ASSERT_TRUE(cluster) << cluster.error();
  ASSERT_TRUE((*cluster)->create_topic("t", 2, 1));
  const std::string bootstrap = (*cluster)->bootstrap_servers();

  auto producer_conf =
      make_conf({{"bootstrap.servers", bootstrap}, {"enable.idempotence", "true"}});
  ASSERT_TRUE(producer_conf) << producer_conf.error();
  auto producer = make_producer(**producer_conf);
  ASSERT_TRUE(producer) << producer.error();
  const std::string key = "k";
  OutgoingRecord record{.topic = "t", .key = &key, .value = "v", .headers = {{"h", "x"}}};
  ASSERT_EQ(produce(**producer, record, nullptr), RdKafka::ERR_NO_ERROR);
  ASSERT_EQ((*producer)->flush(10000), RdKafka::ERR_NO_ERROR);

  auto consumer_conf = make_conf(
      {{"bootstrap.servers", bootstrap}, {"group.id", "g"}, {"auto.offset.reset", "earliest"}});
  ASSERT_TRUE(consumer_conf) << consumer_conf.error();
  auto consumer = make_consumer(**consumer_conf);
  ASSERT_TRUE(consumer) << consumer.error();
  ASSERT_EQ((*consumer)->subscribe({"t"}), RdKafka::ERR_NO_ERROR);
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    std::unique_ptr<RdKafka::Message> message((*consumer)->consume(100));
    if (message->err() != RdKafka::ERR_NO_ERROR) continue;
    seen = true;
    EXPECT_EQ(*message->key(), "k");
    EXPECT_EQ(std::string(static_cast<const char*>(message->payload()), message->len()), "v");
    EXPECT_EQ(message_headers(*message), (Headers{{"h", "x"}}));
  }
  EXPECT_TRUE(seen);
  (*consumer)->close();
}

TEST(MakeConf, AnUnknownPropertyIsAnErrorNamingIt) {
  auto conf = make_conf({{"no.such.property", "1"}});
  ASSERT_FALSE(conf);
  EXPECT_NE(conf.error().find("no.such.property"), std::string::npos);
}

}  // namespace
}  // namespace neardup::kafka
