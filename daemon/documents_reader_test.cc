// DocumentsReader on librdkafka's mock cluster: what the documents topic holds is read into the
// merge state at open and followed afterwards, a record that is not one is passed over, and a
// reader opened again reads on from where the state stopped.
#include "daemon/documents_reader.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/log.h"
#include "kafka/mock_cluster.h"
#include "store/test_util.h"

namespace neardup::daemon {
namespace {

using Clock = std::chrono::steady_clock;

SourcePosition source_at(std::int64_t offset, std::int32_t partition = 0) {
  return SourcePosition{"pages", partition, offset};
}

class DocumentsReaderOnMockCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = kafka::MockCluster::start(1);
    ASSERT_TRUE(started) << started.error();
    cluster_ = std::move(*started);
    ASSERT_TRUE(cluster_->create_topic("documents", 2, 1));
    config_.kafka.bootstrap_servers = cluster_->bootstrap_servers();
    config_.kafka.documents_topic = "documents";
    config_.store.path = dir_.path();
    auto conf = kafka::make_conf(
        {{"bootstrap.servers", config_.kafka.bootstrap_servers}, {"linger.ms", "0"}});
    ASSERT_TRUE(conf) << conf.error();
    auto producer = kafka::make_producer(**conf);
    ASSERT_TRUE(producer) << producer.error();
    producer_ = std::move(*producer);
  }

  // Writes a record to documents partition `partition` and waits for it to be stored.
  void write(std::int32_t partition, const std::pair<std::string, std::string>& record) {
    auto code = producer_->produce("documents", partition, RdKafka::Producer::RK_MSG_COPY,
                                   const_cast<char*>(record.second.data()), record.second.size(),
                                   record.first.data(), record.first.size(), 0, nullptr);
    ASSERT_EQ(code, RdKafka::ERR_NO_ERROR) << RdKafka::err2str(code);
    ASSERT_EQ(producer_->flush(10000), RdKafka::ERR_NO_ERROR);
  }

  std::unique_ptr<DocumentsReader> open() {
    auto reader = DocumentsReader::open(config_, logger("daemon"));
    EXPECT_TRUE(reader) << reader.error();
    return reader ? std::move(*reader) : nullptr;
  }

  testing::TempDir dir_;
  std::unique_ptr<kafka::MockCluster> cluster_;
  std::unique_ptr<RdKafka::Producer> producer_;
  Config config_;
};

TEST_F(DocumentsReaderOnMockCluster, ReadsTheTopicAtOpenFollowsItAndReadsOnAfterAReopen) {
  const Verdict unique{.status = Verdict::Status::kUnique};
  const Verdict copy{.status = Verdict::Status::kDuplicate, .matched = "a", .duplicate_of = "a"};
  write(0, encode_decided("a", source_at(5), unique));
  write(0, encode_mark(source_at(5)));
  write(1, encode_decided("b", source_at(9, 1), copy));
  write(1, {"not a documents key", "nor a value"});  // passed over, and read past
  write(1, encode_mark(source_at(9, 1)));
  {
    auto reader = open();
    ASSERT_TRUE(reader);
    ASSERT_TRUE(reader->state().find("a"));
    EXPECT_EQ(reader->state().find("a")->source, source_at(5));
    ASSERT_TRUE(reader->state().find("b"));
    EXPECT_EQ(reader->state().find("b")->verdict.duplicate_of, "a");
    EXPECT_EQ((reader->decided_through()[PartitionId{"pages", 0}]), 5);
    EXPECT_EQ((reader->decided_through()[PartitionId{"pages", 1}]), 9);
    EXPECT_EQ(reader->state().next(0), 2);
    EXPECT_EQ(reader->state().next(1), 3);

    write(0, encode_decided("c", source_at(6), unique));
    write(0, encode_mark(source_at(6)));
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (reader->state().next(0) < 4 && Clock::now() < deadline) reader->follow();
    EXPECT_TRUE(reader->state().find("c"));
    EXPECT_EQ((reader->decided_through()[PartitionId{"pages", 0}]), 6);
  }  // written to the state as it closes
  write(1, encode_decided("d", source_at(10, 1), unique));
  auto reader = open();
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->state().next(0), 4);
  EXPECT_EQ(reader->state().next(1), 4);  // the one record since, read at open
  for (const char* id : {"a", "b", "c", "d"}) EXPECT_TRUE(reader->state().find(id)) << id;
  EXPECT_EQ((reader->decided_through()[PartitionId{"pages", 0}]), 6);
  EXPECT_EQ((reader->decided_through()[PartitionId{"pages", 1}]), 9);
}

TEST_F(DocumentsReaderOnMockCluster, ATopicThatIsNotThereIsAnErrorNamingIt) {
  config_.kafka.documents_topic = "no-such-documents";
  auto reader = DocumentsReader::open(config_, logger("daemon"));
  ASSERT_FALSE(reader);
  EXPECT_NE(reader.error().find("no-such-documents"), std::string::npos) << reader.error();
}

}  // namespace
}  // namespace neardup::daemon
