// A store of format version 8 (store/testdata/format8/: bit-packed band and passage runs) opened
// by this build: every stored page, verdict and cluster read alike, read-only opens leave it
// version 8, and a writable one goes on from it with the verdicts that build gave (its runs
// merged into Elias–Fano records as the store grows), marking it this build's version.
//
// The fixture is written by this same test against the build of that format:
//   NEARDUP_WRITE_FORMAT_FIXTURE=DIR store_test --gtest_filter='FormatEight.*'
// writes DIR/data.mdb (the first kFirst pages) and what that build answered (stored.txt,
// clusters.txt, then rest.txt and clusters-after.txt: the next kRest pages applied to a copy).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "store/index.h"
#include "store/test_util.h"

namespace neardup {
namespace {

constexpr std::size_t kFirst = 600, kRest = 200, kBatch = 20;
constexpr std::int64_t kNow = 1'750'000'000'000;  // the clock of both builds

// Small deltas, so that 600 pages make runs of every column (a band delta holds 12 pages).
OpenOptions fixture_options() {
  OpenOptions options;
  options.delta_entries = 256;
  options.now_ms = [] { return kNow; };
  return options;
}

// The anchors of page i (sorted, distinct): 24 of its own.
std::vector<std::uint64_t> own_anchors(std::size_t i) {
  std::mt19937_64 rng(i * 31 + 7);
  std::vector<std::uint64_t> out(24);
  for (auto& a : out) a = rng();
  std::sort(out.begin(), out.end());
  return out;
}

// Page i of the fixture's stream: both signatures and passages; every third page a near copy
// of an earlier one (two fingerprint bits and a quarter of the sketch changed, three quarters of
// its anchors kept).
IndexItem fixture_page(std::size_t i) {
  std::mt19937_64 rng(i + 1);
  std::uint64_t fingerprint = std::mt19937_64(i * 2 + 1)();
  Sketch sketch = testing::random_sketch(i + 5000);
  std::vector<std::uint64_t> anchors = own_anchors(i);
  if (i % 3 == 2) {
    const std::size_t of = rng() % i;
    fingerprint = std::mt19937_64(of * 2 + 1)() ^ (std::uint64_t{5} << (rng() % 60));
    sketch = testing::changed(testing::random_sketch(of + 5000), 4, static_cast<std::uint16_t>(i));
    auto kept = own_anchors(of);
    kept.resize(18);
    anchors.resize(6);
    anchors.insert(anchors.end(), kept.begin(), kept.end());
    std::sort(anchors.begin(), anchors.end());
    anchors.erase(std::unique(anchors.begin(), anchors.end()), anchors.end());
  }
  IndexItem item = testing::sketched(testing::numbered("https://www.example.com/news/", i),
                                     fingerprint, std::move(sketch), "s-fixture");
  item.page->seen_at_ms = kNow - static_cast<std::int64_t>(i) * 1000;
  item.page->anchors = std::move(anchors);
  item.page->paragraphs = {item.page->anchors.front(), item.page->anchors.back()};
  item.page->min_containment = 0.5;
  return item;
}

std::string describe(const Verdict& v) {
  std::ostringstream out;
  out << status_name(v.status) << ' ' << v.matched << ' ' << v.duplicate_of << ' ' << v.distance
      << ' ' << method_name(v.method) << ' ' << v.similarity << ' ' << v.contained_in.id << ' '
      << v.contained_in.share << ' ' << v.contains.id << ' ' << v.contains.share << ' '
      << v.paragraphs << ' ' << v.paragraphs_seen;
  for (const auto& from : v.paragraphs_from) out << ' ' << from;
  return out.str();
}

std::string describe(const StoredPage& p) {
  std::ostringstream out;
  out << p.doc << ' ' << p.id << ' ' << p.scheme << ' ' << std::hex << p.fingerprint << std::dec
      << ' ' << p.first_seen_ms << ' ' << p.stored_at_ms << ' ' << p.cluster << ' ' << p.cluster_doc
      << ' ' << describe(p.verdict);
  std::uint64_t sketch = 14695981039346656037ull;  // FNV-1a of the stored bits
  for (auto v : p.sketch) sketch = (sketch ^ (v & 0xff)) * 1099511628211ull;
  out << ' ' << p.sketch.size() << ' ' << std::hex << sketch;
  return out.str();
}

// Every stored page of the first kFirst, then every cluster with its members.
std::string stored_pages(Index& index) {
  std::string out;
  for (std::size_t i = 0; i < kFirst; ++i) {
    auto found = index.find(fixture_page(i).page->id);
    EXPECT_TRUE(found.has_value()) << found.error();
    out += found && *found ? describe(**found) : "missing";
    out += '\n';
  }
  return out;
}
std::string clusters(Index& index) {
  std::string out;
  auto walked = index.for_each_cluster(1, "", [&](const Cluster& c) {
    out += c.root + ' ' + std::to_string(c.size) + ':';
    for (const auto& m : c.members) out += ' ' + m.id;
    out += '\n';
    return true;
  });
  EXPECT_TRUE(walked.has_value()) << walked.error();
  return out;
}
// Applies pages [from, to) in batches; their verdicts, a line each.
std::string apply(Index& index, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t at = from; at < to; at += kBatch) {
    std::vector<IndexItem> batch;
    for (std::size_t i = at; i < std::min(to, at + kBatch); ++i) batch.push_back(fixture_page(i));
    for (const Verdict& v : testing::apply_or_die(index, batch)) out += describe(v) + '\n';
  }
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}
void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::filesystem::path fixture_dir() {
  return std::filesystem::path(NEARDUP_SOURCE_DIR) / "store" / "testdata" / "format8";
}

// The fixture's data.mdb.gz unpacked into dir.
void unpack(const std::filesystem::path& dir) {
  gzFile in = gzopen((fixture_dir() / "data.mdb.gz").c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::ofstream out(dir / "data.mdb", std::ios::binary);
  char buf[1 << 16];
  for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) out.write(buf, n);
  gzclose(in);
}

// Writes the fixture with the build under test (run against the build of format 8).
void write_fixture(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "store");
  std::string stored, first_clusters;
  {
    auto index =
        testing::open_or_die(testing::store_config((dir / "store").string()), fixture_options());
    ASSERT_NE(index, nullptr);
    write_file(dir / "first.txt", apply(*index, 0, kFirst));
    stored = stored_pages(*index);
    first_clusters = clusters(*index);
  }
  write_file(dir / "stored.txt", stored);
  write_file(dir / "clusters.txt", first_clusters);
  std::filesystem::copy_file(dir / "store" / "data.mdb", dir / "data.mdb",
                             std::filesystem::copy_options::overwrite_existing);
  auto index =
      testing::open_or_die(testing::store_config((dir / "store").string()), fixture_options());
  ASSERT_NE(index, nullptr);
  write_file(dir / "rest.txt", apply(*index, kFirst, kFirst + kRest));
  write_file(dir / "clusters-after.txt", clusters(*index));
}

