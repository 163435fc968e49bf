// store_bench: lookup+insert throughput and latency of the index at a given size.
//
//   store_bench --dir /tmp/nd-bench --stored 10000000 --measure 1000000 [--batch 1000]
//               [--sync 0|1] [--readahead 0|1] [--k 3] [--tables 0] [--expected 0]
//               [--delta 2097152] [--dups 0.1]
//               [--table-filter-bits 8]
//               [--seed 1]
//               [--minhash 1] [--wide 1] [--bands 0 --rows 0] [--passages 0]
//               [--shards 1 --shard 0]
//               [--ids sequential|random]
//
// Fills the index to --stored pages (random fingerprints and, with --minhash 1, random
// 128-value sketches in the store's LSH design: --bands and --rows, or 0 x 0 for the default,
// common/sketch.h kDefaultLsh; with --wide 1, as the pipeline gives them, each value's upper
// 16 bits besides, so that a new store's scheme bands by wide keys; --dups of them near-duplicates
// of an earlier page: a few fingerprint bits and a quarter of the sketch values changed; 45-byte
// URL ids, one Kafka-like partition with pending verdicts trimmed every batch, as the daemon does;
// with --passages N, N anchors and N / 6 paragraph hashes a page, a copy keeping three quarters of
// its original's), unless the directory already holds that many; then applies
// --measure more and prints one line of results: items/s (wall and CPU time of the apply() and
// trim_pending() calls, including merges and commits; generating the pages is not timed), per-item
// lookup+insert latency p50/p99/p999/max measured inside the batch transaction, per-batch commit
// time, merge time, and bytes on disk per page; then the anonymous memory by part, and the heap
// as glibc counts it (mallinfo2: in use, and freed but still held). With --shards S --shard j the
// store is shard j of an index split by table and band (docs/scale-out.md): it indexes its share of
// the tables and bands of the same pages. The ids are https://www.example.com/articles/ and the
// page's number (sequential: consecutive pages share all but their last digits), or with --ids
// random as long, a host of 8 letters and a path of 20 drawn at random, so that two pages share no
// more than their scheme: the two ends of what storing ids in blocks (store/FORMAT.md, "docs")
// saves. The store's design is --tables, or with --tables 0 the one store.expected_documents
// derives: --expected, or with --expected 0 the --stored count.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/mix.h"
#include "store/index.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string dir = "/tmp/nd-store-bench";
  std::uint64_t stored = 1'000'000, measure = 200'000, batch = 1000, delta = 1ull << 21;
  std::uint32_t k = 3, tables = 0;
  std::uint64_t expected = 0;  // store.expected_documents; 0: the stored count
  std::uint32_t table_filter_bits = neardup::StoreConfig{}.table_filter_bits;
  bool sync = false;
  bool readahead = true;  // store.readahead
  bool minhash = true;
  bool wide = true;        // pages carry their sketches' upper values (common/sketch.h)
  neardup::LshDesign lsh;  // minhash.bands, minhash.rows: 0 x 0 leaves them to the store
  double dups = 0.1;
  std::uint32_t shards = 1, shard = 0;  // store.shards, store.shard
  std::uint32_t passages = 0;
  bool random_ids = false;  // --ids random
  std::uint64_t seed = 1;
};

// RssAnon of this process (/proc/self/status), in bytes; 0 when unknown.
std::uint64_t rss_anon_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  std::uint64_t kib = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "RssAnon: %" SCNu64, &kib) == 1) break;
  }
  std::fclose(f);
  return kib * 1024;
}

double percentile(std::vector<std::uint32_t> v, double p) {
  if (v.empty()) return 0;
  std::size_t at = std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(at), v.end());
  return v[at] / 1000.0;
}

