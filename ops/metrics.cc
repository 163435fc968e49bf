#include "ops/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace neardup::ops {
namespace {

bool valid_name(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

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

std::string_view type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Appends `name{l1="v1",...,extra}` (no braces when there are no labels at all).
void append_series(std::string& out, std::string_view name, const std::vector<std::string>& keys,
                   const std::vector<std::string>& values, std::string_view extra_key = {},
                   std::string_view extra_value = {}) {
  out += name;
  if (keys.empty() && extra_key.empty()) return;
  out += '{';
  bool first = true;
  auto pair = [&](std::string_view k, std::string_view v) {
    if (!first) out += ',';
    first = false;
    out += k;
    out += "=\"";
    out += escape_label_value(v);
    out += '"';
  };
  for (std::size_t i = 0; i < keys.size(); ++i) pair(keys[i], values[i]);
  if (!extra_key.empty()) pair(extra_key, extra_value);
  out += '}';
}

void append_line(std::string& out, std::string_view value) {
  out += ' ';
  out += value;
  out += '\n';
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, end);
}

Histogram::Histogram(std::span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()),
      counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1)) {}

void Histogram::observe(double value) {
  // lower_bound: the first bound >= value, i.e. the smallest "le" bucket holding it.
  // NaN compares false everywhere and lands in +Inf.
  auto i = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                                    bounds_.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  s.cumulative.resize(bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = running;
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {
  if (!valid_name(name_, /*allow_colon=*/true)) {
    throw std::invalid_argument("invalid metric name '" + name_ + "'");
  }
  for (const auto& label : label_names_) {
    if (!valid_name(label, /*allow_colon=*/false) || label.starts_with("__") ||
        (type_ == MetricType::kHistogram && label == "le")) {
      throw std::invalid_argument("invalid label name '" + label + "' on metric " + name_);
    }
  }
}

void FamilyBase::check_arity(std::size_t values) const {
  if (values != label_names_.size()) {
    throw std::invalid_argument(name_ + ": expected " + std::to_string(label_names_.size()) +
                                " label values, got " + std::to_string(values));
  }
}

void FamilyBase::render(std::string& out) const {
  out += "# HELP ";
  out += name_;
  out += ' ';
  out += escape_help(help_);
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += type_name(type_);
  out += '\n';
  render_children(out);
}

template <>
void Family<Counter>::render_children(std::string& out) const {
  MutexLock lock(mutex_);
  for (const auto& [values, child] : children_) {
    append_series(out, name(), label_names(), values);
    append_line(out, std::to_string(child->value()));
  }
}

template <>
void Family<Gauge>::render_children(std::string& out) const {
  MutexLock lock(mutex_);
  for (const auto& [values, child] : children_) {
    append_series(out, name(), label_names(), values);
    append_line(out, format_value(child->value()));
  }
}

template <>
void Family<Histogram>::render_children(std::string& out) const {
  MutexLock lock(mutex_);
  const std::string bucket = name() + "_bucket";
  for (const auto& [values, child] : children_) {
    Histogram::Snapshot s = child->snapshot();
    for (std::size_t i = 0; i < s.cumulative.size(); ++i) {
      std::string le = i < s.bounds.size() ? format_value(s.bounds[i]) : "+Inf";
      append_series(out, bucket, label_names(), values, "le", le);
      append_line(out, std::to_string(s.cumulative[i]));
    }
    append_series(out, name() + "_sum", label_names(), values);
    append_line(out, format_value(s.sum));
    append_series(out, name() + "_count", label_names(), values);
    append_line(out, std::to_string(s.count()));
  }
}

void MetricsRegistry::add(std::unique_ptr<FamilyBase> family) {
  MutexLock lock(mutex_);
  for (const auto& existing : families_) {
    if (existing->name() == family->name()) {
      throw std::invalid_argument("metric " + family->name() + " registered twice");
    }
  }
  families_.push_back(std::move(family));
}

Family<Counter>& MetricsRegistry::counter(std::string name, std::string help,
                                          std::vector<std::string> label_names) {
  auto family = std::make_unique<Family<Counter>>(std::move(name), std::move(help),
                                                  MetricType::kCounter, std::move(label_names),
                                                  [] { return std::make_unique<Counter>(); });
  auto& ref = *family;
  add(std::move(family));
  if (ref.label_names().empty()) ref.get();  // export 0 before the first increment
  return ref;
}

Family<Gauge>& MetricsRegistry::gauge(std::string name, std::string help,
                                      std::vector<std::string> label_names) {
  auto family = std::make_unique<Family<Gauge>>(std::move(name), std::move(help),
                                                MetricType::kGauge, std::move(label_names),
                                                [] { return std::make_unique<Gauge>(); });
  auto& ref = *family;
  add(std::move(family));
  if (ref.label_names().empty()) ref.get();
  return ref;
}

Family<Histogram>& MetricsRegistry::histogram(std::string name, std::string help,
                                              std::vector<double> bounds,
                                              std::vector<std::string> label_names) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      throw std::invalid_argument("histogram " + name +
                                  ": bucket bounds must be finite and strictly increasing");
    }
  }
  auto family = std::make_unique<Family<Histogram>>(
      std::move(name), std::move(help), MetricType::kHistogram, std::move(label_names),
      [bounds = std::move(bounds)] { return std::make_unique<Histogram>(bounds); });
  auto& ref = *family;
  add(std::move(family));
  if (ref.label_names().empty()) ref.get();
  return ref;
}

void MetricsRegistry::add_collector(std::function<void(std::string&)> render) {
  MutexLock lock(mutex_);
  collectors_.push_back(std::move(render));
}

std::string MetricsRegistry::render() const {
  std::string out;
  MutexLock lock(mutex_);
  for (const auto& family : families_) family->render(out);
  for (const auto& collector : collectors_) collector(out);
  return out;
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
  r.add_collector(render_process_metrics);
}

Counter& DaemonMetrics::pages_out_for(std::string_view status) {
  if (status == "unique") return pages_unique;
  if (status == "duplicate") return pages_duplicate;
  if (status == "skipped") return pages_skipped;
  return pages_out.labels({std::string(status)});
}

}  // namespace neardup::ops
