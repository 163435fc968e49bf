// The librdkafka configuration of neardupd's clients (docs/configuration.md): its consumer's and
// its producer's properties for a role, built from the config.
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"

#include "config/config.h"
#include "daemon/role.h"
#include "kafka/admin.h"
#include "kafka/client.h"

namespace neardup::daemon {

// The producer's local limit; the broker (message.max.bytes / max.message.bytes) has the last
// word, and a record it refuses as too large is republished without its body.
inline constexpr const char* kProducerMessageMaxBytes = "1000000000";

// How often librdkafka reports consumer statistics (statistics.interval.ms), from which
// neardup_consumer_lag{partition} is set; kafka.properties may override it.
inline constexpr int kStatisticsMillis = 5000;

// The librdkafka properties of neardupd's consumer and producer: neardupd's own, then
// kafka.properties, then kafka.consumer_properties / kafka.producer_properties (each overriding
// the ones before), with {file: ...} and {env: ...} values read. The error names the property
// and why its value could not be read ("kafka.properties.sasl.password: file /x: cannot read:
// No such file or directory").
// `role` sets the consumer's group.id and the producer's transactional.id (exactly_once):
// "neardupd-<group>" (single), "neardupd-<group>-index", and for a fingerprint worker, of which
// several run at once, "neardupd-<group>-fingerprint-<host>-<pid>".
std::expected<kafka::Properties, std::string> consumer_properties(const Config& config,
                                                                  Role role = Role::kSingle);
std::expected<kafka::Properties, std::string> producer_properties(const Config& config,
                                                                  Role role = Role::kSingle);

// How long a check of the cluster waits for its metadata. When no broker answers at start (and
// kafka.exactly_once is off), the daemon starts anyway, not ready, and the consume loop repeats
// the check every kTopicRecheckMillis, and before it handles any record: a misspelt topic still
// stops it before anything is produced.
inline constexpr int kTopicCheckMillis = 5000;
inline constexpr int kTopicRecheckMillis = 2000;

// How long the start waits for the produced topics' max.message.bytes under kafka.exactly_once
// (a real broker answers at once; librdkafka 2.0's mock cluster never does).
inline constexpr int kDescribeConfigsMillis = 5000;

// neardupd's producer and consumer for `role`, their callbacks set (which must outlive them).
std::expected<std::unique_ptr<RdKafka::Producer>, std::string> make_daemon_producer(
    const Config& config, Role role, RdKafka::DeliveryReportCb* reports, RdKafka::EventCb* events);
std::expected<std::unique_ptr<RdKafka::KafkaConsumer>, std::string> make_daemon_consumer(
    const Config& config, Role role, RdKafka::EventCb* events, RdKafka::RebalanceCb* rebalances,
    RdKafka::OffsetCommitCb* commits);

// Whether the cluster holds what `stage` needs: every topic it names (the error lists the
// missing ones, or says no broker answered: TopicCheckError::unreachable) and what its
// check_cluster() asks (a configuration error too).
std::expected<void, kafka::TopicCheckError> check_cluster_for(RdKafka::Handle& handle,
                                                              const Stage& stage,
                                                              const std::string& bootstrap);

// Each topic's max.message.bytes (DescribeConfigs). Errors: the broker did not answer, or a
// value is not a number.
std::expected<std::map<std::string, std::uint64_t>, std::string> max_message_bytes(
    RdKafka::Handle& handle, const std::vector<std::string>& topics);

// Logs a librdkafka event of either client (errors, logs); returns the fatal error it reports,
// if it is one. `producer`: the client the event came from, when it is the producer (a fatal
// error's reason is read from it).
std::optional<std::string> log_kafka_event(RdKafka::Event& event, RdKafka::Producer* producer,
                                           spdlog::logger& log);

}  // namespace neardup::daemon
