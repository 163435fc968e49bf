// Publishes each record's output or dead letter (daemon/outgoing.h) through neardupd's
// producer and accounts for it on its delivery report (docs/delivery.md).
//
// A record is counted (neardup_pages_out_total{status} or neardup_dead_letters_total{reason},
// and counts()) when its delivery report says it was written, never before: a record that is
// republished is still one record. A record larger than its topic accepts is republished once
// without its body (outputs) or with an empty value (dead letters), with a warning; when the
// topic's max.message.bytes is known (set_size_limit) that happens before producing, otherwise
// when the broker refuses it (MSG_SIZE_TOO_LARGE). Any other delivery failure, after
// librdkafka's own retries, is fatal: the record's offset must never be stored.
//
// Thread-safe: publish() is called by the index thread, dr_cb by whichever thread serves the
// producer's delivery reports (which may republish).
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "config/config.h"
#include "daemon/outgoing.h"
#include "daemon/work.h"
#include "ops/metrics.h"
#include "store/index.h"

namespace neardup::daemon {

struct PublishedCounts {
  std::uint64_t outputs = 0;
  std::uint64_t dead_letters = 0;
};

class Publisher : public RdKafka::DeliveryReportCb {
 public:
  struct Callbacks {
    // The record's output (or dead letter) was written. Any thread serving delivery reports.
    std::function<void(const Work&)> delivered;
    // A record cannot be delivered; the daemon must stop without storing its offset.
    std::function<void(const std::string&)> fail;
  };

  // What to produce for a record and its verdict (`shrunk`: the smaller form, for a topic that
  // refused the full record): render_outgoing by default; the fingerprint role's
  // render_fingerprinted.
  using Render =
      std::function<Outgoing(const Work&, const Verdict&, const KafkaConfig&, bool shrunk)>;

  // `topics`: the output and dead-letter topics. `transactional`: records are produced inside
  // transactions, where a record the broker refused cannot be republished (the commit is
  // already under way): such a refusal is fatal. `metrics` may be null.
  Publisher(KafkaConfig topics, bool transactional, ops::DaemonMetrics* metrics,
            Callbacks callbacks, Render render = render_outgoing);

  // The producer to publish through; it must have been created with this object as its
  // dr_cb, and outlive every publish() and delivery report.
  void attach(RdKafka::Producer* producer) { producer_ = producer; }

  // A topic's max.message.bytes, when known: larger records are shrunk before producing.
  // Call before publishing starts.
  void set_size_limit(const std::string& topic, std::uint64_t bytes) { limits_[topic] = bytes; }

  // Renders and produces the record of `work` with its verdict; a rendered record without a
  // topic means there is nothing to publish, and the record is delivered at once. While the
  // producer's queue is full it serves delivery reports and retries, until `stop` becomes true.
  // Returns false (after calling the fail callback) when the record could not be enqueued.
  bool publish(const WorkPtr& work, const Verdict& verdict, const std::atomic<bool>* stop);

  PublishedCounts counts() const { return {outputs_.load(), dead_letters_.load()}; }

  void dr_cb(RdKafka::Message& message) override;

 private:
  struct Delivery;
  bool produce(const WorkPtr& work, const Verdict& verdict, bool shrunk,
               const std::atomic<bool>* stop);
  void count(const Delivery& delivery);

  const KafkaConfig topics_;
  const bool transactional_;
  ops::DaemonMetrics* const metrics_;
  const Callbacks callbacks_;
  const Render render_;
  RdKafka::Producer* producer_ = nullptr;
  std::map<std::string, std::uint64_t> limits_;
  std::atomic<std::uint64_t> outputs_{0}, dead_letters_{0};
};

}  // namespace neardup::daemon
