// Answers and administration: find, clusters, forget, retention, drop-scheme, and readers beside the writer.
#include "store/index.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "store/test_util.h"

namespace neardup {
namespace {

// The store tests' helpers (store/test_util.h).
using namespace testing;  // NOLINT(google-build-using-namespace)
using Status = Verdict::Status;

TEST(Index, FindReportsAStoredPageWithItsClusterAndClustersListTheirMembers) {
  TempDir dir;
  auto config = store_config(dir.path());
  {
    auto index = open_or_die(config);
    apply_or_die(*index, {sketched("a", kA, random_sketch(1)), sketched("b", kA ^ 1, random_sketch(2)),
                          sketched("c", ~kA, random_sketch(3)), sketched("d", kA ^ 3, random_sketch(4))});
    auto b = index->find("b");
    ASSERT_TRUE(b.has_value()) << b.error();
    ASSERT_TRUE(b->has_value());
    EXPECT_EQ((*b)->cluster, "a");
    EXPECT_EQ((*b)->verdict.status, Status::kDuplicate);
    EXPECT_EQ((*b)->verdict.matched, "a");
    EXPECT_EQ((*b)->verdict.method, Verdict::kSimHash);
    EXPECT_EQ((*b)->fingerprint, kA ^ 1);
    Sketch stored = random_sketch(2);  // the index keeps each value's low 8 bits
    for (std::uint16_t& v : stored) v &= 0xff;
    EXPECT_EQ((*b)->sketch, stored);
    EXPECT_EQ((*b)->scheme, "s-mh");
    EXPECT_FALSE(index->find("nobody")->has_value());
    auto cluster = index->cluster((*b)->cluster_doc);
    ASSERT_TRUE(cluster.has_value()) << cluster.error();
    ASSERT_EQ(cluster->members.size(), 3u);
    EXPECT_EQ(cluster->root, "a");
    EXPECT_EQ(cluster->members[0].id, "a");
    EXPECT_EQ(cluster->members[1].id, "b");
    EXPECT_EQ(cluster->members[2].id, "d");
  }
  // Read-only, as `neardup clusters` opens it: every cluster, in order, sizes filtered.
  auto index = open_or_die(config, {.read_only = true});
  std::vector<std::pair<std::string, std::size_t>> seen;
  auto walked = index->for_each_cluster(1, "", [&](const Cluster& c) {
    seen.emplace_back(c.root, c.members.size());
    return true;
  });
  ASSERT_TRUE(walked.has_value()) << walked.error();
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::size_t>>{{"a", 3}, {"c", 1}}));
  seen.clear();
  ASSERT_TRUE(index->for_each_cluster(2, "s-mh", [&](const Cluster& c) {
    seen.emplace_back(c.root, c.members.size());
    return true;
  }));
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::size_t>>{{"a", 3}}));
  ASSERT_TRUE(index->for_each_cluster(1, "s-other", [&](const Cluster&) {
    ADD_FAILURE() << "no cluster of s-other";
    return true;
  }));
  // Read-only lookups see the stored pages (their deltas are rebuilt from the snapshot).
  auto v = index->lookup(*sketched("q", kA ^ 7, random_sketch(9)).page);
  ASSERT_TRUE(v.has_value()) << v.error();
  EXPECT_EQ(v->status, Status::kDuplicate);
  EXPECT_EQ(v->duplicate_of, "a");
  EXPECT_FALSE(index->apply(std::vector{page("x", 1)}).has_value());
  EXPECT_FALSE(index->forget(std::vector<std::string>{"a"}).has_value());
}

