#include "daemon/clients.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>

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
    if (role == Role::kShard) {
      id += "-" + config.kafka.candidates_topic + "-shard-" + std::to_string(config.store.shard);
      if (config.store.replica) id += "-replica";  // never fences its primary, nor is fenced
    }
    // Workers and merge stages come and go: each has its own id (KIP-447 fences a zombie by the
    // group's generation, not by the id). A crashed one's open transaction is aborted by the
    // broker after transaction.timeout.ms.
    if (role == Role::kFingerprint || role == Role::kMerge) {
      id += std::string("-") + std::string(role_name(role)) + "-" + host_name() + "-" +
            std::to_string(getpid());
    }
    properties.emplace_back("transactional.id", std::move(id));
  }
  return with_configured(std::move(properties), config, config.kafka.producer_properties,
                         "kafka.producer_properties");
}

std::expected<std::unique_ptr<RdKafka::Producer>, std::string> make_daemon_producer(
    const Config& config, Role role, RdKafka::DeliveryReportCb* reports,
    RdKafka::EventCb* events) {
  auto settings = producer_properties(config, role);
  if (!settings) return std::unexpected(settings.error());
  auto conf = kafka::make_conf(*settings);
  if (!conf) return std::unexpected("kafka producer: " + conf.error());
  for (auto set : {kafka::set_callback(**conf, "dr_cb", reports),
                   kafka::set_callback(**conf, "event_cb", events)}) {
    if (!set) return std::unexpected(set.error());
  }
  return kafka::make_producer(**conf);
}

std::expected<std::unique_ptr<RdKafka::KafkaConsumer>, std::string> make_daemon_consumer(
    const Config& config, Role role, RdKafka::EventCb* events, RdKafka::RebalanceCb* rebalances,
    RdKafka::OffsetCommitCb* commits) {
  auto settings = consumer_properties(config, role);
  if (!settings) return std::unexpected(settings.error());
  auto conf = kafka::make_conf(*settings);
  if (!conf) return std::unexpected("kafka consumer: " + conf.error());
  for (auto set : {kafka::set_callback(**conf, "event_cb", events),
                   kafka::set_callback(**conf, "rebalance_cb", rebalances),
                   kafka::set_callback(**conf, "offset_commit_cb", commits)}) {
    if (!set) return std::unexpected(set.error());
  }
  return kafka::make_consumer(**conf);
}

std::expected<void, kafka::TopicCheckError> check_cluster_for(RdKafka::Handle& handle,
                                                              const Stage& stage,
                                                              const std::string& bootstrap) {
  if (auto present =
          kafka::require_topics(handle, stage.required_topics(), bootstrap, kTopicCheckMillis);
      !present) {
    return present;
  }
  if (auto matched = stage.check_cluster(handle); !matched) {
    return std::unexpected(kafka::TopicCheckError{.message = matched.error()});
  }
  return {};
}

std::expected<std::map<std::string, std::uint64_t>, std::string> max_message_bytes(
    RdKafka::Handle& handle, const std::vector<std::string>& topics) {
  auto texts = kafka::topic_configs(handle, topics, "max.message.bytes", kDescribeConfigsMillis);
  if (!texts) return std::unexpected(texts.error());
  std::map<std::string, std::uint64_t> limits;
  for (const auto& [topic, text] : *texts) {
    std::uint64_t bytes = 0;
    if (std::from_chars(text.data(), text.data() + text.size(), bytes).ec != std::errc()) {
      return std::unexpected("topic " + topic + ": max.message.bytes is not a number: " + text);
    }
    limits[topic] = bytes;
  }
  return limits;
}

std::optional<std::string> log_kafka_event(RdKafka::Event& event, RdKafka::Producer* producer,
                                           spdlog::logger& log) {
  switch (event.type()) {
    case RdKafka::Event::EVENT_ERROR:
      if (event.fatal()) {
        std::string reason;
        RdKafka::ErrorCode code = producer ? producer->fatal_error(reason) : event.err();
        return "kafka fatal error " + kafka::error_name(code) + ": " +
               (reason.empty() ? event.str() : reason);
      }
      log.warn("kafka error={} detail={}", kafka::error_name(event.err()), event.str());
      break;
    case RdKafka::Event::EVENT_LOG:
      // Connection failures also arrive as EVENT_ERROR (logged above): log them once.
      if (event.fac() == "FAIL") break;
      if (event.severity() <= RdKafka::Event::EVENT_SEVERITY_ERROR) {
        log.error("kafka {} {}", event.fac(), event.str());
      } else if (event.severity() <= RdKafka::Event::EVENT_SEVERITY_WARNING) {
        log.warn("kafka {} {}", event.fac(), event.str());
      } else {
        log.debug("kafka {} {}", event.fac(), event.str());
      }
      break;
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace neardup::daemon
