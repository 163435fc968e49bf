#include "daemon/consumer_stats.h"

#include <gtest/gtest.h>

namespace neardup::daemon {
namespace {

// Trimmed from a librdkafka 2.0 consumer report: one topic, two partitions with a known lag,
// one whose lag is not known yet, and the internal partition -1.
constexpr std::string_view kConsumerReport = R"({
  "name": "rdkafka#consumer-1", "type": "consumer", "ts": 123, "msg_cnt": 0,
  "brokers": {},
  "topics": {
    "pages": {
      "topic": "pages", "age": 5000,
      "partitions": {
        "0": {"partition": 0, "hi_offset": 120, "committed_offset": 100, "consumer_lag": 20},
        "1": {"partition": 1, "hi_offset": 50, "committed_offset": 50, "consumer_lag": 0},
        "2": {"partition": 2, "hi_offset": -1, "committed_offset": -1001, "consumer_lag": -1},
        "-1": {"partition": -1, "consumer_lag": -1}
      }
    }
  }
})";

TEST(ConsumerLags, KnownLagsOfRealPartitionsAreReported) {
  auto lags = consumer_lags(kConsumerReport);
  ASSERT_EQ(lags.size(), 2u);
  EXPECT_EQ(lags[0].first, (PartitionId{"pages", 0}));
  EXPECT_EQ(lags[0].second, 20);
  EXPECT_EQ(lags[1].first, (PartitionId{"pages", 1}));
  EXPECT_EQ(lags[1].second, 0);
}

TEST(ConsumerLags, ProducerReportsGiveNothing) {
  EXPECT_TRUE(consumer_lags(R"({"type": "producer", "topics": {"pages": {"partitions":
      {"0": {"partition": 0, "consumer_lag": 7}}}}})")
                  .empty());
}

TEST(ConsumerLags, MalformedReportsGiveNothing) {
  EXPECT_TRUE(consumer_lags("not json").empty());
  EXPECT_TRUE(consumer_lags(R"([1, 2])").empty());
  EXPECT_TRUE(consumer_lags(R"({"type": "consumer", "topics": []})").empty());
  EXPECT_TRUE(consumer_lags(R"({"type": "consumer", "topics": {"t": {"partitions":
      {"0": {"partition": "0", "consumer_lag": "5"}}}}})")
                  .empty());
}

TEST(BrokersUp, CountsConnectedClusterBrokersNotBootstrapEntries) {
  constexpr std::string_view report = R"({"type": "consumer", "brokers": {
    "127.0.0.1:9092/bootstrap": {"nodeid": -1, "state": "UP"},
    "127.0.0.1:9092/1": {"nodeid": 1, "state": "UP"},
    "127.0.0.1:9093/2": {"nodeid": 2, "state": "DOWN"},
    "127.0.0.1:9094/3": {"nodeid": 3, "state": "UP"}}})";
  EXPECT_EQ(brokers_up(report), 2);
  EXPECT_EQ(brokers_up(R"({"type": "consumer", "brokers": {
    "a/1": {"nodeid": 1, "state": "CONNECT"}, "b/2": {"nodeid": 2, "state": "DOWN"}}})"), 0);
}

TEST(BrokersUp, ProducerAndMalformedReportsGiveNothing) {
  EXPECT_EQ(brokers_up(R"({"type": "producer", "brokers": {"a/1": {"nodeid": 1, "state": "UP"}}})"),
            std::nullopt);
  EXPECT_EQ(brokers_up("not json"), std::nullopt);
  EXPECT_EQ(brokers_up(R"({"type": "consumer"})"), std::nullopt);
}

}  // namespace
}  // namespace neardup::daemon