TEST(Index, ForgottenPagesAreNotMatchedFoundOrListedAndTheirIdCanComeBack) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  apply_or_die(*index, {page("a", kA), page("b", kA ^ 1)});
  auto n = index->forget(std::vector<std::string>{"a", "zzz"});
  ASSERT_TRUE(n.has_value()) << n.error();
  EXPECT_EQ(*n, 1u);
  EXPECT_FALSE(index->find("a")->has_value());
  EXPECT_EQ(index->stats().documents, 1u);
  auto v = apply_or_die(*index, {page("c", kA ^ 2)});
  EXPECT_EQ(v[0].matched, "b");       // a is gone
  EXPECT_EQ(v[0].duplicate_of, "a");  // b's cluster is still named by its first page
  auto again = apply_or_die(*index, {page("a", kA)});
  EXPECT_FALSE(again[0].replayed);  // a new page now
  EXPECT_EQ(again[0].matched, "b");
  EXPECT_EQ(index->stats().documents, 3u);
  EXPECT_EQ(index->stats().last_doc, 4u);  // a, b, c and a again: forgotten ones keep their number
}

TEST(Index, PagesPastRetentionAreNotMatchedAndTheirIdIsSeenAnew) {
  TempDir dir;
  auto config = store_config(dir.path());
  config.retention_seconds = 3600;
  std::int64_t now = 1'800'000'000'000;
  auto index = open_or_die(config, {.now_ms = [&] { return now; }});
  IndexItem old = page("a", kA);
  old.page->seen_at_ms = now - 7'200'000;  // first seen two hours ago
  IndexItem fresh = page("b", ~kA);
  fresh.page->seen_at_ms = now;
  apply_or_die(*index, {old, fresh});
  auto v = apply_or_die(*index, {page("c", kA ^ 1), page("d", ~kA ^ 1)});
  EXPECT_EQ(v[0].status, Status::kUnique);  // a is past retention
  EXPECT_EQ(v[1].matched, "b");
  EXPECT_FALSE(index->find("a")->has_value());
  now += 4'000'000;  // b too, now
  EXPECT_FALSE(index->find("b")->has_value());
  IndexItem again = page("b", ~kA);
  again.page->seen_at_ms = now;
  auto seen = apply_or_die(*index, {again});
  EXPECT_FALSE(seen[0].replayed);  // stored again, as a new page
  EXPECT_TRUE(index->find("b")->has_value());
}

TEST(Index, ReaderOnAnotherThreadDoesNotBlockTheWriter) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::uint64_t last_seen = 0;
  bool monotonic = true;
  std::thread reader([&] {
    while (!stop) {
      std::uint64_t documents = index->stats().documents;
      monotonic = monotonic && documents >= last_seen;
      last_seen = documents;
      ++reads;
    }
  });
  for (std::size_t i = 0; i < 20000; i += 1000) apply_or_die(*index, numbered_pages(i, 1000));
  stop = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(index->stats().documents, 20000u);
}

