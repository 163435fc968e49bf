// The docs table's layouts (records of their own, blocks, the tail) against a plain list of
// the records written: every document found alike wherever it is, in a real LMDB environment.
#include "store/docs_table.h"

#include <gtest/gtest.h>

#include <random>

#include "store/test_util.h"

namespace neardup {
namespace {

using records::DocBlock;
using records::DocRecord;

struct DocsFixture {
  testing::TempDir dir;
  lmdb::Env env;
  StoreTables tables;
  std::vector<DocRecord> written{DocRecord{}};  // written[doc]; 0 is no document
  std::mt19937_64 random{7};

  explicit DocsFixture(std::uint64_t block_from) {
    env = std::move(*lmdb::Env::open(dir.path(), {.map_size = 1ull << 30}));
    auto txn = lmdb::Txn::begin(env, 0);
    tables.docs = *lmdb::Dbi::open(*txn, "docs", MDB_CREATE);
    tables.docs_tail = *lmdb::Dbi::open(*txn, "docs_tail", MDB_CREATE);
    tables.has_docs_tail = true;
    tables.docs_block_from = block_from;
    EXPECT_TRUE(txn->commit());
  }

  // A record of varied size: a sketch on every other one, ids sharing a host or not.
  DocRecord make(std::uint64_t doc) {
    DocRecord r{.fingerprint = random(),
                .cluster = doc - random() % std::min<std::uint64_t>(doc, 5),
                .first_seen_ms = static_cast<std::int64_t>(random() % 100000),
                .scheme = static_cast<std::uint32_t>(random() % 3),
                .stored_at_s = static_cast<std::uint32_t>(1700000000 + doc / 10)};
    // A wide record (before docs_compact_from) keeps no sketch.
    if (random() % 2 == 0 && doc >= tables.docs_compact_from)
      r.sketch = std::string(128, static_cast<char>(random()));
    const char* hosts[] = {"https://www.a.example/", "http://b.example/news/", "c/"};
    r.id = hosts[random() % 3] + std::to_string(random() % 100000);
    return r;
  }

  // Appends `n` documents in one transaction; with `rewrite_every`, rewrites (through the same
  // appender) every so many the one just appended, which may be in the tail.
  void append(std::size_t n, std::size_t block_bytes = DocsTable::kBlockBytes,
              std::size_t rewrite_every = 0) {
    auto txn = lmdb::Txn::begin(env, 0);
    DocsTable::Appender appender(tables, block_bytes);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t doc = written.size();
      written.push_back(make(doc));
      auto appended = appender.append(*txn, doc, written.back());
      ASSERT_TRUE(appended) << appended.error().message;
      if (rewrite_every != 0 && i % rewrite_every == 0) {
        written[doc].flags |= DocRecord::kSuperseded;
        written[doc].anchors = 300;  // a byte longer
        ASSERT_TRUE(appender.rewrite(*txn, doc, written[doc]));
      }
    }
    ASSERT_TRUE(txn->commit());
  }

  void rewrite(std::uint64_t doc) {
    auto txn = lmdb::Txn::begin(env, 0);
    written[doc].flags ^= DocRecord::kSuperseded;
    written[doc].cluster = doc;
    auto done = DocsTable(tables).rewrite(*txn, doc, written[doc]);
    ASSERT_TRUE(done) << done.error().message;
    ASSERT_TRUE(txn->commit());
  }

  // Every document found as written, in order from any start, and nothing else.
  void check() {
    auto txn = lmdb::Txn::begin(env, MDB_RDONLY);
    const DocsTable docs(tables);
    const std::uint64_t last = written.size() - 1;
    EXPECT_EQ(docs.last(*txn).value_or(~0ull), last);
    for (std::uint64_t doc = 1; doc <= last; ++doc) {
      auto found = docs.find(*txn, doc);
      ASSERT_TRUE(found && *found) << doc;
      EXPECT_EQ((*found)->encode_compact(doc), written[doc].encode_compact(doc)) << doc;
    }
    for (std::uint64_t absent : {std::uint64_t{0}, last + 1, last + 1000}) {
      auto found = docs.find(*txn, absent);
      ASSERT_TRUE(found);
      EXPECT_FALSE(*found) << absent;
    }
    for (std::uint64_t from : {std::uint64_t{1}, last / 3, last / 2 + 1, last, last + 1}) {
      std::uint64_t next = std::max<std::uint64_t>(from, 1);
      auto each = docs.for_each(*txn, from, [&](std::uint64_t doc, const DocRecord& r) {
        EXPECT_EQ(doc, next++);
        EXPECT_EQ(r.encode_compact(doc), written[doc].encode_compact(doc));
        return StoreResult<>{};
      });
      ASSERT_TRUE(each);
      EXPECT_EQ(next, last + 1) << from;
    }
  }

