#include "kafka/mock_watcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "kafka/client.h"

namespace neardup::kafka {
namespace {

// Collects the watcher's reports; waits for one of a kind.
class Reports {
 public:
  void add(const WatchEvent& event) {
    std::lock_guard lock(mutex_);
    events_.push_back(event);
    cv_.notify_all();
  }
  std::optional<WatchEvent> wait_for(WatchEvent::Kind kind, std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    std::optional<WatchEvent> found;
    cv_.wait_for(lock, timeout, [&] {
      for (const auto& event : events_) {
        if (event.kind == kind) found = event;
      }
      return found.has_value();
    });
    return found;
  }
  std::size_t count(WatchEvent::Kind kind) {
    std::lock_guard lock(mutex_);
    return std::ranges::count_if(events_, [&](const WatchEvent& e) { return e.kind == kind; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<WatchEvent> events_;
};

std::unique_ptr<RdKafka::Producer> producer_for(MockCluster& cluster) {
  auto conf = make_conf({{"bootstrap.servers", cluster.bootstrap_servers()},
                         {"linger.ms", "5"},
                         {"message.timeout.ms", "3000"}});
  EXPECT_TRUE(conf) << conf.error();
  auto producer = make_producer(**conf);
  EXPECT_TRUE(producer) << producer.error();
  return std::move(*producer);
}

// A one-broker cluster with topic "pages" of `partitions`, watched into `reports`.
class MockWatcherTest : public ::testing::Test {
 protected:
  void start(int partitions) {
    auto started = MockCluster::start(1);
    ASSERT_TRUE(started) << started.error();
    cluster = std::move(*started);
    ASSERT_TRUE(cluster->create_topic("pages", partitions, 1));
    auto watching = MockWatcher::start(*cluster, {"pages"},
                                       [this](const WatchEvent& event) { reports.add(event); });
    ASSERT_TRUE(watching) << watching.error();
    watcher = std::move(*watching);
  }
  void TearDown() override {
    watcher.reset();  // before the cluster it watches
    cluster.reset();
  }

  std::unique_ptr<MockCluster> cluster;
  Reports reports;
  std::unique_ptr<MockWatcher> watcher;
};

TEST_F(MockWatcherTest, WarnsWhenAPartitionNearsTheMockStorageLimit) {
  ASSERT_NO_FATAL_FAILURE(start(2));
  auto producer = producer_for(*cluster);
  const std::string value(64 << 10, 'x');
  // 3.5 MiB into partition 0: below the warning.
  for (int i = 0; i < 56; ++i) {
    ASSERT_EQ(produce(*producer, {.topic = "pages", .partition = 0, .value = value}, nullptr),
              RdKafka::ERR_NO_ERROR);
  }
  ASSERT_EQ(producer->flush(10000), RdKafka::ERR_NO_ERROR);
  EXPECT_FALSE(reports.wait_for(WatchEvent::Kind::kNearLimit, std::chrono::seconds(2)));
  // Another 0.75 MiB passes 4 MiB.
  for (int i = 0; i < 12; ++i) {
    ASSERT_EQ(produce(*producer, {.topic = "pages", .partition = 0, .value = value}, nullptr),
              RdKafka::ERR_NO_ERROR);
  }
  ASSERT_EQ(producer->flush(10000), RdKafka::ERR_NO_ERROR);
  auto near = reports.wait_for(WatchEvent::Kind::kNearLimit, std::chrono::seconds(10));
  ASSERT_TRUE(near);
  EXPECT_EQ(near->topic, "pages");
  EXPECT_EQ(near->partition, 0);
  EXPECT_GE(near->bytes, kNearLimitBytes);
  EXPECT_FALSE(reports.wait_for(WatchEvent::Kind::kOverLimit, std::chrono::seconds(0)));
}

TEST_F(MockWatcherTest, RefusesATopicItWasNotToldAbout) {
  ASSERT_NO_FATAL_FAILURE(start(1));
  // A producer's metadata request auto-creates "pagse" in the mock; the watcher refuses it.
  auto producer = producer_for(*cluster);
  produce(*producer, {.topic = "pagse", .value = "v"}, nullptr);
  producer->flush(3000);
  auto refused = reports.wait_for(WatchEvent::Kind::kRefusedTopic, std::chrono::seconds(10));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->topic, "pagse");

  // From then on, clients see the topic as unknown.
  auto other = producer_for(*cluster);
  std::string error;
  std::unique_ptr<RdKafka::Topic> topic(RdKafka::Topic::create(other.get(), "pagse", nullptr, error));
  ASSERT_TRUE(topic) << error;
  RdKafka::Metadata* raw = nullptr;
  ASSERT_EQ(other->metadata(false, topic.get(), &raw, 5000), RdKafka::ERR_NO_ERROR);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  ASSERT_EQ(metadata->topics()->size(), 1u);
  EXPECT_EQ(metadata->topics()->at(0)->err(), RdKafka::ERR_UNKNOWN_TOPIC_OR_PART);
  // The known topic was not refused, and still works.
  EXPECT_EQ(reports.count(WatchEvent::Kind::kRefusedTopic), 1u);
  ASSERT_EQ(produce(*other, {.topic = "pages", .value = "v"}, nullptr), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(other->flush(5000), RdKafka::ERR_NO_ERROR);
}

}  // namespace
}  // namespace neardup::kafka