TEST(Index, ALargeClusterIsReadWithoutHoldingUpTheWriter) {
  TempDir dir;
  auto config = store_config(dir.path());
  config.map_size = 1ull << 30;
  auto index = open_or_die(config);
  constexpr std::size_t kCopies = 60000;
  for (std::size_t i = 0; i < kCopies; i += 2000) {
    std::vector<IndexItem> items;
    for (std::size_t j = i; j < i + 2000; ++j) items.push_back(page(numbered("copy", j), kA));
    apply_or_die(*index, items);
  }
  auto root = index->find("copy0");
  ASSERT_TRUE(root.has_value() && root->has_value());
  const std::uint64_t root_doc = (*root)->cluster_doc;

  // Bounded: the first members read whole, all of them counted.
  auto few = index->cluster(root_doc, 10);
  ASSERT_TRUE(few.has_value()) << few.error();
  EXPECT_EQ(few->members.size(), 10u);
  EXPECT_EQ(few->size, kCopies);
  EXPECT_EQ(few->members[3].id, "copy3");

  // A whole walk on another thread: a batch applied meanwhile waits for the probe of the
  // members column at most, not for the members to be read.
  using Clock = std::chrono::steady_clock;
  std::atomic<bool> started{false};
  Clock::duration walk{};
  std::size_t walked = 0;
  std::thread reader([&] {
    const auto start = Clock::now();
    started = true;
    auto all = index->cluster(root_doc);
    walk = Clock::now() - start;
    walked = all ? all->members.size() : 0;
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto apply_start = Clock::now();
  apply_or_die(*index, {page("another", ~kA)});
  const Clock::duration apply = Clock::now() - apply_start;
  reader.join();
  EXPECT_EQ(walked, kCopies);
  EXPECT_LT(apply * 4, walk) << "the batch took " << std::chrono::duration<double>(apply).count()
                             << " s beside a walk of "
                             << std::chrono::duration<double>(walk).count() << " s";
}

TEST(Index, ADroppedSchemeLosesItsColumnsAndStartsAnewWhileOthersKeepMatching) {
  TempDir dir;
  const StoreConfig config = store_config(dir.path() + "/store");
  const OpenOptions options{.delta_entries = 1u << 12};  // small deltas: the columns have runs
  std::mt19937_64 rng(11);
  std::vector<std::uint64_t> a, b;
  auto index = open_or_die(config, options);
  std::vector<Verdict> first_a;
  for (int batch = 0; batch < 10; ++batch) {
    std::vector<IndexItem> items;
    for (int i = 0; i < 500; ++i) {
      a.push_back(rng());
      items.push_back(at(page(numbered("a", a.size() - 1), a.back(), "s-a"), "p0",
                         static_cast<std::int64_t>(a.size() - 1)));
    }
    for (const Verdict& v : apply_or_die(*index, items)) first_a.push_back(v);
    items.clear();
    for (int i = 0; i < 500; ++i) {
      b.push_back(rng());
      items.push_back(page(numbered("b", b.size() - 1), b.back(), "s-b"));
    }
    apply_or_die(*index, items);
  }
  auto has_columns_of = [&](const std::string& number) {
    for (const auto& column : index->stats().columns) {
      if (column.name.starts_with("t/" + number + "/")) return true;
    }
    return false;
  };
  ASSERT_TRUE(has_columns_of("0"));

  auto dropped = index->drop_scheme("s-a");
  ASSERT_TRUE(dropped.has_value()) << dropped.error();
  EXPECT_EQ(dropped->columns, 4u);
  EXPECT_GT(dropped->runs, 0u);
  EXPECT_GT(dropped->entries, 0u);
  EXPECT_FALSE(has_columns_of("0"));
  ASSERT_EQ(index->stats().schemes.size(), 1u);
  EXPECT_EQ(index->stats().schemes[0].id, "s-b");

  auto unknown = index->drop_scheme("s-zzz");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, StoreError::Code::kNotFound);
  EXPECT_NE(unknown.error().message.find("has no scheme s-zzz (its schemes: s-b)"),
            std::string::npos)
      << unknown.error().message;

  // s-b still matches; a page near a stored s-a page is unique (s-a starts anew), and a
  // replayed s-a record still gets its stored verdict.
  auto v = apply_or_die(*index, {page("b-copy", b[10] ^ 1, "s-b"),
                                 page("a-copy", a[10] ^ 1, "s-a"),
                                 at(page("a17", a[17], "s-a"), "p0", 17)});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].status, Status::kDuplicate);
  EXPECT_EQ(v[0].duplicate_of, "b10");
  EXPECT_EQ(v[1].status, Status::kUnique);
  EXPECT_EQ(v[2].status, first_a[17].status);
  EXPECT_EQ(v[2].duplicate_of, first_a[17].duplicate_of);

  // Reopened: the dropped number stays retired; both schemes answer.
  index.reset();
  index = open_or_die(config, options);
  const auto schemes = index->stats().schemes;
  ASSERT_EQ(schemes.size(), 2u);
  EXPECT_EQ(schemes[0].id, "s-b");
  EXPECT_EQ(schemes[1].id, "s-a");
  EXPECT_TRUE(has_columns_of("2"));
  v = apply_or_die(*index, {page("b-copy-2", b[20] ^ 2, "s-b"), page("a-copy-2", a[10] ^ 3, "s-a")});
  EXPECT_EQ(v[0].duplicate_of, "b20");
  EXPECT_EQ(v[1].status, Status::kDuplicate);
  EXPECT_EQ(v[1].duplicate_of, "a-copy");
}

}  // namespace
}  // namespace neardup
