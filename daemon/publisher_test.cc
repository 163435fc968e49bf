#include "daemon/publisher.h"

#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "kafka/mock_cluster.h"

namespace neardup::daemon {
namespace {

using Clock = std::chrono::steady_clock;

// A Publisher over a producer on librdkafka's mock cluster, whose broker can be told to refuse
// the next produce requests.
class PublisherOnMockCluster : public ::testing::Test {
 protected:
  void start(bool transactional) {
    auto started = kafka::MockCluster::start(1);
    ASSERT_TRUE(started) << started.error();
    cluster_ = std::move(*started);
    ASSERT_TRUE(cluster_->create_topic("tagged", 1, 1));
    ASSERT_TRUE(cluster_->create_topic("dead", 1, 1));
    topics_.output_topic = "tagged";
    topics_.dead_letter_topic = "dead";
    topics_.bootstrap_servers = cluster_->bootstrap_servers();
    publisher_ = std::make_unique<Publisher>(
        topics_, transactional, &metrics_,
        Publisher::Callbacks{.delivered =
                                 [this](const Work& work) {
                                   std::lock_guard lock(mutex_);
                                   delivered_.push_back(work.input.offset);
                                 },
                             .fail =
                                 [this](const std::string& message) {
                                   std::lock_guard lock(mutex_);
                                   failures_.push_back(message);
                                 }});
    auto conf = kafka::make_conf({{"bootstrap.servers", topics_.bootstrap_servers},
                                  {"linger.ms", "0"},
                                  {"message.timeout.ms", "10000"}});
    ASSERT_TRUE(conf) << conf.error();
    ASSERT_TRUE(kafka::set_callback(**conf, "dr_cb",
                                    static_cast<RdKafka::DeliveryReportCb*>(publisher_.get())));
    auto producer = kafka::make_producer(**conf);
    ASSERT_TRUE(producer) << producer.error();
    producer_ = std::move(*producer);
    publisher_->attach(producer_.get());
  }

  // A skipped page (too little text) with a body, consumed at `offset`.
  static WorkPtr page(std::int64_t offset) {
    auto work = std::make_shared<Work>(
        ConsumedRecord{.partition = {"pages", 0},
                       .offset = offset,
                       .value = R"({"url":"https://a.example/p","body":"<p>hello there</p>"})"});
    auto config = std::make_shared<const Config>();
    work->processed = process_record(work->input.value, config, scheme_id(*config));
    return work;
  }

  // Serves delivery reports until `done` or 10 s.
  void poll_until(const std::function<bool()>& done) {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      producer_->poll(50);
      std::lock_guard lock(mutex_);
      if (done()) return;
    }
  }

  // The records on a topic, as their values.
  std::vector<std::string> records(const std::string& topic) {
    auto conf = kafka::make_conf({{"bootstrap.servers", topics_.bootstrap_servers},
                                  {"group.id", "publisher-test"},
                                  {"enable.partition.eof", "true"}});
    auto consumer = kafka::make_consumer(**conf);
    kafka::TopicPartitions partitions;
    partitions.add(topic, 0, RdKafka::Topic::OFFSET_BEGINNING);
    (*consumer)->assign(partitions.get());
    std::vector<std::string> values;
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      std::unique_ptr<RdKafka::Message> message((*consumer)->consume(100));
      if (message->err() == RdKafka::ERR__PARTITION_EOF) break;
      if (message->err() != RdKafka::ERR_NO_ERROR) continue;
      values.emplace_back(static_cast<const char*>(message->payload()), message->len());
    }
    (*consumer)->close();
    return values;
  }

