// The cost of neardupd's metrics (ops/metrics.h): the updates each page makes on the hot path,
// alone and from several threads at once, and a scrape of the whole registry (GET /metrics).
//
//   bench/metrics_bench [--benchmark_repetitions=5]
//
// Results and the machine are in bench/RESULTS.md ("Metrics").
#include <benchmark/benchmark.h>

#include "ops/metrics.h"

namespace neardup::ops {
namespace {

// One registry for every benchmark, with children like a running daemon's: a few dead-letter
// reasons and a lag gauge per assigned partition.
struct Daemon {
  Daemon() : metrics(registry) {
    for (const char* reason : {"not_json", "missing_field", "invalid_base64"}) {
      metrics.dead_letters.labels({reason}).inc();
    }
    for (int partition = 0; partition < 12; ++partition) {
      metrics.consumer_lag.labels({"neardup", "pages", std::to_string(partition)}).set(partition);
    }
  }
  MetricsRegistry registry;
  DaemonMetrics metrics;
};

Daemon& daemon() {
  static Daemon d;
  return d;
}

// neardup_pages_in_total: one increment per record consumed.
void BM_CounterIncrement(benchmark::State& state) {
  Counter& counter = daemon().metrics.pages_in;
  for (auto _ : state) counter.inc();
}
BENCHMARK(BM_CounterIncrement)->Threads(1)->Threads(2)->Threads(4);

// neardup_stage_seconds{stage="decode"}: one observation per page, from every worker.
void BM_StageObserve(benchmark::State& state) {
  Histogram& decode = daemon().metrics.stage(Stage::kDecode);
  double seconds = 1e-5;
  for (auto _ : state) {
    decode.observe(seconds);
    seconds = seconds < 1 ? seconds * 1.7 : 1e-5;  // walk the buckets
  }
}
BENCHMARK(BM_StageObserve)->Threads(1)->Threads(2)->Threads(4);

// Everything one page costs in the single role: its four pipeline stages observed by a worker,
// then pages_in, the index and produce stages, the probe candidates and the status counter.
void BM_OnePage(benchmark::State& state) {
  DaemonMetrics& m = daemon().metrics;
  for (auto _ : state) {
    m.pages_in.inc();
    m.stage(Stage::kDecode).observe(2e-4);
    m.stage(Stage::kDenoise).observe(6e-4);
    m.stage(Stage::kFeatures).observe(3e-4);
    m.stage(Stage::kFingerprint).observe(1e-4);
    m.stage(Stage::kIndex).observe(2e-5);
    m.probe_candidates.observe(3);
    m.stage(Stage::kProduce).observe(5e-5);
    m.pages_out_for("unique").inc();
  }
}
BENCHMARK(BM_OnePage)->Threads(1)->Threads(2);

// GET /metrics: the whole registry as text, process_* series included (they read /proc).
void BM_Scrape(benchmark::State& state) {
  const MetricsRegistry& registry = daemon().registry;
  std::size_t bytes = 0;
  for (auto _ : state) bytes = registry.render().size();
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Scrape);

}  // namespace
}  // namespace neardup::ops

BENCHMARK_MAIN();
