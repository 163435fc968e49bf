#include "daemon/clients.h"

#include <unistd.h>

#include <algorithm>

#include "daemon/in_flight.h"

namespace neardup::daemon {
namespace {

// `properties` followed by kafka.properties and then one client's own map (`client`, at
// `client_path`), with {file: ...} and {env: ...} values read.
std::expected<kafka::Properties, std::string> with_configured(kafka::Properties properties,
                                                              const Config& config,
                                                              const PropertyMap& client,
                                                              const std::string& client_path) {
  for (const auto& [extra, path] : {std::pair{&config.kafka.properties, "kafka.properties"},
                                    std::pair{&client, client_path.c_str()}}) {
    for (const auto& [name, value] : *extra) {
      auto text = resolve_property(value);
      if (!text) return std::unexpected(std::string(path) + "." + name + ": " + text.error());
      properties.emplace_back(name, std::move(*text));
    }
  }
  return properties;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace

std::expected<kafka::Properties, std::string> consumer_properties(const Config& config, Role role) {
  kafka::Properties properties = {
      {"bootstrap.servers", config.kafka.bootstrap_servers},
      {"group.id", consumer_group(config, role)},
      // A new group starts at the oldest page: a crawl pipeline must not skip what it missed.
      {"auto.offset.reset", "earliest"},
      // Offsets are stored by the daemon once outputs are delivered (docs/delivery.md).
      {"enable.auto.offset.store", "false"},
      {"enable.auto.commit", config.kafka.exactly_once ? "false" : "true"},
      {"auto.commit.interval.ms", "1000"},
      // The prefetch queue (one for all partitions) holds about a second of input at full
      // speed. When it is full the fetcher stops, and librdkafka 2.0 looks at it again only
      // when its broker thread wakes (I/O, an operation, or once a second): a queue that
      // drains sooner leaves the daemon waiting for records. At 16 MiB that cost 0.25-0.5 s
      // stalls and half the throughput (daemon/README.md, Backpressure).
      {"queued.max.messages.kbytes", "65536"},
      {"isolation.level", "read_committed"},
      // Per-partition consumer_lag for neardup_consumer_lag (event_cb, EVENT_STATS).
      {"statistics.interval.ms", std::to_string(kStatisticsMillis)},
  };
  return with_configured(std::move(properties), config, config.kafka.consumer_properties,
                         "kafka.consumer_properties");
}

std::expected<kafka::Properties, std::string> producer_properties(const Config& config, Role role) {
  kafka::Properties properties = {
      {"bootstrap.servers", config.kafka.bootstrap_servers},
      {"enable.idempotence", "true"},
      {"message.max.bytes", kProducerMessageMaxBytes},
      // In-flight pages are bounded before the producer; its queue holds at most those.
      {"queue.buffering.max.messages",
       std::to_string(std::max<std::uint32_t>(config.pipeline.max_in_flight, 1) * 2 + 1024)},
      {"queue.buffering.max.kbytes", std::to_string(2 * (kMaxInFlightBytes >> 10))},
      // Outputs wait up to 20 ms to join a batch. At librdkafka's 5 ms, a partition's batch
      // held one or two pages and the producer's broker thread, waking for each, took about 6 %
      // of two cores (2 % at 20 ms; daemon/README.md, Producer). A transaction's commit flushes
      // at once whatever the linger.
      {"linger.ms", "20"},
  };
  if (config.kafka.exactly_once) {
    std::string id = "neardupd-" + config.kafka.group_id;
    if (role == Role::kIndex) id += "-index";
    // Workers come and go: each has its own id (KIP-447 fences a zombie by the group's
    // generation, not by the id). A crashed worker's open transaction is aborted by the broker
    // after transaction.timeout.ms.
    if (role == Role::kFingerprint) {
      id += "-fingerprint-" + host_name() + "-" + std::to_string(getpid());
    }
    properties.emplace_back("transactional.id", std::move(id));
  }
  return with_configured(std::move(properties), config, config.kafka.producer_properties,
                         "kafka.producer_properties");
}

}  // namespace neardup::daemon
