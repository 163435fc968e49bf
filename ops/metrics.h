// Metrics: counters, gauges and histograms on prometheus-cpp's registry (the core library of
// Debian's prometheus-cpp), rendered by its text serializer in the Prometheus exposition format
// (version 0.0.4), and the set of metrics neardupd exports (docs/operations.md).
//
// Usage: create one MetricsRegistry at start-up, then DaemonMetrics on it; hand the registry to
// MetricsServer (metrics_server.h). Families are registered once, with their label names; a
// labelled child is looked up (under the family's mutex) by its label values and lives until it
// is removed or the registry goes, so hot paths resolve their children once and keep the
// references. Updating a child is safe from any number of threads: a counter or gauge update is
// a compare-and-swap on an atomic double, a histogram observation takes the histogram's mutex
// (bench/RESULTS.md, "Metrics", has what each costs: about 190 ns of metrics a page).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"

namespace neardup::ops {

// A monotonically increasing count.
class Counter {
 public:
  using Native = prometheus::Counter;
  explicit Counter(Native& native) : native_(native) {}
  void inc(std::uint64_t n = 1) { native_.Increment(static_cast<double>(n)); }
  std::uint64_t value() const { return static_cast<std::uint64_t>(native_.Value()); }

 private:
  Native& native_;
};

// A value that goes up and down (index size, consumer lag).
class Gauge {
 public:
  using Native = prometheus::Gauge;
  explicit Gauge(Native& native) : native_(native) {}
  void set(double v) { native_.Set(v); }
  void add(double delta) { native_.Increment(delta); }
  double value() const { return native_.Value(); }

 private:
  Native& native_;
};

// Observations counted into fixed buckets. Bucket i counts values v with
// bounds[i-1] < v <= bounds[i] (Prometheus "le" semantics); the implicit last bucket is +Inf.
class Histogram {
 public:
  using Native = prometheus::Histogram;
  explicit Histogram(Native& native) : native_(native) {}
  void observe(double value) { native_.Observe(value); }

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<std::uint64_t> cumulative;  // bounds.size() + 1 entries; the last is +Inf
    double sum = 0;
    std::uint64_t count() const { return cumulative.back(); }
  };
  // The buckets, sum and count as one consistent view.
  Snapshot snapshot() const;

 private:
  Native& native_;
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

// One metric name with its label names; children per label-value tuple.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, prometheus::MetricType type,
             std::vector<std::string> label_names)
      : name_(std::move(name)),
        help_(std::move(help)),
        type_(type),
        label_names_(std::move(label_names)) {}
  virtual ~FamilyBase() = default;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  // Appends this family with its children's current values; a family without children still
  // appears (its HELP and TYPE), so a scrape names every metric from the start.
  virtual void collect(std::vector<prometheus::MetricFamily>& out) const = 0;

 protected:
  // The labels of a child: one value per label name, in order; throws std::invalid_argument on
  // a wrong number of values (a programming error).
  prometheus::Labels labels_of(const std::vector<std::string>& values) const;
  // Appends `collected` (the native family's Collect()), or the empty family when it is empty.
  void append(std::vector<prometheus::MetricFamily>& out,
              std::vector<prometheus::MetricFamily> collected) const;

 private:
  std::string name_;
  std::string help_;  // escaped for the text format
  prometheus::MetricType type_;
  std::vector<std::string> label_names_;
};

