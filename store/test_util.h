// Helpers for the store tests: a temporary directory and page items.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "store/index.h"
#include "store/run.h"
#include "store/run_probe.h"

namespace neardup::testing {

// Built with AddressSanitizer (the sanitized tree of the test run, scripts/sanitize.sh), where
// every access costs several times more: the largest brute-force comparisons run at a fifth of
// their size there, and whole in the release run.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NEARDUP_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(NEARDUP_TEST_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// The entries of a run with lo <= key <= hi, as RunProbe finds them (`entries`: the run's).
inline std::vector<Entry> probe_run(const RunDirectory& dir, std::uint64_t lo, std::uint64_t hi,
                                    std::size_t entries) {
  std::vector<Entry> found;
  RunProbe probe(dir, lo, hi, std::ldexp(1.0, 64) / static_cast<double>(entries));
  probe.start();
  probe.finish([&](std::uint64_t key, auto doc) { found.push_back({key, doc()}); });
  return found;
}

// `count` probe ranges over sorted entries, in turn: an entry's exact key, the range of an
// entry's key with its low `range_bits` free (several entries), and a random key (mostly
// absent).
// Writes sorted entries as records of a run, each as many as fit (RunWriter), in order.
inline void write_records(RunWriter& writer, const std::vector<Entry>& entries) {
  for (std::size_t at = 0; at < entries.size();) {
    auto written = writer.write_record(std::span(entries).subspan(at));
    ASSERT_TRUE(written.has_value()) << written.error().message;
    at += *written;
  }
}

inline std::vector<std::pair<std::uint64_t, std::uint64_t>> probe_ranges(
    const std::vector<Entry>& entries, int count, std::uint64_t seed, int range_bits) {
  std::mt19937_64 rng(seed);
  const std::uint64_t low = (std::uint64_t{1} << range_bits) - 1;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (int i = 0; i < count; ++i) {
    const Entry& e = entries[rng() % entries.size()];
    const std::uint64_t lo = i % 3 == 0 ? e.key : i % 3 == 1 ? e.key & ~low : rng();
    out.emplace_back(lo, i % 3 == 1 ? lo | low : lo);
  }
  return out;
}

// The entries a run of `format` answers for [lo, hi] (a narrow run: for the keys' top 40 bits).
inline std::vector<Entry> entries_between(const std::vector<Entry>& entries, RunFormat format,
                                          std::uint64_t lo, std::uint64_t hi) {
  std::vector<Entry> out;
  for (const Entry& x : entries) {
    if (x.key >= stored_key(format, lo) && x.key <= stored_key_end(format, hi)) out.push_back(x);
  }
  return out;
}

// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/neardup-store-XXXXXX";
    path_ = ::mkdtemp(pattern) != nullptr ? pattern : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// prefix followed by the decimal number (GCC 12 warns falsely on "p" + std::to_string(n)).
inline std::string numbered(std::string prefix, std::uint64_t number) {
  return prefix.append(std::to_string(number));
}

inline StoreConfig store_config(const std::string& path, std::uint32_t k = 3,
                                std::uint32_t tables = 0) {
  StoreConfig config;
  config.path = path;
  config.design_k = k;
  config.tables = tables;
  config.expected_documents = 1'000'000;
  config.map_size = 1ull << 26;
  config.sync = false;
  return config;
}

inline IndexItem page(std::string id, std::uint64_t fingerprint, std::string scheme = "s-test",
                      std::uint32_t max_distance = 3) {
  IndexItem item;
  item.page = PageRequest{std::move(id), fingerprint, std::move(scheme), max_distance, 0};
  return item;
}

inline IndexItem at(IndexItem item, std::string partition, std::int64_t offset) {
  item.source = SourceOffset{std::move(partition), offset};
  return item;
}

// A page with the second signature (sketch, bands x rows, threshold).
inline IndexItem sketched(std::string id, std::uint64_t fingerprint, Sketch sketch,
                          std::uint32_t bands, std::uint32_t rows, double min_similarity,
                          std::string scheme = "s-minhash") {
  IndexItem item = page(std::move(id), fingerprint, std::move(scheme));
  item.page->sketch = std::move(sketch);
  item.page->bands = bands;
  item.page->rows = rows;
  item.page->min_similarity = min_similarity;
  return item;
}

// The SimHash match lookup() finds for a fingerprint (no sketch), if any.
struct Match {
  std::string id, duplicate_of;
  int distance = 0;
};
inline StoreResult<std::optional<Match>> lookup(Index& index, std::uint64_t fingerprint,
                                                const std::string& scheme, std::uint32_t k) {
  auto verdict = index.lookup(*page("", fingerprint, scheme, k).page);
  if (!verdict) return std::unexpected(verdict.error());
  if (verdict->status != Verdict::Status::kDuplicate) return std::nullopt;
  return Match{verdict->matched, verdict->duplicate_of, verdict->distance};
}

// The index at `config`, or nullptr after a failed expectation naming the error.
inline std::unique_ptr<Index> open_or_die(const StoreConfig& config,
                                          const OpenOptions& options = {}) {
  auto index = Index::open(config, options);
  EXPECT_TRUE(index.has_value()) << index.error();
  return index ? std::move(*index) : nullptr;
}

// Both a writable and a read-only open refuse the store as damaged, naming `what`.
inline void expect_refused_as_damaged(const StoreConfig& config, const std::string& what) {
  for (bool read_only : {false, true}) {
    auto index = Index::open(config, {.read_only = read_only});
    ASSERT_FALSE(index.has_value());
    EXPECT_EQ(index.error().code, StoreError::Code::kCorrupt);
    EXPECT_NE(index.error().message.find(what), std::string::npos) << index.error();
  }
}

// The verdicts of one batch, or none after a failed expectation naming the error.
inline std::vector<Verdict> apply_or_die(Index& index, std::vector<IndexItem> items) {
  auto verdicts = index.apply(items);
  EXPECT_TRUE(verdicts.has_value()) << verdicts.error();
  return verdicts ? *verdicts : std::vector<Verdict>{};
}

// A fingerprint the tests build their neighbours from.
constexpr std::uint64_t kA = 0x9f3a0c1d22e4b807;

// Pages "https://example.com/<from>" … with random fingerprints (seeded by their number).
inline std::vector<IndexItem> numbered_pages(std::size_t from, std::size_t count) {
  std::vector<IndexItem> items;
  for (std::size_t i = from; i < from + count; ++i) {
    items.push_back(page(numbered("https://example.com/", i), std::mt19937_64(i)()));
  }
  return items;
}

// The LSH design of the tests of the second signature: 42 bands of 3 rows, threshold 0.45.
constexpr std::uint32_t kBands = 42, kRows = 3;
constexpr double kThreshold = 0.45;

// 128 random values, the same for the same seed.
inline Sketch random_sketch(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Sketch s(128);
  for (auto& v : s) v = static_cast<std::uint16_t>(rng());
  return s;
}

// A copy of `from` whose values at positions i % period == 0 are replaced (a partial copy).
inline Sketch changed(Sketch from, std::size_t period, std::uint16_t salt = 1) {
  for (std::size_t i = 0; i < from.size(); i += period) {
    from[i] ^= static_cast<std::uint16_t>(salt | 0x100);
  }
  return from;
}

// A page with both signatures under the design above.
inline IndexItem sketched(std::string id, std::uint64_t fp, Sketch sketch,
                          std::string scheme = "s-mh") {
  return sketched(std::move(id), fp, std::move(sketch), kBands, kRows, kThreshold,
                  std::move(scheme));
}

}  // namespace neardup::testing

namespace neardup {
// For test failure messages.
inline std::ostream& operator<<(std::ostream& out, const StoreError& error) {
  return out << error.message;
}

}  // namespace neardup::testing
