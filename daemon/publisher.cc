#include "daemon/publisher.h"

#include "common/log.h"

namespace neardup::daemon {
namespace {

using Clock = std::chrono::steady_clock;

// What a record batch of one record adds to its record's bytes (batch header 61 bytes, record
// header at most 21), so that a record is shrunk before the broker would refuse it.
constexpr std::uint64_t kBatchOverhead = 128;

}  // namespace

// One produced record, the opaque of its delivery report.
struct Publisher::Delivery {
  WorkPtr work;
  Verdict verdict;
  bool shrunk = false;
  bool dead_letter = false;
  std::string label;
  Clock::time_point produced_at;
};

Publisher::Publisher(KafkaConfig topics, bool transactional, ops::DaemonMetrics* metrics,
                     Callbacks callbacks, Render render)
    : topics_(std::move(topics)),
      transactional_(transactional),
      metrics_(metrics),
      callbacks_(std::move(callbacks)),
      render_(std::move(render)) {}

bool Publisher::publish(const WorkPtr& work, const Verdict& verdict,
                        const std::atomic<bool>* stop) {
  return produce(work, verdict, /*shrunk=*/false, stop);
}

bool Publisher::produce(const WorkPtr& work, const Verdict& verdict, bool shrunk,
                        const std::atomic<bool>* stop) {
  Outgoing out = render_(*work, verdict, topics_, shrunk);
  if (out.topic.empty()) {  // nothing to publish for this record: done at once
    callbacks_.delivered(*work);
    return true;
  }
  if (!shrunk) {
    auto limit = limits_.find(out.topic);
    if (limit != limits_.end() && out.size() + kBatchOverhead > limit->second) {
      logger("daemon")->warn(
          "record too large for topic={} source={} bytes={} max.message.bytes={}: published {}",
          out.topic, source_position(work->source()), out.size(), limit->second,
          out.dead_letter ? "with an empty value" : "without its body");
      return produce(work, verdict, /*shrunk=*/true, stop);
    }
  }
  auto delivery = std::make_unique<Delivery>(Delivery{.work = work,
                                                      .verdict = verdict,
                                                      .shrunk = shrunk,
                                                      .dead_letter = out.dead_letter,
                                                      .label = out.label,
                                                      .produced_at = Clock::now()});
  RdKafka::ErrorCode code = kafka::produce(*producer_, out.record(), delivery.get(), stop);
  if (code == RdKafka::ERR_MSG_SIZE_TOO_LARGE && !shrunk) {
    logger("daemon")->warn("record too large for topic={} source={} bytes={}: published {}",
                           out.topic, source_position(work->source()), out.size(),
                           out.dead_letter ? "with an empty value" : "without its body");
    return produce(work, verdict, /*shrunk=*/true, stop);
  }
  if (code != RdKafka::ERR_NO_ERROR) {
    callbacks_.fail("produce to " + out.topic + " failed source=" + source_position(work->source()) +
                    " error=" + kafka::error_name(code));
    return false;
  }
  delivery.release();  // owned by the delivery report from here on
  return true;
}

void Publisher::dr_cb(RdKafka::Message& message) {
  std::unique_ptr<Delivery> delivery(static_cast<Delivery*>(message.msg_opaque()));
  if (!delivery) {
    // A record that goes with an output (Stage::companions): not counted, but never lost.
    if (message.err() != RdKafka::ERR_NO_ERROR) {
      callbacks_.fail("delivery failed topic=" + message.topic_name() +
                      " error=" + kafka::error_name(message.err()) + ": " + message.errstr());
    }
    return;
  }
  const Work& work = *delivery->work;
  if (message.err() == RdKafka::ERR_MSG_SIZE_TOO_LARGE && !delivery->shrunk) {
    if (transactional_) {
      callbacks_.fail("record too large for topic=" + message.topic_name() +
                      " source=" + source_position(work.source()) +
                      " inside a transaction (its max.message.bytes could "
                      "not be read at start-up)");
      return;
    }
    logger("daemon")->warn("record too large for topic={} source={}: republished {}",
                           message.topic_name(), source_position(work.source()),
                           delivery->dead_letter ? "with an empty value" : "without its body");
    produce(delivery->work, delivery->verdict, /*shrunk=*/true, nullptr);
    return;
  }
  if (message.err() != RdKafka::ERR_NO_ERROR) {
    // librdkafka has retried until message.timeout.ms: the output is lost, so the offset must
    // never be stored. A restart replays it with its stored verdict.
    callbacks_.fail("delivery failed topic=" + message.topic_name() + " source=" + source_position(work.source()) +
                    " error=" + kafka::error_name(message.err()) + ": " + message.errstr());
    return;
  }
  count(*delivery);
  callbacks_.delivered(work);
}

void Publisher::count(const Delivery& delivery) {
  if (delivery.dead_letter) {
    dead_letters_ += 1;
  } else {
    outputs_ += 1;
  }
  if (!metrics_) return;
  if (delivery.dead_letter) {
    metrics_->dead_letters.labels({delivery.label}).inc();
  } else {
    metrics_->pages_out_for(delivery.label).inc();
  }
  metrics_->stage(ops::Stage::kProduce)
      .observe(std::chrono::duration<double>(Clock::now() - delivery.produced_at).count());
}

}  // namespace neardup::daemon
