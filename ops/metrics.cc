#include "ops/metrics.h"

#include <prometheus/check_names.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <stdexcept>

namespace neardup::ops {
namespace {

// HELP text escaped as the exposition format wants it (a backslash and a line feed): the text
// serializer of prometheus-cpp 1.0 writes it as it is given.
std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// prometheus-cpp checks names too, but its errors do not say which name.
void check_names(const std::string& name, const std::vector<std::string>& label_names,
                 bool histogram) {
  if (!prometheus::CheckMetricName(name)) {
    throw std::invalid_argument("invalid metric name '" + name + "'");
  }
  for (const auto& label : label_names) {
    if (!prometheus::CheckLabelName(label) || (histogram && label == "le")) {
      throw std::invalid_argument("invalid label name '" + label + "' on metric " + name);
    }
  }
}

}  // namespace

Histogram::Snapshot Histogram::snapshot() const {
  const prometheus::ClientMetric::Histogram collected = native_.Collect().histogram;
  Snapshot s;
  for (const auto& bucket : collected.bucket) {
    if (!std::isinf(bucket.upper_bound)) s.bounds.push_back(bucket.upper_bound);
    s.cumulative.push_back(bucket.cumulative_count);
  }
  s.sum = collected.sample_sum;
  return s;
}

prometheus::Labels FamilyBase::labels_of(const std::vector<std::string>& values) const {
  if (values.size() != label_names_.size()) {
    throw std::invalid_argument(name_ + ": expected " + std::to_string(label_names_.size()) +
                                " label values, got " + std::to_string(values.size()));
  }
  prometheus::Labels labels;
  for (std::size_t i = 0; i < values.size(); ++i) labels.emplace(label_names_[i], values[i]);
  return labels;
}

void FamilyBase::append(std::vector<prometheus::MetricFamily>& out,
                        std::vector<prometheus::MetricFamily> collected) const {
  if (collected.empty()) {
    out.push_back(prometheus::MetricFamily{.name = name_, .help = help_, .type = type_});
    return;
  }
  for (auto& family : collected) out.push_back(std::move(family));
}

MetricsRegistry::MetricsRegistry() : native_(prometheus::Registry::InsertBehavior::Throw) {}

template <typename T>
Family<T>& MetricsRegistry::add(std::unique_ptr<Family<T>> family) {
  Family<T>& ref = *family;
  {
    MutexLock lock(mutex_);
    families_.push_back(std::move(family));
  }
  if (ref.label_names().empty()) ref.get();  // export 0 before the first update
  return ref;
}

Family<Counter>& MetricsRegistry::counter(std::string name, std::string help,
                                          std::vector<std::string> label_names) {
  check_names(name, label_names, false);
  help = escape_help(help);
  auto& native = prometheus::BuildCounter().Name(name).Help(help).Register(native_);
  return add(std::make_unique<Family<Counter>>(
      std::move(name), std::move(help), prometheus::MetricType::Counter, std::move(label_names),
      native,
      [](prometheus::Family<prometheus::Counter>& f,
         const prometheus::Labels& labels) -> prometheus::Counter& { return f.Add(labels); }));
}

Family<Gauge>& MetricsRegistry::gauge(std::string name, std::string help,
                                      std::vector<std::string> label_names) {
  check_names(name, label_names, false);
  help = escape_help(help);
  auto& native = prometheus::BuildGauge().Name(name).Help(help).Register(native_);
  return add(std::make_unique<Family<Gauge>>(
      std::move(name), std::move(help), prometheus::MetricType::Gauge, std::move(label_names),
      native,
      [](prometheus::Family<prometheus::Gauge>& f,
         const prometheus::Labels& labels) -> prometheus::Gauge& { return f.Add(labels); }));
}

Family<Histogram>& MetricsRegistry::histogram(std::string name, std::string help,
                                              std::vector<double> bounds,
                                              std::vector<std::string> label_names) {
  check_names(name, label_names, true);
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      throw std::invalid_argument("histogram " + name +
                                  ": bucket bounds must be finite and strictly increasing");
    }
  }
  help = escape_help(help);
  auto& native = prometheus::BuildHistogram().Name(name).Help(help).Register(native_);
  return add(std::make_unique<Family<Histogram>>(
      std::move(name), std::move(help), prometheus::MetricType::Histogram, std::move(label_names),
      native,
      [bounds = std::move(bounds)](prometheus::Family<prometheus::Histogram>& f,
                                   const prometheus::Labels& labels) -> prometheus::Histogram& {
        return f.Add(labels, bounds);
      }));
}

void MetricsRegistry::add_collector(Collector collect) {
  MutexLock lock(mutex_);
  collectors_.push_back(std::move(collect));
}

std::string MetricsRegistry::render() const {
  std::vector<prometheus::MetricFamily> families;
  {
    MutexLock lock(mutex_);
    for (const auto& family : families_) family->collect(families);
    for (const auto& collect : collectors_) collect(families);
  }
  return prometheus::TextSerializer().Serialize(families);
}

