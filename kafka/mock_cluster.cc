#include "kafka/mock_cluster.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <utility>
#include <vector>

#include "common/ascii.h"

namespace neardup::kafka {
namespace {

std::expected<void, std::string> check(const char* call, rd_kafka_resp_err_t err) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return {};
  return std::unexpected(std::string(call) + ": " + rd_kafka_err2str(err));
}

template <typename Int>
std::optional<Int> parse_int(std::string_view text) {
  Int value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Kafka protocol API keys (kafka.apache.org/protocol#protocol_api_keys).
constexpr std::array<std::pair<std::string_view, std::int16_t>, 25> kApiKeys{{
    {"produce", 0},
    {"fetch", 1},
    {"listoffsets", 2},
    {"metadata", 3},
    {"offsetcommit", 8},
    {"offsetfetch", 9},
    {"findcoordinator", 10},
    {"joingroup", 11},
    {"heartbeat", 12},
    {"leavegroup", 13},
    {"syncgroup", 14},
    {"describegroups", 15},
    {"listgroups", 16},
    {"saslhandshake", 17},
    {"apiversions", 18},
    {"createtopics", 19},
    {"deletetopics", 20},
    {"deleterecords", 21},
    {"initproducerid", 22},
    {"offsetforleaderepoch", 23},
    {"addpartitionstotxn", 24},
    {"addoffsetstotxn", 25},
    {"endtxn", 26},
    {"txnoffsetcommit", 28},
    {"describeconfigs", 32},
}};

}  // namespace

std::expected<std::unique_ptr<MockCluster>, std::string> MockCluster::start(int brokers) {
  if (brokers < 1) return std::unexpected("broker count must be at least 1");
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The hosting handle never connects anywhere; keep its own logging quiet.
  if (rd_kafka_conf_set(conf, "log_level", "3", error, sizeof(error)) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return std::unexpected(std::string("log_level: ") + error);
  }
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
  if (!handle) {
    rd_kafka_conf_destroy(conf);
    return std::unexpected(std::string("cannot create the mock cluster's handle: ") + error);
  }
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(handle, brokers);
  if (!cluster) {
    rd_kafka_destroy(handle);
    return std::unexpected("rd_kafka_mock_cluster_new failed");
  }
  return std::unique_ptr<MockCluster>(new MockCluster(handle, cluster, brokers));
}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(handle_);
}

std::string MockCluster::bootstrap_servers() const {
  return rd_kafka_mock_cluster_bootstraps(cluster_);
}

std::expected<void, std::string> MockCluster::create_topic(const std::string& topic, int partitions,
                                                           int replication_factor) {
  return check("rd_kafka_mock_topic_create",
               rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, replication_factor));
}

std::expected<void, std::string> MockCluster::set_broker_down(std::int32_t broker_id) {
  return check("rd_kafka_mock_broker_set_down", rd_kafka_mock_broker_set_down(cluster_, broker_id));
}

std::expected<void, std::string> MockCluster::set_broker_up(std::int32_t broker_id) {
  return check("rd_kafka_mock_broker_set_up", rd_kafka_mock_broker_set_up(cluster_, broker_id));
}

std::expected<void, std::string> MockCluster::set_broker_rtt(std::int32_t broker_id, int rtt_ms) {
  return check("rd_kafka_mock_broker_set_rtt",
               rd_kafka_mock_broker_set_rtt(cluster_, broker_id, rtt_ms));
}

void MockCluster::push_request_errors(std::int16_t api_key, rd_kafka_resp_err_t error,
                                      std::size_t count) {
  std::vector<rd_kafka_resp_err_t> errors(count, error);
  rd_kafka_mock_push_request_errors_array(cluster_, api_key, count, errors.data());
}

void MockCluster::clear_request_errors(std::int16_t api_key) {
  rd_kafka_mock_clear_request_errors(cluster_, api_key);
}

void MockCluster::set_topic_error(const std::string& topic, rd_kafka_resp_err_t error) {
  rd_kafka_mock_topic_set_error(cluster_, topic.c_str(), error);
}

std::optional<std::int16_t> api_key_from_text(std::string_view text) {
  if (auto number = parse_int<std::int16_t>(text)) return number;
  std::string name = ascii_lowercase(text);
  for (const auto& [known, key] : kApiKeys) {
    if (known == name) return key;
  }
  return std::nullopt;
}

std::optional<rd_kafka_resp_err_t> error_code_from_text(std::string_view text) {
  if (auto number = parse_int<int>(text)) return static_cast<rd_kafka_resp_err_t>(*number);
  constexpr std::string_view kPrefix = "RD_KAFKA_RESP_ERR_";
  std::string name(text);
  std::ranges::transform(name, name.begin(), [](unsigned char c) { return std::toupper(c); });
  if (name.starts_with(kPrefix)) name.erase(0, kPrefix.size());
  const rd_kafka_err_desc* descs = nullptr;
  std::size_t count = 0;
  rd_kafka_get_err_descs(&descs, &count);
  for (std::size_t i = 0; i < count; ++i) {
    if (descs[i].name && name == descs[i].name) return descs[i].code;
  }
  return std::nullopt;
}

}  // namespace neardup::kafka
