// Reads the per-partition consumer lag out of librdkafka's statistics JSON (STATISTICS.md),
// which the consumer emits every statistics.interval.ms through its event callback
// (EVENT_STATS). The daemon turns it into neardup_consumer_lag{partition}.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/offset_tracker.h"

namespace neardup::daemon {

// (partition, consumer_lag) for every partition of a consumer's statistics report whose lag is
// known: topics.<topic>.partitions.<n>.consumer_lag, the high watermark (or, under
// read_committed, the last stable offset) minus the committed offset. Partitions with lag -1
// (not known yet) and librdkafka's internal partition -1 are left out. A producer's report,
// text that is not JSON, or a report of another shape gives an empty list.
std::vector<std::pair<PartitionId, std::int64_t>> consumer_lags(std::string_view stats_json);

// How many of the cluster's brokers a consumer's statistics report shows connected: brokers
// with a node id (not the bootstrap entries, nodeid -1) in state "UP". None for a producer's
// report or text of another shape. For readiness (Daemon::readiness).
std::optional<int> brokers_up(std::string_view stats_json);

}  // namespace neardup::daemon