std::vector<double> stage_seconds_buckets() {
  return {1e-5,  2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01,
          0.025, 0.05,   0.1,  0.25, 0.5,    1,    2.5,  5,      10};
}

std::vector<double> probe_candidates_buckets() {
  return {0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};
}

std::string_view stage_name(Stage stage) {
  switch (stage) {
    case Stage::kDecode:
      return "decode";
    case Stage::kDenoise:
      return "denoise";
    case Stage::kFeatures:
      return "features";
    case Stage::kFingerprint:
      return "fingerprint";
    case Stage::kIndex:
      return "index";
    case Stage::kProduce:
      return "produce";
  }
  return "unknown";
}

DaemonMetrics::DaemonMetrics(MetricsRegistry& r)
    : build_info(r.gauge("neardup_build_info", "Always 1; the labels name the running build.",
                         {"version"})),
      role(r.gauge("neardup_role",
                   "Always 1; the label names this process's role: single, fingerprint or index.",
                   {"role"})),
      ready_family(r.gauge("neardup_ready",
                           "1 while ready: index open, a broker reachable, partitions assigned.")),
      ready(ready_family.get()),
      pages_in_family(r.counter("neardup_pages_in_total", "Pages consumed from the input topic.")),
      pages_in(pages_in_family.get()),
      pages_out(r.counter("neardup_pages_out_total",
                          "Tagged pages produced to the output topic, by status.", {"status"})),
      pages_unique(pages_out.labels({"unique"})),
      pages_duplicate(pages_out.labels({"duplicate"})),
      pages_skipped(pages_out.labels({"skipped"})),
      dead_letters(r.counter("neardup_dead_letters_total",
                             "Records sent to the dead-letter topic, by error code.", {"reason"})),
      stage_seconds(r.histogram("neardup_stage_seconds", "Time spent per page in each stage.",
                                stage_seconds_buckets(), {"stage"})),
      probe_candidates_family(r.histogram(
          "neardup_probe_candidates", "Candidate fingerprints Hamming-checked per index lookup.",
          probe_candidates_buckets())),
      probe_candidates(probe_candidates_family.get()),
      index_documents_family(r.gauge("neardup_index_documents", "Documents stored in the index.")),
      index_documents(index_documents_family.get()),
      index_bytes_family(r.gauge("neardup_index_bytes", "Bytes the index occupies on disk.")),
      index_bytes(index_bytes_family.get()),
      store_blocked_family(r.gauge(
          "neardup_store_blocked",
          "1 while the store is out of space: input paused, the batch retried until it fits.")),
      store_blocked(store_blocked_family.get()),
      consumer_lag(r.gauge("neardup_consumer_lag", "Records behind the partition's high watermark.",
                           {"group", "topic", "partition"})),
      merge_wait(
          r.gauge("neardup_merge_wait_seconds",
                  "Age of the merge stage's oldest record still waiting for the shard's answer.",
                  {"shard"})),
      merge_waiting(r.gauge("neardup_merge_waiting_records",
                            "Records of the merge stage still waiting for the shard's answer.",
                            {"shard"})),
      merge_pages_on_disk_family(
          r.gauge("neardup_merge_pages_on_disk",
                  "Pages of records waiting for a shard that the merge stage keeps on disk.")),
      merge_pages_on_disk(merge_pages_on_disk_family.get()),
      partial_assignment_family(r.gauge(
          "neardup_partial_assignment",
          "Input partitions assigned to other members of the group; consumption paused if > 0.")),
      partial_assignment(partial_assignment_family.get()),
      probe_capped_family(r.counter(
          "neardup_probe_capped_total",
          "Pages whose probe took only the first documents of a band key shared by more.")),
      probe_capped(probe_capped_family.get()),
      source_conflicts_family(r.counter(
          "neardup_source_conflicts_total",
          "Records naming a source offset applied before with another record: decided afresh.")),
      source_conflicts(source_conflicts_family.get()),
      reloads(r.counter("neardup_reloads_total", "Configuration reloads (SIGHUP), by outcome.",
                        {"outcome"})),
      reloads_accepted(reloads.labels({"accepted"})),
      reloads_rejected(reloads.labels({"rejected"})) {
  for (std::size_t i = 0; i < kStageCount; ++i) {
    stages_[i] = &stage_seconds.labels({std::string(stage_name(static_cast<Stage>(i)))});
  }
  build_info.labels({NEARDUP_VERSION}).set(1);
  r.add_collector(collect_process_metrics);
}

Counter& DaemonMetrics::pages_out_for(std::string_view status) {
  if (status == "unique") return pages_unique;
  if (status == "duplicate") return pages_duplicate;
  if (status == "skipped") return pages_skipped;
  return pages_out.labels({std::string(status)});
}

}  // namespace neardup::ops
