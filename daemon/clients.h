// The librdkafka configuration of neardupd's clients (docs/configuration.md): its consumer's and
// its producer's properties for a role, built from the config.
#pragma once

#include <expected>
#include <string>

#include "config/config.h"
#include "daemon/role.h"
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

}  // namespace neardup::daemon
