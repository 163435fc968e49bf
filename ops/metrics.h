// Metrics: a small thread-safe registry of counters, gauges and fixed-bucket histograms,
// rendered in the Prometheus text exposition format (version 0.0.4), and the set of metrics
// neardupd exports (docs/operations.md).
//
// Usage: create one MetricsRegistry at start-up, then DaemonMetrics on it; hand the registry to
// MetricsServer (metrics_server.h). Families are registered once; a labelled child is looked up
// (under the family's mutex) by its label values and lives as long as the registry, so hot paths
// resolve their children once and keep the references. Updating a child is a relaxed atomic
// operation: lock-free and safe from any number of threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"

namespace neardup::ops {

// A monotonically increasing count. Relaxed atomic increment: a lock-free fetch_add costs a
// few nanoseconds even contended, far below the per-page work at 10^4..10^5 pages/s.
class Counter {
 public:
  void inc(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  alignas(64) std::atomic<std::uint64_t> value_{0};  // own cache line: no false sharing
};

// A value that goes up and down (index size, consumer lag).
class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  alignas(64) std::atomic<double> value_{0.0};
};

// Observations counted into fixed buckets. Bucket i counts values v with
// bounds[i-1] < v <= bounds[i] (Prometheus "le" semantics); the implicit last bucket is +Inf.
class Histogram {
 public:
  // `bounds` must be strictly increasing and finite (checked by the registry).
  explicit Histogram(std::span<const double> bounds);

  void observe(double value);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<std::uint64_t> cumulative;  // bounds.size() + 1 entries; the last is +Inf
    double sum = 0;
    std::uint64_t count() const { return cumulative.back(); }
  };
  // Bucket counts are read one by one while writers may run: each is exact, the set is a
  // near-instant view (as in every Prometheus client); count always equals the +Inf bucket.
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;  // per bucket, not cumulative
  alignas(64) std::atomic<double> sum_{0.0};
};

// Records the seconds from construction to destruction into a histogram.
class ScopedTimer {
 public:
  explicit ScopedTimer(Histogram& histogram)
      : histogram_(histogram), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() {
    histogram_.observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Histogram& histogram_;
  std::chrono::steady_clock::time_point start_;
};

enum class MetricType { kCounter, kGauge, kHistogram };

// One metric name with its HELP text and label names; children per label-value tuple.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;

  const std::string& name() const { return name_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends "# HELP", "# TYPE" and one sample line per child (several for a histogram).
  void render(std::string& out) const;

 protected:
  virtual void render_children(std::string& out) const = 0;
  // Throws std::invalid_argument unless one value is given per label name.
  void check_arity(std::size_t values) const;

  mutable Mutex mutex_;  // guards the children map, never the values

 private:
  std::string name_;
  std::string help_;
  MetricType type_;
  std::vector<std::string> label_names_;
};

template <typename T>
class Family : public FamilyBase {
 public:
  // make() builds a new child (so histograms carry their bounds).
  template <typename Make>
  Family(std::string name, std::string help, MetricType type, std::vector<std::string> labels,
         Make make)
      : FamilyBase(std::move(name), std::move(help), type, std::move(labels)),
        make_(std::move(make)) {}

  // The child for these label values (one per label name, in order), created on first use.
  // The reference stays valid until the child is removed or the registry is destroyed.
  // Throws std::invalid_argument on a wrong number of values (a programming error).
  T& labels(const std::vector<std::string>& values) {
    check_arity(values.size());
    MutexLock lock(mutex_);
    auto& slot = children_[values];
    if (!slot) slot = make_();
    return *slot;
  }
  // The only child of a family without labels.
  T& get() { return labels({}); }

  // Drops a child (e.g. the lag gauge of a revoked partition). References to it dangle.
  void remove(const std::vector<std::string>& values) {
    MutexLock lock(mutex_);
    children_.erase(values);
  }

 private:
  void render_children(std::string& out) const override;

  std::function<std::unique_ptr<T>()> make_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> children_ GUARDED_BY(mutex_);
};

// Defined in metrics.cc, one per value type.
template <>
void Family<Counter>::render_children(std::string& out) const;
template <>
void Family<Gauge>::render_children(std::string& out) const;
template <>
void Family<Histogram>::render_children(std::string& out) const;

// Owns the metric families; renders them in registration order.
//
// Registration validates names (metric: [a-zA-Z_:][a-zA-Z0-9_:]*, label: [a-zA-Z_][a-zA-Z0-9_]*,
// not starting with "__", "le" reserved for histograms) and throws std::invalid_argument on a bad
// or duplicate name or bad buckets: the names are compile-time constants, so these are
// programming errors, caught by the first test that builds the registry.
class MetricsRegistry {
 public:
  Family<Counter>& counter(std::string name, std::string help,
                           std::vector<std::string> label_names = {});
  Family<Gauge>& gauge(std::string name, std::string help,
                       std::vector<std::string> label_names = {});
  Family<Histogram>& histogram(std::string name, std::string help, std::vector<double> bounds,
                               std::vector<std::string> label_names = {});

