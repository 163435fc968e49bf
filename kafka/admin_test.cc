#include "kafka/admin.h"

#include <gtest/gtest.h>

#include "kafka/client.h"
#include "kafka/mock_cluster.h"

namespace neardup::kafka {
namespace {

TEST(TopicSpec, NameAloneHasOnePartition) {
  auto spec = parse_topic_spec("pages");
  ASSERT_TRUE(spec) << spec.error();
  EXPECT_EQ(spec->name, "pages");
  EXPECT_EQ(spec->partitions, 1);
  EXPECT_TRUE(spec->configs.empty());
}

TEST(TopicSpec, PartitionsAndTopicConfigsAreRead) {
  auto spec = parse_topic_spec("pages:4:max.message.bytes=33554432,retention.ms=60000");
  ASSERT_TRUE(spec) << spec.error();
  EXPECT_EQ(spec->name, "pages");
  EXPECT_EQ(spec->partitions, 4);
  ASSERT_EQ(spec->configs.size(), 2u);
  EXPECT_EQ(spec->configs[0],
            (std::pair<std::string, std::string>{"max.message.bytes", "33554432"}));
  EXPECT_EQ(spec->configs[1], (std::pair<std::string, std::string>{"retention.ms", "60000"}));
}

TEST(TopicSpec, BadTextIsRejectedWithTheReason) {
  EXPECT_EQ(parse_topic_spec(":3").error(), "topic :3: empty topic name");
  EXPECT_EQ(parse_topic_spec("t:0").error(), "topic t:0: PARTITIONS must be a positive integer");
  EXPECT_EQ(parse_topic_spec("t:2x").error(), "topic t:2x: PARTITIONS must be a positive integer");
  EXPECT_EQ(parse_topic_spec("t:2:retention").error(),
            "topic t:2:retention: topic configs must be KEY=VALUE, got 'retention'");
}

class AdminOnMockCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = MockCluster::start(1);
    ASSERT_TRUE(started) << started.error();
    cluster_ = std::move(*started);
    ASSERT_TRUE(cluster_->create_topic("pages", 3, 1));
    auto conf = make_conf({{"bootstrap.servers", cluster_->bootstrap_servers()}});
    ASSERT_TRUE(conf) << conf.error();
    auto producer = make_producer(**conf);
    ASSERT_TRUE(producer) << producer.error();
    client_ = std::move(*producer);
  }

  std::unique_ptr<MockCluster> cluster_;
  std::unique_ptr<RdKafka::Producer> client_;
};

TEST_F(AdminOnMockCluster, ListsTopicsWithTheirPartitionCounts) {
  auto topics = list_topics(*client_, 10000);
  ASSERT_TRUE(topics) << topics.error();
  EXPECT_EQ(topics->at("pages"), 3);
  auto partitions = topic_partitions(*client_, "pages", 10000);
  ASSERT_TRUE(partitions) << partitions.error();
  EXPECT_EQ(*partitions, (std::vector<std::int32_t>{0, 1, 2}));
}

TEST_F(AdminOnMockCluster, MissingTopicsAreNamedAndNotCreated) {
  auto checked =
      require_topics(*client_, {"pages", "pages-tagged", "pages-dead", "pages-dead"}, "B", 10000);
  ASSERT_FALSE(checked);
  EXPECT_FALSE(checked.error().unreachable);
  EXPECT_EQ(checked.error().message,
            "topics missing on the cluster at B: pages-dead, pages-tagged (it has pages; create "
            "them first, e.g. neardup topics --create)");
  EXPECT_FALSE(topic_partitions(*client_, "pages-tagged", 10000));
  EXPECT_TRUE(require_topics(*client_, {"pages"}, "B", 10000));
}

// create_topics needs a controller, which librdkafka 2.0's mock cluster lacks: every end-to-end
// test creates its topics on a real broker with it (tests/kafka/broker.py, `neardup topics`).

}  // namespace
}  // namespace neardup::kafka