  // The blocks in `docs`: their sizes and how many records each holds.
  std::vector<std::pair<std::size_t, std::uint64_t>> blocks() {
    std::vector<std::pair<std::size_t, std::uint64_t>> out;
    auto txn = lmdb::Txn::begin(env, MDB_RDONLY);
    auto cursor = lmdb::Cursor::open(*txn, tables.docs);
    MDB_val key{}, value{};
    for (auto found = cursor->get(key, value, MDB_FIRST); found && *found;
         found = cursor->get(key, value, MDB_NEXT)) {
      if (coding::decode_be64(static_cast<const char*>(key.mv_data)) < tables.docs_block_from) {
        continue;
      }
      out.emplace_back(value.mv_size, DocBlock::count(lmdb::to_view(value)).value_or(0));
    }
    return out;
  }
  std::size_t tail_size() {
    auto txn = lmdb::Txn::begin(env, MDB_RDONLY);
    return tables.docs_tail.stat(*txn)->ms_entries;
  }
};

TEST(DocsTable, DocumentsFillBlocksOfAPageAndAreFoundAlikeInBlocksAndTail) {
  DocsFixture f(1);
  std::mt19937_64 sizes(3);
  for (int batch = 0; batch < 40; ++batch) f.append(1 + sizes() % 150);
  f.check();
  const auto blocks = f.blocks();
  ASSERT_GT(blocks.size(), 10u);
  std::uint64_t in_blocks = 0;
  for (const auto& [bytes, count] : blocks) {
    EXPECT_LE(bytes, DocsTable::kBlockBytes);
    // Filled: a record more would not have fitted (records here take under 200 bytes).
    EXPECT_GT(bytes, DocsTable::kBlockBytes - 200);
    in_blocks += count;
  }
  // What is not in a block is in the tail, and less than a block's worth.
  EXPECT_EQ(in_blocks + f.tail_size(), f.written.size() - 1);
  EXPECT_LT(f.tail_size() * 20, DocsTable::kBlockBytes);
  EXPECT_GT(f.tail_size(), 0u);
}

TEST(DocsTable, RecordsRewrittenWhileInTheTailStillMakeBlocksThatFit) {
  DocsFixture f(1);
  for (int batch = 0; batch < 20; ++batch) f.append(100, DocsTable::kBlockBytes, 7);
  f.check();
  const auto blocks = f.blocks();
  ASSERT_GT(blocks.size(), 5u);
  for (const auto& [bytes, count] : blocks) EXPECT_LE(bytes, DocsTable::kBlockBytes);
}

TEST(DocsTable, RecordsRewrittenInBlocksAndTailAreFoundRewritten) {
  DocsFixture f(1);
  f.append(500);
  f.append(3);
  ASSERT_GT(f.tail_size(), 0u);
  for (std::uint64_t doc :
       {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{250}, std::uint64_t{f.written.size() - 1},
        std::uint64_t{f.written.size() - 2}}) {
    f.rewrite(doc);
  }
  f.check();
  f.append(400);  // the rewritten tail records move into blocks as they are now
  f.check();
  auto txn = lmdb::Txn::begin(f.env, 0);
  auto missing = DocsTable(f.tables).rewrite(*txn, f.written.size(), DocRecord{});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, StoreError::Code::kInvalidArgument);
}

TEST(DocsTable, AnUpgradedStoreKeepsItsRecordsAndBlocksTheDocumentsAfter) {
  // Documents 1-19 wide, 20-119 compact records of their own (a store of format 9 and older),
  // then blocks from 120.
  DocsFixture f(records::kNoDocBlocks);
  f.tables.docs_compact_from = 20;
  f.append(119);
  EXPECT_EQ(f.tail_size(), 0u);
  f.check();
  f.tables.docs_block_from = 120;
  f.append(700);
  f.check();
  EXPECT_GT(f.blocks().size(), 5u);
  f.rewrite(3);    // wide
  f.rewrite(119);  // compact, its own record
  f.rewrite(120);  // the first block's first
  f.check();
}

TEST(DocsTable, ARecordLargerThanABlockIsABlockOfItsOwn) {
  DocsFixture f(1);
  f.append(200, 300);  // about one record in two fills a 300-byte block
  f.check();
  std::size_t single = 0;
  for (const auto& [bytes, count] : f.blocks()) single += count == 1;
  EXPECT_GT(single, 10u);
}

TEST(DocsTable, ABlockThatDoesNotDecodeIsReportedCorrupt) {
  DocsFixture f(1);
  f.append(300);
  auto txn = lmdb::Txn::begin(f.env, 0);
  ASSERT_TRUE(f.tables.docs.put(*txn, coding::be64_key(1), "\x05garbage"));
  auto found = DocsTable(f.tables).find(*txn, 2);
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code, StoreError::Code::kCorrupt);
  EXPECT_FALSE(DocsTable(f.tables).for_each(
      *txn, 1, [](std::uint64_t, const DocRecord&) { return StoreResult<>{}; }));
}

}  // namespace
}  // namespace neardup
