#include "kafka/client.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <thread>

#include "common/secret.h"

namespace neardup::kafka {
namespace {

template <typename Callback>
std::expected<void, std::string> set_callback_impl(RdKafka::Conf& conf, const std::string& name,
                                                   Callback* cb) {
  std::string error;
  if (conf.set(name, cb, error) != RdKafka::Conf::CONF_OK) {
    return std::unexpected(name + ": " + error);
  }
  return {};
}

}  // namespace

std::expected<Properties, std::string> parse_properties(const std::vector<std::string>& texts) {
  Properties properties;
  for (const auto& text : texts) {
    auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      return std::unexpected("--property " + text + ": expected NAME=VALUE");
    }
    properties.emplace_back(text.substr(0, equals), text.substr(equals + 1));
  }
  return properties;
}

std::expected<std::unique_ptr<RdKafka::Conf>, std::string> make_conf(const Properties& properties) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  for (const auto& [name, value] : properties) {
    std::string error;
    if (conf->set(name, value, error) != RdKafka::Conf::CONF_OK) {
      // librdkafka's reason may quote the value: a secret's is never repeated.
      if (is_secret_property(name) && !value.empty()) {
        for (auto at = error.find(value); at != std::string::npos; at = error.find(value, at)) {
          error.replace(at, value.size(), "<redacted>");
        }
      }
      return std::unexpected(name + ": " + error);
    }
  }
  return conf;
}

std::expected<void, std::string> set_callback(RdKafka::Conf& conf, const std::string& name,
                                              RdKafka::DeliveryReportCb* cb) {
  return set_callback_impl(conf, name, cb);
}
std::expected<void, std::string> set_callback(RdKafka::Conf& conf, const std::string& name,
                                              RdKafka::EventCb* cb) {
  return set_callback_impl(conf, name, cb);
}
std::expected<void, std::string> set_callback(RdKafka::Conf& conf, const std::string& name,
                                              RdKafka::RebalanceCb* cb) {
  return set_callback_impl(conf, name, cb);
}
std::expected<void, std::string> set_callback(RdKafka::Conf& conf, const std::string& name,
                                              RdKafka::OffsetCommitCb* cb) {
  return set_callback_impl(conf, name, cb);
}

std::expected<std::unique_ptr<RdKafka::Producer>, std::string> make_producer(RdKafka::Conf& conf) {
  std::string error;
  std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(&conf, error));
  if (!producer) return std::unexpected("cannot create producer: " + error);
  return producer;
}

std::expected<std::unique_ptr<RdKafka::KafkaConsumer>, std::string> make_consumer(
    RdKafka::Conf& conf) {
  std::string error;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(&conf, error));
  if (!consumer) return std::unexpected("cannot create consumer: " + error);
  return consumer;
}

RdKafka::ErrorCode produce(RdKafka::Producer& producer, const OutgoingRecord& record, void* opaque,
                           const std::atomic<bool>* stop) {
  while (true) {
    // librdkafka takes ownership of the headers only when produce() succeeds.
    RdKafka::Headers* headers = nullptr;
    if (!record.headers.empty()) {
      headers = RdKafka::Headers::create();
      for (const auto& [name, value] : record.headers) headers->add(name, value);
    }
    RdKafka::ErrorCode err =
        producer.produce(std::string(record.topic), record.partition,
                         RdKafka::Producer::RK_MSG_COPY, const_cast<char*>(record.value.data()),
                         record.value.size(), record.key ? record.key->data() : nullptr,
                         record.key ? record.key->size() : 0, record.timestamp_ms, headers, opaque);
    if (err == RdKafka::ERR_NO_ERROR) return err;
    delete headers;
    if (err != RdKafka::ERR__QUEUE_FULL) return err;
    if (stop && stop->load()) return err;
    // The queue drains as delivery reports are served.
    producer.poll(50);
  }
}

Headers message_headers(RdKafka::Message& message) {
  Headers result;
  RdKafka::Headers* headers = message.headers();
  if (!headers) return result;
  for (const RdKafka::Headers::Header& header : headers->get_all()) {
    result.emplace_back(
        header.key(),
        header.value() ? std::string(static_cast<const char*>(header.value()), header.value_size())
                       : std::string());
  }
  return result;
}

std::string source_string(const RdKafka::Message& message) {
  return message.topic_name() + "/" + std::to_string(message.partition()) + "/" +
         std::to_string(message.offset());
}

std::expected<void, Error> check(RdKafka::Error* error) {
  std::unique_ptr<RdKafka::Error> owned(error);
  if (!owned) return {};
  return std::unexpected(Error{.code = owned->code(),
                               .message = owned->name() + ": " + owned->str(),
                               .fatal = owned->is_fatal(),
                               .retriable = owned->is_retriable(),
                               .txn_requires_abort = owned->txn_requires_abort()});
}

std::string error_name(RdKafka::ErrorCode code) {
  return rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(code));
}

}  // namespace neardup::kafka
