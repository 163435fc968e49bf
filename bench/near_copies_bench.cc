// near_copies_bench: a near-copy storm (a spider trap, a page with a counter or a clock in it):
// N near copies of one page, each a few SimHash bits and a few sketch values away from the
// original, applied to an empty store one batch at a time. Prints the time per page of each
// thousand: flat when a page's work in the index is bounded whatever the size of its cluster.
//
//   near_copies_bench --dir /tmp/nd-storm --copies 10000 [--batch 100] [--flips 3] [--changed 6]
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "store/index.h"

int main(int argc, char** argv) {
  using namespace neardup;
  std::string dir = "/tmp/nd-near-copies";
  std::size_t copies = 10000, batch = 100;
  int flips = 3, changed = 6;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const char* value = argv[i + 1];
    if (name == "--dir")
      dir = value;
    else if (name == "--copies")
      copies = std::strtoull(value, nullptr, 10);
    else if (name == "--batch")
      batch = std::strtoull(value, nullptr, 10);
    else if (name == "--flips")
      flips = std::atoi(value);
    else if (name == "--changed")
      changed = std::atoi(value);
    else {
      std::fprintf(stderr, "near_copies_bench: unknown option %s\n", name.c_str());
      return 2;
    }
  }
  std::filesystem::remove_all(dir);
  StoreConfig config;
  config.path = dir;
  config.sync = false;
  config.expected_documents = 1'000'000;
  auto index = Index::open(config);
  if (!index) {
    std::fprintf(stderr, "near_copies_bench: %s\n", index.error().message.c_str());
    return 3;
  }
  std::mt19937_64 random(7);
  const std::uint64_t base = random();
  Sketch base_sketch(128);
  for (auto& v : base_sketch) v = static_cast<std::uint16_t>(random());
  std::vector<double> per_thousand;
  auto start = std::chrono::steady_clock::now();
  std::vector<IndexItem> items;
  std::uint64_t duplicates = 0;
  for (std::size_t i = 0; i < copies;) {
    items.clear();
    for (std::size_t j = 0; j < batch && i < copies; ++j, ++i) {
      std::uint64_t fingerprint = base;
      for (int f = 0; f < flips; ++f) fingerprint ^= std::uint64_t{1} << (random() % 64);
      Sketch sketch = base_sketch;
      for (int c = 0; c < changed; ++c)
        sketch[random() % sketch.size()] = static_cast<std::uint16_t>(random());
      IndexItem item;
      item.page = PageRequest{.id = "https://trap.example/page?n=" + std::to_string(i),
                              .fingerprint = fingerprint,
                              .scheme = "s-storm",
                              .max_distance = 3,
                              .seen_at_ms = 1,
                              .sketch = std::move(sketch),
                              .bands = 42,
                              .rows = 3,
                              .min_similarity = 0.45};
      items.push_back(std::move(item));
    }
    auto verdicts = (*index)->apply(items);
    if (!verdicts) {
      std::fprintf(stderr, "near_copies_bench: %s\n", verdicts.error().message.c_str());
      return 3;
    }
    for (const Verdict& v : *verdicts) duplicates += v.status == Verdict::Status::kDuplicate;
    if (i % 1000 == 0) {
      const auto now = std::chrono::steady_clock::now();
      per_thousand.push_back(std::chrono::duration<double, std::micro>(now - start).count() / 1000);
      start = now;
    }
  }
  std::printf("copies=%zu duplicates=%" PRIu64 " us/page per thousand:", copies, duplicates);
  for (double us : per_thousand) std::printf(" %.1f", us);
  if (per_thousand.size() >= 2) {
    std::printf("  last/first=%.2f", per_thousand.back() / per_thousand.front());
  }
  const IndexStats stats = (*index)->stats();
  for (const auto& column : stats.columns) {
    if (column.name == "t/0/0" || column.name == "b/0") {
      std::printf("  %s: %" PRIu64 " entries in runs", column.name.c_str(), column.entries);
    }
  }
  std::printf("\n");
  std::filesystem::remove_all(dir);
  return 0;
}
