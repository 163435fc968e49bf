#include "ops/metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <stdio.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

namespace neardup::ops {
namespace {

TEST(Metrics, CounterWithoutLabelsRendersHelpTypeAndZero) {
  MetricsRegistry r;
  r.counter("jobs_total", "Jobs done.");
  EXPECT_EQ(r.render(),
            "# HELP jobs_total Jobs done.\n"
            "# TYPE jobs_total counter\n"
            "jobs_total 0\n");
}

TEST(Metrics, LabelledCounterRendersOneSeriesPerLabelValueWithLabelsByName) {
  MetricsRegistry r;
  auto& out = r.counter("out_total", "Out.", {"status", "kind"});
  out.labels({"unique", "a"}).inc(3);
  out.labels({"duplicate", "b"}).inc();
  out.labels({"unique", "a"}).inc(2);
  const std::string text = r.render();
  EXPECT_TRUE(text.starts_with("# HELP out_total Out.\n# TYPE out_total counter\n")) << text;
  EXPECT_NE(text.find("\nout_total{kind=\"b\",status=\"duplicate\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("\nout_total{kind=\"a\",status=\"unique\"} 5\n"), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
}

TEST(Metrics, LabelValuesAndHelpAreEscaped) {
  MetricsRegistry r;
  r.gauge("g", "Line one\nback\\slash \"quoted\".", {"path"}).labels({"a\\b\"c\nd"}).set(1.5);
  EXPECT_EQ(r.render(),
            "# HELP g Line one\\nback\\\\slash \"quoted\".\n"
            "# TYPE g gauge\n"
            "g{path=\"a\\\\b\\\"c\\nd\"} 1.5\n");
}

TEST(Metrics, GaugeSetAndAdd) {
  MetricsRegistry r;
  auto& g = r.gauge("docs", "Documents.").get();
  g.set(10);
  g.add(-2.5);
  EXPECT_DOUBLE_EQ(g.value(), 7.5);
  EXPECT_NE(r.render().find("\ndocs 7.5\n"), std::string::npos);
}

TEST(Metrics, ValuesRenderAsTheTextFormatReadsThem) {
  MetricsRegistry r;
  auto& v = r.gauge("v", "V.", {"case"});
  v.labels({"integer"}).set(42);
  v.labels({"decimal"}).set(0.005);
  v.labels({"small"}).set(1e-5);
  v.labels({"large"}).set(1234567890123);
  v.labels({"inf"}).set(std::numeric_limits<double>::infinity());
  v.labels({"minus_inf"}).set(-std::numeric_limits<double>::infinity());
  const std::string text = r.render();
  for (const char* line : {"v{case=\"integer\"} 42\n", "v{case=\"decimal\"} 0.005\n",
                           "v{case=\"small\"} 1e-05\n", "v{case=\"large\"} 1234567890123\n",
                           "v{case=\"inf\"} +Inf\n", "v{case=\"minus_inf\"} -Inf\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
}

TEST(Metrics, HistogramRendersCumulativeBucketsSumAndCount) {
  MetricsRegistry r;
  auto& h = r.histogram("lat_seconds", "Latency.", {0.1, 1, 5}, {"stage"}).labels({"decode"});
  h.observe(0.05);
  h.observe(0.1);  // on the bound: le is inclusive
  h.observe(0.7);
  h.observe(100);
  EXPECT_EQ(r.render(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_count{stage=\"decode\"} 4\n"
            "lat_seconds_sum{stage=\"decode\"} 100.85\n"
            "lat_seconds_bucket{stage=\"decode\",le=\"0.1\"} 2\n"
            "lat_seconds_bucket{stage=\"decode\",le=\"1\"} 3\n"
            "lat_seconds_bucket{stage=\"decode\",le=\"5\"} 3\n"
            "lat_seconds_bucket{stage=\"decode\",le=\"+Inf\"} 4\n");
  const Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.bounds, (std::vector<double>{0.1, 1, 5}));
  EXPECT_EQ(s.cumulative, (std::vector<std::uint64_t>{2, 3, 3, 4}));
  EXPECT_DOUBLE_EQ(s.sum, 100.85);
}

TEST(Metrics, HistogramWithoutLabelsHasOnlyLe) {
  MetricsRegistry r;
  r.histogram("cands", "Candidates.", {0, 2}).get().observe(1);
  EXPECT_EQ(r.render(),
            "# HELP cands Candidates.\n"
            "# TYPE cands histogram\n"
            "cands_count 1\n"
            "cands_sum 1\n"
            "cands_bucket{le=\"0\"} 0\n"
            "cands_bucket{le=\"2\"} 1\n"
            "cands_bucket{le=\"+Inf\"} 1\n");
}

TEST(Metrics, FamiliesRenderInRegistrationOrderThenTheCollectors) {
  MetricsRegistry r;
  r.histogram("h", "H.", {1});
  r.gauge("g", "G.");
  r.counter("b_total", "B.");
  r.counter("a_total", "A.");
  r.add_collector([](std::vector<prometheus::MetricFamily>& out) {
    out.push_back({.name = "collected",
                   .help = "C.",
                   .type = prometheus::MetricType::Gauge,
                   .metric = {prometheus::ClientMetric{}}});
  });
  std::string text = r.render();
  EXPECT_LT(text.find("# TYPE h histogram"), text.find("# TYPE g gauge"));
  EXPECT_LT(text.find("# TYPE g gauge"), text.find("b_total"));
  EXPECT_LT(text.find("b_total"), text.find("a_total"));
  EXPECT_LT(text.find("a_total"), text.find("# TYPE collected gauge\ncollected 0\n"));
}

TEST(Metrics, RemovedChildIsNoLongerRendered) {
  MetricsRegistry r;
  auto& lag = r.gauge("lag", "Lag.", {"partition"});
  lag.labels({"0"}).set(5);
  lag.labels({"1"}).set(7);
  lag.remove({"0"});
  std::string text = r.render();
  EXPECT_EQ(text.find("partition=\"0\""), std::string::npos);
  EXPECT_NE(text.find("lag{partition=\"1\"} 7\n"), std::string::npos);
}

TEST(Metrics, AFamilyWithoutChildrenStillNamesItsMetric) {
  MetricsRegistry r;
  auto& lag = r.gauge("lag", "Lag.", {"partition"});
  EXPECT_EQ(r.render(), "# HELP lag Lag.\n# TYPE lag gauge\n");
  lag.labels({"0"}).set(5);
  lag.remove({"0"});
  EXPECT_EQ(r.render(), "# HELP lag Lag.\n# TYPE lag gauge\n");
}

TEST(Metrics, BadNamesLabelsAndBucketsAreRejected) {
  MetricsRegistry r;
  EXPECT_THROW(r.counter("9lives", "x"), std::invalid_argument);
  EXPECT_THROW(r.counter("has-dash", "x"), std::invalid_argument);
  EXPECT_THROW(r.counter("ok_total", "x", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h", "x", {1, 2}, {"le"}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h2", "x", {2, 1}), std::invalid_argument);
  r.counter("dup_total", "x");
  EXPECT_THROW(r.counter("dup_total", "x"), std::invalid_argument);
  auto& f = r.counter("labelled_total", "x", {"a"});
  EXPECT_THROW(f.labels({"1", "2"}), std::invalid_argument);
}

TEST(Metrics, ConcurrentIncrementsAllCount) {
  MetricsRegistry r;
  auto& family = r.counter("c_total", "C.", {"t"});
  auto& shared = r.counter("s_total", "S.").get();
  auto& hist = r.histogram("h", "H.", {0.5}).get();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Half the threads resolve the child once, half on every increment (the slow path).
      Counter& mine = family.labels({"x"});
      for (int i = 0; i < kPerThread; ++i) {
        shared.inc();
        (t % 2 ? mine : family.labels({"x"})).inc();
        hist.observe(i % 2 ? 1.0 : 0.25);
        if (i % 10000 == 0) (void)r.render();  // scrapes while writers run
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(shared.value(), std::uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(family.labels({"x"}).value(), std::uint64_t{kThreads} * kPerThread);
  auto s = hist.snapshot();
  EXPECT_EQ(s.count(), std::uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.cumulative[0], std::uint64_t{kThreads} * kPerThread / 2);
  EXPECT_DOUBLE_EQ(s.sum, kThreads * (kPerThread / 2) * 1.25);
}

TEST(Metrics, ScopedTimerObservesOnce) {
  MetricsRegistry r;
  auto& h = r.histogram("t_seconds", "T.", stage_seconds_buckets()).get();
  { ScopedTimer timer(h); }
  EXPECT_EQ(h.snapshot().count(), 1u);
  EXPECT_GE(h.snapshot().sum, 0.0);
}

TEST(DaemonMetrics, ExportsEveryDesignedSeriesFromTheStart) {
  MetricsRegistry r;
  DaemonMetrics m(r);
  std::string text = r.render();
  for (const char* line : {
           "# TYPE neardup_pages_in_total counter\nneardup_pages_in_total 0\n",
           "neardup_pages_out_total{status=\"unique\"} 0\n",
           "neardup_pages_out_total{status=\"duplicate\"} 0\n",
           "neardup_pages_out_total{status=\"skipped\"} 0\n",
           "# TYPE neardup_dead_letters_total counter\n",
           "neardup_stage_seconds_bucket{stage=\"decode\",le=\"1e-05\"} 0\n",
           "neardup_stage_seconds_count{stage=\"produce\"} 0\n",
           "neardup_probe_candidates_bucket{le=\"+Inf\"} 0\n",
           "neardup_index_documents 0\n",
           "neardup_index_bytes 0\n",
           "# TYPE neardup_consumer_lag gauge\n",
           "neardup_reloads_total{outcome=\"accepted\"} 0\n",
           "neardup_reloads_total{outcome=\"rejected\"} 0\n",
           "# TYPE neardup_ready gauge\nneardup_ready 0\n",
           "# TYPE neardup_build_info gauge\nneardup_build_info{version=\"" NEARDUP_VERSION "\"} 1\n",
           "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ",
           "# TYPE process_resident_memory_bytes gauge\n",
           "# TYPE process_start_time_seconds gauge\n",
           "# TYPE process_open_fds gauge\n",
           "# TYPE process_max_fds gauge\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
  for (std::string_view stage :
       {"decode", "denoise", "features", "fingerprint", "index", "produce"}) {
    EXPECT_NE(text.find("neardup_stage_seconds_sum{stage=\"" + std::string(stage) + "\"}"),
              std::string::npos)
        << stage;
  }
}

TEST(ProcessMetrics, ReportThisProcess) {
  auto render = [] {
    std::vector<prometheus::MetricFamily> families;
    collect_process_metrics(families);
    return prometheus::TextSerializer().Serialize(families);
  };
  std::string text = render();
  auto value = [&](const std::string& name) {
    auto at = text.find("\n" + name + " ");
    EXPECT_NE(at, std::string::npos) << name << " in\n" << text;
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
  };
  EXPECT_GT(value("process_resident_memory_bytes"), 1 << 20);
  EXPECT_GE(value("process_virtual_memory_bytes"), value("process_resident_memory_bytes"));
  EXPECT_GE(value("process_open_fds"), 3);  // stdin, stdout, stderr
  EXPECT_GE(value("process_max_fds"), value("process_open_fds"));
  EXPECT_GE(value("process_threads"), 1);
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  const double start = value("process_start_time_seconds");
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 24 * 3600);  // a test process started recently
  // CPU time grows with work.
  const double before = value("process_cpu_seconds_total");
  volatile double sink = 0;
  for (int i = 0; i < 200'000'000; ++i) sink = sink + i;
  text = render();
  EXPECT_GT(value("process_cpu_seconds_total"), before);
}

TEST(DaemonMetrics, HandlesReachTheRenderedSeries) {
  MetricsRegistry r;
  DaemonMetrics m(r);
  m.pages_in.inc(7);
  m.pages_out_for("duplicate").inc(2);
  m.pages_out_for("other").inc();
  m.dead_letters.labels({"not_json"}).inc();
  m.stage(Stage::kFingerprint).observe(0.002);
  m.probe_candidates.observe(3);
  m.index_documents.set(1234);
  m.consumer_lag.labels({"neardup", "pages", "3"}).set(17);
  m.reloads_rejected.inc();
  std::string text = r.render();
  EXPECT_NE(text.find("neardup_pages_in_total 7\n"), std::string::npos);
  EXPECT_NE(text.find("neardup_pages_out_total{status=\"duplicate\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("neardup_pages_out_total{status=\"other\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("neardup_dead_letters_total{reason=\"not_json\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("neardup_stage_seconds_bucket{stage=\"fingerprint\",le=\"0.0025\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("neardup_stage_seconds_bucket{stage=\"fingerprint\",le=\"0.001\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("neardup_probe_candidates_bucket{le=\"4\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("neardup_index_documents 1234\n"), std::string::npos);
  EXPECT_NE(
      text.find("neardup_consumer_lag{group=\"neardup\",partition=\"3\",topic=\"pages\"} 17\n"),
      std::string::npos);
  EXPECT_NE(text.find("neardup_reloads_total{outcome=\"rejected\"} 1\n"), std::string::npos);
}

// The text Prometheus scrapes is valid: `promtool check metrics` (Debian's prometheus) finds
// nothing to say about a daemon's registry with every kind of series in use.
TEST(DaemonMetrics, TheTextPassesPromtoolCheckMetrics) {
  MetricsRegistry r;
  DaemonMetrics m(r);
  m.dead_letters.labels({"not_json"}).inc();
  m.consumer_lag.labels({"neardup", "pages", "0"}).set(3);
  m.stage(Stage::kDecode).observe(0.001);
  const std::string path = ::testing::TempDir() + "metrics.txt";
  FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  const std::string text = r.render();
  std::fwrite(text.data(), 1, text.size(), file);
  std::fclose(file);
  FILE* promtool =
      popen((std::string(NEARDUP_PROMTOOL) + " check metrics < " + path + " 2>&1").c_str(), "r");
  ASSERT_NE(promtool, nullptr);
  std::string said;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, promtool)) said.append(buffer, n);
  EXPECT_EQ(pclose(promtool), 0) << said;
  EXPECT_EQ(said, "") << text;
}

}  // namespace
}  // namespace neardup::ops
