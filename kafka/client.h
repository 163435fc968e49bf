// Thin helpers over librdkafka's C++ API (rdkafkacpp.h), shared by neardupd and the `neardup`
// Kafka tools. Configuration uses librdkafka's own property names ("bootstrap.servers",
// "enable.idempotence", ...); nothing here invents a vocabulary of its own.
//
// Errors are values: every call that can fail returns std::expected with a message naming the
// property, topic or call that failed.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace neardup::kafka {

// librdkafka properties in the order they are applied; a later entry overrides an earlier one.
using Properties = std::vector<std::pair<std::string, std::string>>;

// Reads "NAME=VALUE" assignments (command-line --property options). The error names the bad one.
std::expected<Properties, std::string> parse_properties(const std::vector<std::string>& texts);

// A global configuration object with every property set. The error names the property and
// repeats librdkafka's reason ("enable.idempotence: Invalid value ..."), with the value of a
// secret property (common/secret.h) replaced by "<redacted>".
std::expected<std::unique_ptr<RdKafka::Conf>, std::string> make_conf(const Properties& properties);

// Sets one callback-valued property ("dr_cb", "event_cb", "rebalance_cb", "offset_commit_cb").
// The callback object must outlive every handle created from conf.
std::expected<void, std::string> set_callback(RdKafka::Conf& conf, const std::string& name,
                                              RdKafka::DeliveryReportCb* cb);
std::expected<void, std::string> set_callback(RdKafka::Conf& conf, const std::string& name,
                                              RdKafka::EventCb* cb);
std::expected<void, std::string> set_callback(RdKafka::Conf& conf, const std::string& name,
                                              RdKafka::RebalanceCb* cb);
std::expected<void, std::string> set_callback(RdKafka::Conf& conf, const std::string& name,
                                              RdKafka::OffsetCommitCb* cb);

std::expected<std::unique_ptr<RdKafka::Producer>, std::string> make_producer(RdKafka::Conf& conf);
std::expected<std::unique_ptr<RdKafka::KafkaConsumer>, std::string> make_consumer(
    RdKafka::Conf& conf);

using Headers = std::vector<std::pair<std::string, std::string>>;

// One record to produce. partition -1 lets the partitioner choose (from the key).
struct OutgoingRecord {
  std::string_view topic;
  std::int32_t partition = RdKafka::Topic::PARTITION_UA;
  const std::string* key = nullptr;  // null: no key
  std::string_view value;
  Headers headers;
  std::int64_t timestamp_ms = 0;  // 0: now
};

// Enqueues a record (copying key, value and headers). While the local queue is full it serves
// delivery reports (poll) and retries, unless `stop` becomes true. Any other error is returned
// as is, e.g. ERR_MSG_SIZE_TOO_LARGE or ERR__FATAL; the record was then not enqueued and its
// delivery report will not come.
RdKafka::ErrorCode produce(RdKafka::Producer& producer, const OutgoingRecord& record, void* opaque,
                           const std::atomic<bool>* stop = nullptr);

// Copies a message's headers (null-valued headers become empty strings).
Headers message_headers(RdKafka::Message& message);

// "topic/partition/offset" for logs and the neardup-source header.
std::string source_string(const RdKafka::Message& message);

// The enum name of an error ("NOT_LEADER_FOR_PARTITION", "_TRANSPORT").
std::string error_name(RdKafka::ErrorCode code);

// What an RdKafka::Error said (the transactional and incremental-rebalance calls return one
// on failure), as a value: the object itself is deleted when it is read (check()).
struct Error {
  RdKafka::ErrorCode code = RdKafka::ERR_NO_ERROR;
  std::string message;  // "NAME: description" (error_name and librdkafka's text)
  bool fatal = false;
  bool retriable = false;
  bool txn_requires_abort = false;
};

// Takes ownership of a call's RdKafka::Error* (null means success) and turns it into a value:
//   if (auto begun = kafka::check(producer->begin_transaction()); !begun) ... begun.error()
std::expected<void, Error> check(RdKafka::Error* error);

// Owns a list of TopicPartition pointers as librdkafka's C++ API hands them out.
class TopicPartitions {
 public:
  TopicPartitions() = default;
  explicit TopicPartitions(std::vector<RdKafka::TopicPartition*> list) : list_(std::move(list)) {}
  TopicPartitions(const TopicPartitions&) = delete;
  TopicPartitions& operator=(const TopicPartitions&) = delete;
  TopicPartitions(TopicPartitions&& other) noexcept : list_(std::move(other.list_)) {
    other.list_.clear();
  }
  ~TopicPartitions() { RdKafka::TopicPartition::destroy(list_); }

  void add(const std::string& topic, std::int32_t partition, std::int64_t offset) {
    list_.push_back(RdKafka::TopicPartition::create(topic, partition, offset));
  }
  std::vector<RdKafka::TopicPartition*>& get() { return list_; }
  bool empty() const { return list_.empty(); }

 private:
  std::vector<RdKafka::TopicPartition*> list_;
};

}  // namespace neardup::kafka