double sum_ns(const std::vector<std::uint32_t>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

// The i-th page of the deterministic workload. Near-duplicates copy a page among the last
// kRecent (sketches are kept for those only).
struct Workload {
  static constexpr std::size_t kRecent = 1 << 16, kHashes = 128;
  std::mt19937_64 rng;
  std::vector<std::uint64_t> fingerprints;
  std::vector<neardup::Sketch> recent, recent_upper;
  double dups;
  bool minhash, wide = true;
  neardup::LshDesign lsh;
  std::uint32_t passages;  // anchors a page (and a sixth as many paragraph hashes); 0: none
  bool random_ids;
  Workload(std::uint64_t seed, double d, bool m, neardup::LshDesign l, std::uint32_t p, bool r)
      : rng(seed), dups(d), minhash(m), lsh(l), passages(p), random_ids(r) {}
  // Page i's j-th passage key (anchors, then paragraphs): a function of (i, j) alone, so that a
  // copy of page `from` can take its keys without keeping them.
  static std::uint64_t passage_key(std::uint64_t i, std::uint64_t j) {
    return neardup::mix64(i * 0x10000 + j + 1);
  }
  // Heap bytes the workload holds (not the index's): every page's fingerprint, recent sketches.
  std::uint64_t memory() const {
    std::uint64_t bytes = fingerprints.capacity() * sizeof(std::uint64_t) +
                          recent.capacity() * sizeof(neardup::Sketch);
    for (const auto& sketch : recent) bytes += sketch.capacity() * sizeof(std::uint16_t);
    bytes += recent_upper.capacity() * sizeof(neardup::Sketch);
    for (const auto& upper : recent_upper) bytes += upper.capacity() * sizeof(std::uint16_t);
    return bytes;
  }
  neardup::IndexItem next(std::uint64_t i) {
    std::uint64_t copy_of = ~std::uint64_t{0};
    std::uint64_t fp = rng();
    neardup::Sketch sketch;
    neardup::SketchUpper upper;
    if (minhash) {
      sketch.resize(kHashes);
      for (auto& v : sketch) v = static_cast<std::uint16_t>(rng());
      if (wide) {
        // Drawn from (i, j) alone, so that the rest of the workload is the same either way.
        upper.resize(kHashes);
        for (std::size_t j = 0; j < kHashes; ++j) {
          upper[j] = static_cast<std::uint16_t>(neardup::mix64(i * kHashes + j + (1ull << 60)));
        }
      }
    }
    if (!fingerprints.empty() && std::uniform_real_distribution<>(0, 1)(rng) < dups) {
      const std::uint64_t from = fingerprints.size() - 1 - rng() % std::min(fingerprints.size(), kRecent);
      fp = fingerprints[from];
      copy_of = from;
      for (int flips = static_cast<int>(rng() % 4); flips > 0; --flips) fp ^= 1ull << (rng() % 64);
      if (minhash) {
        const neardup::Sketch& original = recent[from % kRecent];
        for (std::size_t j = 0; j < kHashes; ++j) {
          if (j % 4 != 0) sketch[j] = original[j];
        }
        if (wide) {
          const neardup::SketchUpper& original_upper = recent_upper[from % kRecent];
          for (std::size_t j = 0; j < kHashes; ++j) {
            if (j % 4 != 0) upper[j] = original_upper[j];
          }
        }
      }
    }
    fingerprints.push_back(fp);
    if (minhash) {
      if (recent.size() < kRecent) recent.resize(kRecent);
      recent[i % kRecent] = sketch;
      if (wide) {
        if (recent_upper.size() < kRecent) recent_upper.resize(kRecent);
        recent_upper[i % kRecent] = upper;
      }
    }
    char id[64];
    if (random_ids) {
      // Drawn from i alone (the workload's generator draws the same numbers either way).
      char host[9] = {}, path[21] = {};
      auto draw = [&](std::uint64_t j, const char* from, std::uint64_t n) {
        return from[neardup::mix64(i * 64 + j) % n];
      };
      for (std::uint64_t j = 0; j < 8; ++j) host[j] = draw(j, "abcdefghijklmnopqrstuvwxyz", 26);
      for (std::uint64_t j = 0; j < 20; ++j) {
        path[j] = draw(8 + j, "abcdefghijklmnopqrstuvwxyz0123456789", 36);
      }
      std::snprintf(id, sizeof id, "https://www.%s.com/%s", host, path);
    } else {
      std::snprintf(id, sizeof id, "https://www.example.com/articles/%012" PRIu64, i);
    }
    neardup::IndexItem item;
    item.page = neardup::PageRequest{.id = id,
                                     .fingerprint = fp,
                                     .scheme = "s-bench",
                                     .max_distance = 3,
                                     .seen_at_ms = static_cast<std::int64_t>(i),
                                     .sketch = std::move(sketch),
                                     .sketch_upper = std::move(upper),
                                     .bands = minhash ? lsh.bands : 0,
                                     .rows = minhash ? lsh.rows : 0,
                                     .min_similarity = 0.45};
    item.source = neardup::SourceOffset{"pages/0", static_cast<std::int64_t>(i)};
    if (passages > 0) {
      // A copy keeps three quarters of its original's keys (of the rest, new ones).
      const std::uint32_t paragraphs = std::max<std::uint32_t>(1, passages / 6);
      auto key = [&](std::uint64_t j) {
        return copy_of != ~std::uint64_t{0} && j % 4 != 0 ? passage_key(copy_of, j)
                                                          : passage_key(i, j);
      };
      for (std::uint64_t j = 0; j < passages; ++j) item.page->anchors.push_back(key(j));
      std::sort(item.page->anchors.begin(), item.page->anchors.end());
      for (std::uint64_t j = 0; j < paragraphs; ++j) {
        item.page->paragraphs.push_back(key(passages + j));
      }
      item.page->min_containment = 0.5;
    }
    return item;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i], v = argv[i + 1];
    if (key == "--dir")
      a.dir = v;
    else if (key == "--stored")
      a.stored = std::stoull(v);
    else if (key == "--measure")
      a.measure = std::stoull(v);
    else if (key == "--batch")
      a.batch = std::stoull(v);
    else if (key == "--delta")
      a.delta = std::stoull(v);
    else if (key == "--k")
      a.k = static_cast<std::uint32_t>(std::stoul(v));
    else if (key == "--tables")
      a.tables = static_cast<std::uint32_t>(std::stoul(v));
    else if (key == "--expected")
      a.expected = std::stoull(v);
    else if (key == "--table-filter-bits")
      a.table_filter_bits = static_cast<std::uint32_t>(std::stoul(v));
    else if (key == "--sync")
      a.sync = v == "1";
    else if (key == "--readahead")
      a.readahead = v == "1";
    else if (key == "--minhash")
      a.minhash = v == "1";
    else if (key == "--wide")
      a.wide = v == "1";
    else if (key == "--bands")
      a.lsh.bands = static_cast<std::uint32_t>(std::stoul(v));
    else if (key == "--rows")
      a.lsh.rows = static_cast<std::uint32_t>(std::stoul(v));
    else if (key == "--dups")
      a.dups = std::stod(v);
    else if (key == "--passages")
      a.passages = static_cast<std::uint32_t>(std::stoul(v));
    else if (key == "--seed")
      a.seed = std::stoull(v);
    else if (key == "--shards")
      a.shards = static_cast<std::uint32_t>(std::stoul(v));
    else if (key == "--shard")
      a.shard = static_cast<std::uint32_t>(std::stoul(v));
    else if (key == "--ids" && (v == "sequential" || v == "random"))
      a.random_ids = v == "random";
    else {
      std::fprintf(stderr, "store_bench: unknown option %s\n", key.c_str());
      return 2;
    }
  }
  neardup::StoreConfig config;
  config.path = a.dir;
  config.design_k = a.k;
  config.tables = a.tables;
  config.expected_documents = a.expected != 0 ? a.expected : a.stored;
  config.map_size = 1ull << 30;
  config.sync = false;
  config.readahead = a.readahead;
  config.table_filter_bits = a.table_filter_bits;
  config.shards = a.shards;
  config.shard = a.shard;

  Workload workload(a.seed, a.dups, a.minhash, a.lsh, a.passages, a.random_ids);
  workload.wide = a.wide;
  std::uint64_t done = 0;
  auto run = [&](std::uint64_t count, neardup::Index& index) -> bool {
    std::vector<neardup::IndexItem> batch;
    for (std::uint64_t n = 0; n < count; n += batch.size()) {
      batch.clear();
      for (std::uint64_t i = 0; i < std::min(a.batch, count - n); ++i) {
        batch.push_back(workload.next(done + i));
      }
      auto verdicts = index.apply(batch);
      if (!verdicts) {
        std::fprintf(stderr, "store_bench: %s\n", verdicts.error().message.c_str());
        return false;
      }
      done += batch.size();
      if (auto trimmed = index.trim_pending("pages/0", static_cast<std::int64_t>(done) - 1);
          !trimmed) {
        std::fprintf(stderr, "store_bench: %s\n", trimmed.error().message.c_str());
        return false;
      }
    }
    return true;
  };

  {
    auto index = neardup::Index::open(config, {.delta_entries = a.delta});
    if (!index) {
      std::fprintf(stderr, "store_bench: %s\n", index.error().message.c_str());
      return 3;
    }
    std::uint64_t have = (*index)->stats().documents;
    // Replays the workload generator to the same position (ids and fingerprints).
    for (std::uint64_t i = 0; i < have; ++i) workload.next(i);
    done = have;
    auto start = Clock::now();
    if (have < a.stored && !run(a.stored - have, **index)) return 3;
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    if (have < a.stored) {
      std::fprintf(stderr, "filled %" PRIu64 " pages in %.1f s (%.0f/s)\n", a.stored - have, secs,
                   (a.stored - have) / secs);
    }
  }

  config.sync = a.sync;
  neardup::ApplyTiming timing;
  const auto open_start = Clock::now();
  auto index = neardup::Index::open(config, {.delta_entries = a.delta, .timing = &timing});
  const double open_secs = std::chrono::duration<double>(Clock::now() - open_start).count();
  if (!index) {
    std::fprintf(stderr, "store_bench: %s\n", index.error().message.c_str());
    return 3;
  }
  std::vector<std::uint32_t> batch_us;
  // Where the slowest batch's time went (µs); the rest is trim_pending and apply()'s own work.
  struct Slowest {
    std::uint64_t total_us = 0, items_us = 0, merge_us = 0, band_merge_us = 0, commit_us = 0;
    std::uint64_t batch = 0;  // its number in the window, from 0
  } slowest;
  std::uint64_t commit_before = 0;
  std::vector<std::uint32_t> commit_ns;
  auto cpu_seconds = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  };
  // Only apply() and trim_pending() are timed: the workload's generator is not the index.
  double secs = 0, cpu = 0;
  std::vector<neardup::IndexItem> batch;
  std::uint64_t duplicates = 0, by_minhash = 0;
  for (std::uint64_t n = 0; n < a.measure; n += batch.size()) {
    batch.clear();
    for (std::uint64_t i = 0; i < std::min(a.batch, a.measure - n); ++i) {
      batch.push_back(workload.next(done + i));
    }
    const double cpu_start = cpu_seconds();
    const std::uint64_t merge_before = timing.merge_ns, band_before = timing.band_merge_ns;
    const std::size_t items_before = timing.item_ns.size();
    const auto start = Clock::now();
    auto verdicts = (*index)->apply(batch);
    if (!verdicts) {
      std::fprintf(stderr, "store_bench: %s\n", verdicts.error().message.c_str());
      return 3;
    }
    for (const auto& verdict : *verdicts) {
      duplicates += verdict.status == neardup::Verdict::Status::kDuplicate;
      by_minhash += (verdict.method & neardup::Verdict::kMinHash) != 0;
    }
    done += batch.size();
    commit_ns.push_back(static_cast<std::uint32_t>(timing.commit_ns - commit_before));
    commit_before = timing.commit_ns;
    if (auto t = (*index)->trim_pending("pages/0", static_cast<std::int64_t>(done) - 1); !t) {
      std::fprintf(stderr, "store_bench: %s\n", t.error().message.c_str());
      return 3;
    }
    const double batch_secs = std::chrono::duration<double>(Clock::now() - start).count();
    batch_us.push_back(static_cast<std::uint32_t>(batch_secs * 1e6));
    if (batch_us.back() > slowest.total_us) {
      std::uint64_t items_ns = 0;
      for (std::size_t i = items_before; i < timing.item_ns.size(); ++i)
        items_ns += timing.item_ns[i];
      slowest = {batch_us.back(),
                 items_ns / 1000,
                 (timing.merge_ns - merge_before) / 1000,
                 (timing.band_merge_ns - band_before) / 1000,
                 commit_ns.back() / 1000,
                 batch_us.size() - 1};
    }
    secs += batch_secs;
    cpu += cpu_seconds() - cpu_start;
  }
  auto stats = (*index)->stats();
  const neardup::IndexStats::Scheme lsh =
      stats.schemes.empty() ? neardup::IndexStats::Scheme{} : stats.schemes.front();
  std::printf(
      "open %.2f s | stored=%" PRIu64 " measured=%" PRIu64
      " minhash=%d lsh=%ux%u%s k=%u r=%u tables=%u key_bits=%u table_filter_bits=%u sync=%d "
      "batch=%" PRIu64
      " ids=%s | %.0f items/s (%.0f per CPU second) | item p50 %.1f us p99 %.1f us p99.9 %.1f us "
      "max %.1f us"
      " | batch p50 %.1f ms p99 %.1f ms max %.1f ms"
      " | commit/batch p50 %.2f ms p99 %.2f ms max %.2f ms | items %.2f s, commits %.2f s,"
      " merges %" PRIu64 " taking %.2f s (bands %.2f s) | %.1f bytes/page on disk (%" PRIu64
      " docs, %" PRIu64
      " runs)"
      " | %" PRIu64 " duplicates, %" PRIu64 " by MinHash\n",
      open_secs, done - a.measure, a.measure, a.minhash ? 1 : 0, lsh.bands, lsh.rows,
      lsh.wide_bands ? " wide" : "", stats.design_k, stats.design_r, stats.tables,
      stats.table_key_bits, a.table_filter_bits, a.sync ? 1 : 0, a.batch,
      a.random_ids ? "random" : "sequential", a.measure / secs, a.measure / cpu,
      percentile(timing.item_ns, 0.5), percentile(timing.item_ns, 0.99),
      percentile(timing.item_ns, 0.999), percentile(timing.item_ns, 1.0), percentile(batch_us, 0.5),
      percentile(batch_us, 0.99), percentile(batch_us, 1.0), percentile(commit_ns, 0.5) / 1000,
      percentile(commit_ns, 0.99) / 1000, percentile(commit_ns, 1.0) / 1000,
      sum_ns(timing.item_ns) / 1e9, static_cast<double>(timing.commit_ns) / 1e9, timing.merges,
      timing.merge_ns / 1e9, timing.band_merge_ns / 1e9,
      static_cast<double>(stats.bytes_on_disk) / static_cast<double>(stats.documents),
      stats.documents, stats.runs, duplicates, by_minhash);
  // Anonymous memory: what the index keeps besides the page cache. The deltas are a fixed cost
  // (their tables' size does not grow with the store), reported apart from the rest, and so is
  // what this benchmark holds itself (the workload's fingerprints and sketches, the timings).
  const std::uint64_t anon = rss_anon_bytes();
  const std::uint64_t own =
      workload.memory() + (timing.item_ns.capacity() + batch_us.capacity() + commit_ns.capacity()) *
                              sizeof(std::uint32_t);
  const auto per_page = [&](double bytes) { return bytes / static_cast<double>(stats.documents); };
  const double rest = static_cast<double>(anon) - static_cast<double>(stats.delta_memory_bytes) -
                      static_cast<double>(stats.index_memory_bytes) - static_cast<double>(own);
  std::printf(
      "memory: anonymous %.1f MiB; the index's: deltas %.1f MiB (fixed), filters and "
      "directories %.1f MiB = %.1f bytes/page (of which a running merge's new filter %.1f MiB); "
      "anonymous less deltas %.1f bytes/page; the benchmark's own %.1f MiB = %.1f bytes/page; "
      "the rest %.1f MiB\n",
      anon / 1048576.0, stats.delta_memory_bytes / 1048576.0, stats.index_memory_bytes / 1048576.0,
      per_page(static_cast<double>(stats.index_memory_bytes)),
      stats.merge_filter_memory_bytes / 1048576.0,
      per_page(static_cast<double>(anon) - static_cast<double>(stats.delta_memory_bytes)),
      own / 1048576.0, per_page(static_cast<double>(own)), rest / 1048576.0);
  {
    const struct mallinfo2 mi = mallinfo2();
    std::printf(
        "heap: arena %.1f MiB, mmapped %.1f MiB, in use %.1f MiB, free %.1f MiB, top %.1f MiB\n",
        mi.arena / 1048576.0, mi.hblkhd / 1048576.0, mi.uordblks / 1048576.0,
        mi.fordblks / 1048576.0, mi.keepcost / 1048576.0);
  }
  std::printf("slowest batch (number %" PRIu64
              ") %.1f ms: items %.1f ms, merges %.1f ms (bands %.1f ms), commit %.1f ms\n",
              slowest.batch, slowest.total_us / 1e3, slowest.items_us / 1e3, slowest.merge_us / 1e3,
              slowest.band_merge_us / 1e3, slowest.commit_us / 1e3);
  return 0;
}