  // Adds families computed at scrape time (process_* series): `render` appends complete
  // families ("# HELP", "# TYPE", samples) to the text, after the registered ones.
  void add_collector(std::function<void(std::string&)> render);

  // The whole registry in the text exposition format, version 0.0.4.
  std::string render() const;

 private:
  void add(std::unique_ptr<FamilyBase> family);

  mutable Mutex mutex_;
  std::vector<std::unique_ptr<FamilyBase>> families_ GUARDED_BY(mutex_);
  std::vector<std::function<void(std::string&)>> collectors_ GUARDED_BY(mutex_);
};

// Content-Type of render()'s output.
inline constexpr std::string_view kExpositionContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Escapes a label value: backslash, double quote and line feed.
std::string escape_label_value(std::string_view value);
// Formats a sample value: shortest round-trip decimal, "+Inf", "-Inf", "NaN".
std::string format_value(double value);

// The standard process_* series of Prometheus client libraries, read from /proc/self at each
// scrape: process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_start_time_seconds, process_open_fds,
// process_max_fds, plus process_threads. Families whose source cannot be read are left out.
void render_process_metrics(std::string& out);

// Default histogram buckets.
std::vector<double> stage_seconds_buckets();     // 10 µs .. 10 s
std::vector<double> probe_candidates_buckets();  // 0 .. 4096

// The pipeline stages timed by neardup_stage_seconds{stage}.
enum class Stage { kDecode, kDenoise, kFeatures, kFingerprint, kIndex, kProduce };
inline constexpr std::size_t kStageCount = 6;
std::string_view stage_name(Stage stage);

// neardupd's metrics (docs/operations.md), registered on construction. Children with a known label
// set are created up front, so every series is exported (as 0) from the first scrape.
struct DaemonMetrics {
  explicit DaemonMetrics(MetricsRegistry& registry);

  // neardup_build_info{version}: always 1; the labels say which build runs.
  Family<Gauge>& build_info;
  // neardup_role{role}: 1 for the role this process runs (single, fingerprint or index).
  Family<Gauge>& role;
  // neardup_ready: 1 while the daemon is ready (GET /readyz answers 200), else 0.
  Family<Gauge>& ready_family;
  Gauge& ready;

  Family<Counter>& pages_in_family;
  Counter& pages_in;  // neardup_pages_in_total: records consumed from the input topic

  Family<Counter>& pages_out;  // neardup_pages_out_total{status}
  Counter& pages_unique;
  Counter& pages_duplicate;
  Counter& pages_skipped;
  // The pre-resolved child for "unique" / "duplicate" / "skipped" (lock-free); any other status
  // goes through pages_out.labels().
  Counter& pages_out_for(std::string_view status);

  // neardup_dead_letters_total{reason}: reason is the neardup-error code (§3).
  Family<Counter>& dead_letters;

  Family<Histogram>& stage_seconds;  // neardup_stage_seconds{stage}
  Histogram& stage(Stage s) { return *stages_[static_cast<std::size_t>(s)]; }

  Family<Histogram>& probe_candidates_family;
  // neardup_probe_candidates: table entries compared with each looked-up page
  // (Verdict::candidates), observed for every page the index probed.
  Histogram& probe_candidates;

  Family<Gauge>& index_documents_family;
  Gauge& index_documents;  // neardup_index_documents
  Family<Gauge>& index_bytes_family;
  Gauge& index_bytes;  // neardup_index_bytes: bytes on disk
  // neardup_store_blocked: 1 while the store is out of space and the input is paused.
  Family<Gauge>& store_blocked_family;
  Gauge& store_blocked;

  // neardup_consumer_lag{group,topic,partition}: high watermark minus the consumer position.
  // Set per assigned partition; remove() the child on revoke.
  Family<Gauge>& consumer_lag;

  // neardup_partial_assignment: input partitions assigned to other members of the group at the
  // last rebalance (0 while this daemon owns them all; consumption is paused otherwise).
  Family<Gauge>& partial_assignment_family;
  Gauge& partial_assignment;

  // neardup_probe_capped_total: pages whose probe took only the first documents of a band key
  // shared by more (a near-copy storm: store/read_path.h, kBandCandidates).
  Family<Counter>& probe_capped_family;
  Counter& probe_capped;

  // neardup_source_conflicts_total: records that named a source offset already applied with
  // another record (Verdict::offset_conflict): each was decided afresh, not replayed.
  Family<Counter>& source_conflicts_family;
  Counter& source_conflicts;

  Family<Counter>& reloads;  // neardup_reloads_total{outcome}
  Counter& reloads_accepted;
  Counter& reloads_rejected;

 private:
  Histogram* stages_[kStageCount];
};

}  // namespace neardup::ops
