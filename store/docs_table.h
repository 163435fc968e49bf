// Where a document's record is (FORMAT.md, "docs"): the one place that knows the `docs` table's
// three layouts. A document numbered before the store's docs_block_from has a record of its own
// (compact or wide: records.h, DocRecord), keyed by its number. From docs_block_from on,
// documents are kept in blocks of consecutive documents in `docs` (records.h, DocBlock), and
// the block being filled is `docs_tail`: a record each, the first compact, the others coded
// against it as in a block. When the next document would take the tail past a block
// (Appender), the tail's records, unchanged, become one block appended to `docs` (MDB_APPEND),
// so that `docs` stays packed page after page and a record pays no LMDB key and node of its
// own.
//
// A view of the tables, used inside the caller's transaction.
#pragma once

#include <cstdint>
#include <optional>

#include "store/lmdb.h"
#include "store/records.h"
#include "store/status.h"
#include "store/store_env.h"

namespace neardup {

class DocsTable {
 public:
  explicit DocsTable(const StoreTables& tables) : tables_(tables) {}

  // Blocks are closed when the next record would take them past this many bytes: a page of
  // LMDB's (4096) less its header, so that a block fills one overflow page.
  static constexpr std::size_t kBlockBytes = 4096 - 16;

  // Document `doc`'s record; nullopt when no such document is stored. kCorrupt when its
  // bytes do not decode.
  StoreResult<std::optional<records::DocRecord>> find(const lmdb::Txn& txn,
                                                      std::uint64_t doc) const;
  // A stored document's record replaced (its flags changed); a block is rewritten whole.
  // kInvalidArgument when there is no such document.
  StoreResult<> rewrite(const lmdb::Txn& txn, std::uint64_t doc,
                        const records::DocRecord& record) const;
  // The highest stored document number; 0 when there is none.
  StoreResult<std::uint64_t> last(const lmdb::Txn& txn) const;
  // Calls fn(doc, record) -> StoreResult<> for every document numbered `from` or later, in
  // order, stopping at the first error.
  template <typename Fn>
  StoreResult<> for_each(const lmdb::Txn& txn, std::uint64_t from, Fn&& fn) const;

  // New documents, appended in one write transaction: it keeps what it learns of the tail (its
  // first record, count and bytes) from one document to the next, so make one per transaction
  // and write the documents it may have in its tail through it alone.
  class Appender {
   public:
    explicit Appender(const StoreTables& tables, std::size_t block_bytes = kBlockBytes)
        : tables_(tables), block_bytes_(block_bytes) {}
    // A new document, numbered after every stored one.
    StoreResult<> append(const lmdb::Txn& txn, std::uint64_t doc, const records::DocRecord& record);
    // DocsTable::rewrite, for a document that may be in the tail.
    StoreResult<> rewrite(const lmdb::Txn& txn, std::uint64_t doc,
                          const records::DocRecord& record);

   private:
    StoreResult<> load(const lmdb::Txn& txn);
    // The tail's records into one block of `docs`; the tail emptied.
    StoreResult<> close(const lmdb::Txn& txn);

    const StoreTables& tables_;
    const std::size_t block_bytes_;
    bool loaded_ = false;
    std::uint64_t first_ = 0, count_ = 0;  // the tail's first document and how many
    std::size_t bytes_ = 0;                // its records with their lengths
    records::DocRecord base_;              // its first record
  };

 private:
  struct Block {
    std::uint64_t first = 0;
    std::string_view bytes;
  };
  // The block that would hold `doc` (the last one starting at or before it), if any.
  StoreResult<std::optional<Block>> block_at(const lmdb::Txn& txn, std::uint64_t doc) const;
  // The tail's first record (the others are coded against it); nullopt when the tail is empty.
  StoreResult<std::optional<std::pair<std::uint64_t, records::DocRecord>>> tail_base(
      const lmdb::Txn& txn) const;
  bool blocked(std::uint64_t doc) const { return doc >= tables_.docs_block_from; }

  const StoreTables& tables_;
};

}  // namespace neardup

#include "common/coding.h"

namespace neardup {

template <typename Fn>
StoreResult<> DocsTable::for_each(const lmdb::Txn& txn, std::uint64_t from, Fn&& fn) const {
  using records::DocRecord;
  auto corrupt_doc = [](std::uint64_t doc) {
    return corrupt("docs record " + std::to_string(doc));
  };
  // Records of their own, then blocks (both in `docs`, in key order), then the tail.
  auto cursor = lift(lmdb::Cursor::open(txn, tables_.docs));
  if (!cursor) return std::unexpected(cursor.error());
  std::uint64_t next = from;
  if (blocked(from)) {
    auto block = block_at(txn, from);
    if (!block) return std::unexpected(block.error());
    if (*block) next = (*block)->first;
  }
  const std::string start = coding::be64_key(next);
  MDB_val key = lmdb::to_val(start), value{};
  for (auto found = lift(cursor->get(key, value, MDB_SET_RANGE));;
       found = lift(cursor->get(key, value, MDB_NEXT))) {
    if (!found) return std::unexpected(found.error());
    if (!*found) break;
    const std::uint64_t doc = coding::decode_be64(static_cast<const char*>(key.mv_data));
    if (!blocked(doc)) {
      auto record = DocRecord::decode(lmdb::to_view(value), doc, tables_.docs_compact_from);
      if (!record) return corrupt_doc(doc);
      if (auto done = fn(doc, *record); !done) return done;
      continue;
    }
    auto block = records::DocBlock::decode(lmdb::to_view(value), doc);
    if (!block) return corrupt_doc(doc);
    for (std::size_t i = 0; i < block->size(); ++i) {
      if (doc + i < from) continue;
      if (auto done = fn(doc + i, (*block)[i]); !done) return done;
    }
  }
  if (tables_.docs_block_from == records::kNoDocBlocks) return {};
  auto tail = lift(lmdb::Cursor::open(txn, tables_.docs_tail));
  if (!tail) return std::unexpected(tail.error());
  auto base = tail_base(txn);
  if (!base) return std::unexpected(base.error());
  if (!*base) return {};
  const std::string tail_start = coding::be64_key(std::max(from, (*base)->first));
  key = lmdb::to_val(tail_start);
  for (auto found = lift(tail->get(key, value, MDB_SET_RANGE));;
       found = lift(tail->get(key, value, MDB_NEXT))) {
    if (!found) return std::unexpected(found.error());
    if (!*found) return {};
    const std::uint64_t doc = coding::decode_be64(static_cast<const char*>(key.mv_data));
    if (doc == (*base)->first) {
      if (auto done = fn(doc, (*base)->second); !done) return done;
      continue;
    }
    auto record = DocRecord::decode_compact(lmdb::to_view(value), doc, &(*base)->second);
    if (!record) return corrupt_doc(doc);
    if (auto done = fn(doc, *record); !done) return done;
  }
}

}  // namespace neardup