  std::unique_ptr<kafka::MockCluster> cluster_;
  KafkaConfig topics_;
  ops::MetricsRegistry registry_;
  ops::DaemonMetrics metrics_{registry_};
  std::unique_ptr<Publisher> publisher_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::mutex mutex_;
  std::vector<std::int64_t> delivered_;
  std::vector<std::string> failures_;
};

TEST_F(PublisherOnMockCluster, ARecordTheBrokerRefusesAsTooLargeIsRepublishedAndCountedOnce) {
  start(/*transactional=*/false);
  cluster_->push_request_errors(0 /* Produce */, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, 1);
  auto work = page(5);
  ASSERT_TRUE(publisher_->publish(work, Verdict{}, nullptr));
  poll_until([&] { return !delivered_.empty() || !failures_.empty(); });
  EXPECT_TRUE(failures_.empty()) << failures_.front();
  EXPECT_EQ(delivered_, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(publisher_->counts().outputs, 1u);
  EXPECT_EQ(metrics_.pages_skipped.value(), 1u);
  EXPECT_EQ(metrics_.stage(ops::Stage::kProduce).snapshot().count(), 1u);
  auto written = records("tagged");
  ASSERT_EQ(written.size(), 1u);
  EXPECT_FALSE(nlohmann::json::parse(written[0]).contains("body"));
}

TEST_F(PublisherOnMockCluster, ARecordOverTheTopicsKnownLimitIsShrunkBeforeProducing) {
  start(/*transactional=*/true);  // no refusal ever reaches the broker: fine in a transaction
  publisher_->set_size_limit("tagged", 200);
  ASSERT_TRUE(publisher_->publish(page(6), Verdict{}, nullptr));
  poll_until([&] { return !delivered_.empty() || !failures_.empty(); });
  EXPECT_TRUE(failures_.empty());
  EXPECT_EQ(publisher_->counts().outputs, 1u);
  auto written = records("tagged");
  ASSERT_EQ(written.size(), 1u);
  EXPECT_FALSE(nlohmann::json::parse(written[0]).contains("body"));
}

TEST_F(PublisherOnMockCluster, ARefusalInsideATransactionIsFatalAndNotCounted) {
  start(/*transactional=*/true);
  cluster_->push_request_errors(0 /* Produce */, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, 1);
  ASSERT_TRUE(publisher_->publish(page(7), Verdict{}, nullptr));
  poll_until([&] { return !failures_.empty(); });
  ASSERT_EQ(failures_.size(), 1u);
  EXPECT_NE(failures_[0].find("too large"), std::string::npos) << failures_[0];
  EXPECT_TRUE(delivered_.empty());
  EXPECT_EQ(publisher_->counts().outputs, 0u);
  EXPECT_EQ(metrics_.pages_skipped.value(), 0u);
}

TEST_F(PublisherOnMockCluster, AFailedDeliveryIsFatalAndNotCounted) {
  start(/*transactional=*/false);
  cluster_->push_request_errors(0 /* Produce */, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, 1);
  ASSERT_TRUE(publisher_->publish(page(8), Verdict{}, nullptr));
  poll_until([&] { return !failures_.empty(); });
  ASSERT_EQ(failures_.size(), 1u);
  EXPECT_NE(failures_[0].find("delivery failed topic=tagged source=pages/0/8"), std::string::npos)
      << failures_[0];
  EXPECT_TRUE(delivered_.empty());
  EXPECT_EQ(publisher_->counts().outputs, 0u);
}

TEST_F(PublisherOnMockCluster, DeadLettersAreCountedByReasonOnDelivery) {
  start(/*transactional=*/false);
  auto work = std::make_shared<Work>(
      ConsumedRecord{.partition = {"pages", 0}, .offset = 9, .value = "not json"});
  auto config = std::make_shared<const Config>();
  work->processed = process_record(work->input.value, config, scheme_id(*config));
  ASSERT_TRUE(publisher_->publish(work, Verdict{}, nullptr));
  poll_until([&] { return !delivered_.empty(); });
  EXPECT_EQ(publisher_->counts().dead_letters, 1u);
  EXPECT_EQ(publisher_->counts().outputs, 0u);
  EXPECT_EQ(metrics_.dead_letters.labels({"not_json"}).value(), 1u);
  EXPECT_EQ(records("dead"), (std::vector<std::string>{"not json"}));
}

}  // namespace
}  // namespace neardup::daemon
