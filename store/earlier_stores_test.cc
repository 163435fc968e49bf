// Stores written by earlier builds opened by this one: every stored page, verdict and cluster
// read alike, read-only opens leave the store as it was, and a writable one goes on from it with
// the verdicts that build gave (its runs merged into this build's records as the store grows).
//   store/testdata/format8/: format 8, whose band and passage runs are bit-packed;
//   store/testdata/format9-wide-bit-packed/: format 9 as first written, whose table, `ids` and
//   `members` runs are bit-packed (this build writes them Elias–Fano);
//   store/testdata/format9/: format 9 as last written, a `docs` record for each document (this
//   build writes the documents after the upgrade in blocks, docs_table.h);
//   store/testdata/format10/: format 10, whose table and `ids` entries keep their whole keys (a
//   store created by this build keeps their top bits; an upgraded one goes on with 64);
//   store/testdata/format11/: format 11, whose table and `ids` entries keep their top 40 bits
//   (format 11 kept 40 or 64 only; an upgraded store goes on with what it kept);
//   store/testdata/format12/: format 12, whose schemes band by the sketch's 16 bits alone, written
//   on with pages that carry upper values (common/sketch.h): the stored scheme keeps its keys.
//
// A fixture is written by this same test against the build that wrote such stores:
//   NEARDUP_WRITE_FORMAT_FIXTURE=DIR build/store/store_earlier_stores_test
// writes DIR/data.mdb (the first kFirst pages) and what that build answered (stored.txt,
// clusters.txt, then rest.txt and clusters-after.txt: the next kRest pages applied to a copy).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/coding.h"
#include "store/index.h"
#include "store/records.h"
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
// its anchors kept). With `upper`, the sketch's upper values besides (random: a stored scheme of
// narrow keys bands by the 16 bits alone, so they change no verdict).
IndexItem fixture_page(std::size_t i, bool upper = false) {
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
  if (upper) item.page->sketch_upper = testing::random_sketch(i + 70000);
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
// Applies pages [from, to) in batches (with upper values when asked); their verdicts, a line each.
std::string apply(Index& index, std::size_t from, std::size_t to, bool upper = false) {
  std::string out;
  for (std::size_t at = from; at < to; at += kBatch) {
    std::vector<IndexItem> batch;
    for (std::size_t i = at; i < std::min(to, at + kBatch); ++i) {
      batch.push_back(fixture_page(i, upper));
    }
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

// An earlier store kept in store/testdata/: its directory, the directory of what its build
// answered (builds that answered alike share one copy), the format version it was written in,
// the columns (by name prefix) whose runs are in the form the fixture is kept for (one this build
// no longer writes, or no longer writes for that design), and what its table and `ids` entries
// keep of their keys (meta key_bits, kept as it was by the upgrade); and whether the pages
// written on carry upper values.
struct Fixture {
  const char* dir;
  const char* answers;
  std::uint32_t version;
  std::vector<std::string> old_columns;
  records::KeyBits key_bits = {};
  bool upper = false;
};

std::filesystem::path testdata(const char* dir) {
  return std::filesystem::path(NEARDUP_SOURCE_DIR) / "store" / "testdata" / dir;
}

// The fixture's data.mdb.gz unpacked into dir.
void unpack(const Fixture& fixture, const std::filesystem::path& dir) {
  gzFile in = gzopen((testdata(fixture.dir) / "data.mdb.gz").c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::ofstream out(dir / "data.mdb", std::ios::binary);
  char buf[1 << 16];
  for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) out.write(buf, n);
  gzclose(in);
}

// Writes a fixture with the build under test (run against the build whose stores it keeps).
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

void read_alike_then_written_on(const Fixture& fixture) {
  const std::filesystem::path expected = testdata(fixture.answers);
  testing::TempDir dir;
  unpack(fixture, dir.path());
  const StoreConfig config = testing::store_config(dir.path());
  {
    OpenOptions read_only = fixture_options();
    read_only.read_only = true;
    auto index = testing::open_or_die(config, read_only);
    ASSERT_NE(index, nullptr);
    EXPECT_EQ(index->stats().format_version, fixture.version);
    std::uint64_t runs = 0;  // runs of the earlier form to read
    for (const auto& column : index->stats().columns) {
      for (const std::string& prefix : fixture.old_columns) {
        if (column.name.starts_with(prefix)) runs += column.runs;
      }
    }
    EXPECT_GE(runs, 4u);
    EXPECT_EQ(stored_pages(*index), read_file(expected / "stored.txt"));
    EXPECT_EQ(clusters(*index), read_file(expected / "clusters.txt"));
  }
  auto index = testing::open_or_die(config, fixture_options());
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->stats().format_version, records::kFormatVersion);
  EXPECT_EQ(index->stats().table_key_bits, fixture.key_bits.tables);  // as they were written
  EXPECT_EQ(index->stats().id_key_bits, fixture.key_bits.ids);
  EXPECT_EQ(stored_pages(*index), read_file(expected / "stored.txt"));
  EXPECT_EQ(apply(*index, kFirst, kFirst + kRest, fixture.upper), read_file(expected / "rest.txt"));
  for (const auto& scheme : index->stats().schemes) EXPECT_FALSE(scheme.wide_bands) << scheme.id;
  EXPECT_EQ(clusters(*index), read_file(expected / "clusters-after.txt"));
  index.reset();
  // The documents stored before the upgrade keep their records; those after it are in blocks
  // (all of them in a store of format 10).
  {
    auto env = lmdb::Env::open(dir.path(), {.map_size = 1ull << 30});
    ASSERT_TRUE(env.has_value());
    auto txn = lmdb::Txn::begin(*env, MDB_RDONLY);
    ASSERT_TRUE(txn.has_value());
    auto meta = lmdb::Dbi::open(*txn, "meta", 0);
    auto docs = lmdb::Dbi::open(*txn, "docs", 0);
    ASSERT_TRUE(meta && docs);
    const std::uint64_t block_from = fixture.version < 10 ? kFirst + 1 : 1;
    EXPECT_EQ(records::decode_u64(meta->get(*txn, "docs_block_from").value_or("")), block_from);
    EXPECT_EQ(records::KeyBits::decode(meta->get(*txn, "key_bits").value_or("")), fixture.key_bits);
    if (fixture.version < 10) {
      EXPECT_TRUE(docs->get(*txn, coding::be64_key(kFirst)).has_value());  // its own record
      auto block = docs->get(*txn, coding::be64_key(kFirst + 1));
      ASSERT_TRUE(block.has_value());
      EXPECT_GT(records::DocBlock::count(*block).value_or(0), 1u);
    }
  }
  // Reopened: the runs of both forms answer the same again; every page's band keys find it
  // (its fingerprint turned over, so that only its sketch can), and so does its fingerprint
  // (its sketch changed past the threshold, so that only the tables can).
  index = testing::open_or_die(config, fixture_options());
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(clusters(*index), read_file(expected / "clusters-after.txt"));
  for (std::size_t i = 0; i < kFirst + kRest; ++i) {
    PageRequest page = *fixture_page(i, fixture.upper).page;
    page.fingerprint = ~page.fingerprint;
    auto verdict = index->lookup(page);
    ASSERT_TRUE(verdict.has_value()) << verdict.error();
    EXPECT_EQ(verdict->status, Verdict::Status::kDuplicate) << page.id;
    EXPECT_EQ(verdict->method, Verdict::kMinHash) << page.id;
    EXPECT_EQ(verdict->similarity, 1) << page.id;
    page = *fixture_page(i, fixture.upper).page;
    page.sketch = testing::random_sketch(i + 900000);
    verdict = index->lookup(page);
    ASSERT_TRUE(verdict.has_value()) << verdict.error();
    EXPECT_EQ(verdict->status, Verdict::Status::kDuplicate) << page.id;
    EXPECT_TRUE(verdict->method & Verdict::kSimHash) << page.id;
    EXPECT_EQ(verdict->distance, 0) << page.id;
  }
}

// Set NEARDUP_WRITE_FORMAT_FIXTURE to write a fixture instead of checking one.
bool wrote_fixture() {
  const char* out = std::getenv("NEARDUP_WRITE_FORMAT_FIXTURE");
  if (out != nullptr) write_fixture(out);
  return out != nullptr;
}

TEST(EarlierStores, FormatEightReadAlikeThenWrittenOnWithTheSameVerdicts) {
  if (wrote_fixture()) return;
  read_alike_then_written_on({"format8", "format8", 8, {"b/", "p/"}});
}

TEST(EarlierStores, FormatNineWithBitPackedWideRunsReadAlikeThenWrittenOnWithTheSameVerdicts) {
  if (wrote_fixture()) return;
  read_alike_then_written_on({"format9-wide-bit-packed", "format8", 9, {"t/", "ids", "members"}});
}

TEST(EarlierStores, FormatNineWithARecordADocumentReadAlikeThenWrittenOnWithTheSameVerdicts) {
  if (wrote_fixture()) return;
  read_alike_then_written_on({"format9", "format8", 9, {"t/", "ids", "members", "b/"}});
}

TEST(EarlierStores, FormatTenWithWholeKeysReadAlikeThenWrittenOnWithTheSameVerdicts) {
  if (wrote_fixture()) return;
  read_alike_then_written_on({"format10", "format8", 10, {"t/", "ids"}});
}

TEST(EarlierStores, FormatElevenWithKeysOfFortyBitsReadAlikeThenWrittenOnWithTheSameVerdicts) {
  if (wrote_fixture()) return;
  read_alike_then_written_on(
      {"format11", "format8", 11, {"t/", "ids"}, records::KeyBits{.tables = 40, .ids = 40}});
}

TEST(EarlierStores, FormatTwelveWithNarrowBandKeysKeepsThemForPagesWithUpperValues) {
  if (wrote_fixture()) return;
  read_alike_then_written_on({"format12",
                              "format8",
                              12,
                              {"t/", "ids", "members", "b/"},
                              records::KeyBits{.tables = 40, .ids = 40},
                              /*upper=*/true});
}

}  // namespace
}  // namespace neardup