TEST(FormatEight, ReadAlikeThenWrittenOnWithTheSameVerdicts) {
  if (const char* out = std::getenv("NEARDUP_WRITE_FORMAT_FIXTURE")) {
    write_fixture(out);
    return;
  }
  testing::TempDir dir;
  unpack(dir.path());
  const StoreConfig config = testing::store_config(dir.path());
  {
    OpenOptions read_only = fixture_options();
    read_only.read_only = true;
    auto index = testing::open_or_die(config, read_only);
    ASSERT_NE(index, nullptr);
    EXPECT_EQ(index->stats().format_version, 8u);
    std::uint64_t runs = 0;
    for (const auto& column : index->stats().columns) {
      if (column.name.starts_with("b/") || column.name.starts_with("p/")) runs += column.runs;
    }
    EXPECT_GE(runs, 4u);  // band and passage runs of format 8 to read
    EXPECT_EQ(stored_pages(*index), read_file(fixture_dir() / "stored.txt"));
    EXPECT_EQ(clusters(*index), read_file(fixture_dir() / "clusters.txt"));
  }
  auto index = testing::open_or_die(config, fixture_options());
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->stats().format_version, 9u);
  EXPECT_EQ(stored_pages(*index), read_file(fixture_dir() / "stored.txt"));
  EXPECT_EQ(apply(*index, kFirst, kFirst + kRest), read_file(fixture_dir() / "rest.txt"));
  EXPECT_EQ(clusters(*index), read_file(fixture_dir() / "clusters-after.txt"));
  index.reset();
  // Reopened: the runs of both forms answer the same again, and every page's band keys find
  // it (its fingerprint turned over, so that only its sketch can).
  index = testing::open_or_die(config, fixture_options());
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(clusters(*index), read_file(fixture_dir() / "clusters-after.txt"));
  for (std::size_t i = 0; i < kFirst + kRest; ++i) {
    PageRequest page = *fixture_page(i).page;
    page.fingerprint = ~page.fingerprint;
    auto verdict = index->lookup(page);
    ASSERT_TRUE(verdict.has_value()) << verdict.error();
    EXPECT_EQ(verdict->status, Verdict::Status::kDuplicate) << page.id;
    EXPECT_EQ(verdict->method, Verdict::kMinHash) << page.id;
    EXPECT_EQ(verdict->similarity, 1) << page.id;
  }
}

}  // namespace
}  // namespace neardup
