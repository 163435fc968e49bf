// A Kafka-protocol development cluster on loopback: librdkafka's mock cluster
// (rdkafka_mock.h, C API), owned by one producer handle that exists only to host it.
//
// The mock in librdkafka 2.0 speaks enough of the protocol for producers (including idempotent
// and transactional ones), high-level consumer groups with offset commits, and metadata. Data
// lives in memory and is lost when the cluster is destroyed. All calls are thread-safe: they are
// forwarded to the cluster's own thread.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace neardup::kafka {

class MockCluster {
 public:
  // Starts `brokers` brokers (ids 1..brokers) listening on 127.0.0.1, ephemeral ports.
  static std::expected<std::unique_ptr<MockCluster>, std::string> start(int brokers);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  // "127.0.0.1:PORT,127.0.0.1:PORT,...".
  std::string bootstrap_servers() const;
  int broker_count() const { return broker_count_; }

  // Each returns an error message naming the call and librdkafka's reason.
  std::expected<void, std::string> create_topic(const std::string& topic, int partitions,
                                                int replication_factor);
  // broker_id -1: all brokers. A down broker drops its connections and refuses new ones.
  std::expected<void, std::string> set_broker_down(std::int32_t broker_id);
  std::expected<void, std::string> set_broker_up(std::int32_t broker_id);
  std::expected<void, std::string> set_broker_rtt(std::int32_t broker_id, int rtt_ms);
  // The next `count` requests of api_key (on any broker) fail with `error`.
  void push_request_errors(std::int16_t api_key, rd_kafka_resp_err_t error, std::size_t count);
  void clear_request_errors(std::int16_t api_key);
  // Metadata requests naming `topic` get `error` from now on (UNKNOWN_TOPIC_OR_PART: clients
  // treat the topic as missing). The topic's records stay.
  void set_topic_error(const std::string& topic, rd_kafka_resp_err_t error);

 private:
  MockCluster(rd_kafka_t* handle, rd_kafka_mock_cluster_t* cluster, int brokers)
      : handle_(handle), cluster_(cluster), broker_count_(brokers) {}

  rd_kafka_t* handle_;
  rd_kafka_mock_cluster_t* cluster_;
  int broker_count_;
};

// A Kafka protocol API key from its name ("Produce", "fetch", "OffsetCommit") or number.
std::optional<std::int16_t> api_key_from_text(std::string_view text);

// An error code from its librdkafka name, with or without the RD_KAFKA_RESP_ERR_ prefix
// ("NOT_LEADER_FOR_PARTITION", "_TRANSPORT"), or its number.
std::optional<rd_kafka_resp_err_t> error_code_from_text(std::string_view text);

}  // namespace neardup::kafka