template <typename T>
class Family : public FamilyBase {
 public:
  using Native = typename T::Native;
  // add() makes the native child of some labels (so histograms carry their bounds).
  Family(std::string name, std::string help, prometheus::MetricType type,
         std::vector<std::string> label_names, prometheus::Family<Native>& native,
         std::function<Native&(prometheus::Family<Native>&, const prometheus::Labels&)> add)
      : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)),
        native_(native),
        add_(std::move(add)) {}

  // The child for these label values (one per label name, in order), created on first use.
  // The reference stays valid until the child is removed or the registry is destroyed.
  // Throws std::invalid_argument on a wrong number of values (a programming error).
  T& labels(const std::vector<std::string>& values) {
    prometheus::Labels labels = labels_of(values);
    MutexLock lock(mutex_);
    Child& child = children_[values];
    if (!child.handle) {
      child.native = &add_(native_, labels);
      child.handle = std::make_unique<T>(*child.native);
    }
    return *child.handle;
  }
  // The only child of a family without labels.
  T& get() { return labels({}); }

  // Drops a child (e.g. the lag gauge of a revoked partition). References to it dangle.
  void remove(const std::vector<std::string>& values) {
    MutexLock lock(mutex_);
    auto it = children_.find(values);
    if (it == children_.end()) return;
    native_.Remove(it->second.native);
    children_.erase(it);
  }

  void collect(std::vector<prometheus::MetricFamily>& out) const override {
    append(out, native_.Collect());
  }

 private:
  struct Child {
    Native* native = nullptr;   // owned by native_
    std::unique_ptr<T> handle;  // the reference labels() hands out
  };

  prometheus::Family<Native>& native_;
  std::function<Native&(prometheus::Family<Native>&, const prometheus::Labels&)> add_;
  Mutex mutex_;
  std::map<std::vector<std::string>, Child> children_ GUARDED_BY(mutex_);
};

// Owns the metric families and renders them, with the collectors' families after them.
//
// Registration validates names (metric: [a-zA-Z_:][a-zA-Z0-9_:]*, label: [a-zA-Z_][a-zA-Z0-9_]*,
// not starting with "__", "le" reserved for histograms) and throws std::invalid_argument on a bad
// or duplicate name or bad buckets: the names are compile-time constants, so these are
// programming errors, caught by the first test that builds the registry.
class MetricsRegistry {
 public:
  MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  Family<Counter>& counter(std::string name, std::string help,
                           std::vector<std::string> label_names = {});
  Family<Gauge>& gauge(std::string name, std::string help,
                       std::vector<std::string> label_names = {});
  Family<Histogram>& histogram(std::string name, std::string help, std::vector<double> bounds,
                               std::vector<std::string> label_names = {});

  // Adds families computed at scrape time (the process_* series): `collect` appends them.
  using Collector = std::function<void(std::vector<prometheus::MetricFamily>&)>;
  void add_collector(Collector collect);

  // The whole registry in the text exposition format, version 0.0.4: the families in order of
  // registration, then the collectors' families.
  std::string render() const;

 private:
  template <typename T>
  Family<T>& add(std::unique_ptr<Family<T>> family);

  // Owns the native families; throws on a name registered twice. Rendering goes through
  // families_ instead of its Collect(), which drops the families without children.
  prometheus::Registry native_;
  mutable Mutex mutex_;
  std::vector<std::unique_ptr<FamilyBase>> families_ GUARDED_BY(mutex_);
  std::vector<Collector> collectors_ GUARDED_BY(mutex_);
};

// Content-Type of render()'s output.
inline constexpr std::string_view kExpositionContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// The standard process_* series of Prometheus client libraries, read from /proc/self:
// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds, plus process_threads. Families
// whose source cannot be read are left out. prometheus-cpp has no process collector; this is
// MetricsRegistry's collector for them (DaemonMetrics adds it).
void collect_process_metrics(std::vector<prometheus::MetricFamily>& out);

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
  // neardup_role{role}: 1 for the role this process runs (single, fingerprint, index, shard or
  // merge).
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

  // neardup_merge_wait_seconds{shard}: a merge stage's oldest record still waiting for that
  // shard's answer, in seconds (0: none waits for it).
  Family<Gauge>& merge_wait;
  // neardup_merge_waiting_records{shard}: a merge stage's records still waiting for that shard's
  // answer (the shard's lag as the merge stage sees it).
  Family<Gauge>& merge_waiting;
  // neardup_merge_pages_on_disk: pages of waiting records a merge stage keeps on disk (past the
  // ones it holds in memory).
  Family<Gauge>& merge_pages_on_disk_family;
  Gauge& merge_pages_on_disk;

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
