#include "store/docs_table.h"

#include <vector>

namespace neardup {

using records::DocBlock;
using records::DocRecord;

StoreResult<std::optional<DocsTable::Block>> DocsTable::block_at(const lmdb::Txn& txn,
                                                                 std::uint64_t doc) const {
  auto cursor = lift(lmdb::Cursor::open(txn, tables_.docs));
  if (!cursor) return std::unexpected(cursor.error());
  const std::string wanted = coding::be64_key(doc);
  MDB_val key = lmdb::to_val(wanted), value{};
  auto found = lift(cursor->get(key, value, MDB_SET_RANGE));
  if (!found) return std::unexpected(found.error());
  std::uint64_t first = *found ? coding::decode_be64(static_cast<const char*>(key.mv_data)) : 0;
  if (!*found || first > doc) {
    found = lift(cursor->get(key, value, *found ? MDB_PREV : MDB_LAST));
    if (!found) return std::unexpected(found.error());
    if (!*found) return std::nullopt;
    first = coding::decode_be64(static_cast<const char*>(key.mv_data));
  }
  if (!blocked(first)) return std::nullopt;  // a record of its own, before the blocks
  return Block{first, lmdb::to_view(value)};
}

StoreResult<std::optional<DocRecord>> DocsTable::find(const lmdb::Txn& txn,
                                                      std::uint64_t doc) const {
  const std::string key = coding::be64_key(doc);
  if (!blocked(doc)) {
    auto value = tables_.docs.get(txn, key);
    if (!value) {
      if (value.error().code == MDB_NOTFOUND) return std::nullopt;
      return std::unexpected(from_lmdb(value.error()));
    }
    auto record = DocRecord::decode(*value, doc, tables_.docs_compact_from);
    if (!record) return corrupt("docs record " + std::to_string(doc));
    return record;
  }
  auto block = block_at(txn, doc);
  if (!block) return std::unexpected(block.error());
  if (*block) {
    auto count = DocBlock::count((*block)->bytes);
    if (!count) return corrupt("docs block " + std::to_string((*block)->first));
    if (doc - (*block)->first < *count) {
      auto record = DocBlock::decode_one((*block)->bytes, (*block)->first, doc);
      if (!record) return corrupt("docs record " + std::to_string(doc));
      return record;
    }
  }
  auto value = tables_.docs_tail.get(txn, key);
  if (!value) {
    if (value.error().code == MDB_NOTFOUND) return std::nullopt;
    return std::unexpected(from_lmdb(value.error()));
  }
  auto record = DocRecord::decode_compact(*value, doc);
  if (!record) return corrupt("docs record " + std::to_string(doc));
  return record;
}

StoreResult<> DocsTable::append(const lmdb::Txn& txn, std::uint64_t doc,
                                const DocRecord& record) const {
  const std::string key = coding::be64_key(doc);
  if (!blocked(doc)) {
    return lift(
        tables_.docs.put(txn, key, record.encode(doc, tables_.docs_compact_from), MDB_APPEND));
  }
  return lift(tables_.docs_tail.put(txn, key, record.encode_compact(doc), MDB_APPEND));
}

StoreResult<> DocsTable::rewrite(const lmdb::Txn& txn, std::uint64_t doc,
                                 const DocRecord& record) const {
  const std::string key = coding::be64_key(doc);
  if (!blocked(doc)) {
    return lift(tables_.docs.put(txn, key, record.encode(doc, tables_.docs_compact_from)));
  }
  auto block = block_at(txn, doc);
  if (!block) return std::unexpected(block.error());
  if (*block) {
    const std::uint64_t first = (*block)->first;
    auto records = DocBlock::decode((*block)->bytes, first);
    if (!records) return corrupt("docs block " + std::to_string(first));
    if (doc - first < records->size()) {
      (*records)[doc - first] = record;
      return lift(
          tables_.docs.put(txn, coding::be64_key(first), DocBlock::encode(*records, first)));
    }
  }
  if (auto stored = tables_.docs_tail.get(txn, key); !stored) {
    if (stored.error().code == MDB_NOTFOUND) {
      return store_error(StoreError::Code::kInvalidArgument, "no document " + std::to_string(doc));
    }
    return std::unexpected(from_lmdb(stored.error()));
  }
  return lift(tables_.docs_tail.put(txn, key, record.encode_compact(doc)));
}

StoreResult<> DocsTable::settle(const lmdb::Txn& txn, std::size_t block_bytes) const {
  if (tables_.docs_block_from == records::kNoDocBlocks) return {};
  // The tail's records, then every block they fill, in order; the last, unfilled one stays.
  std::vector<std::pair<std::uint64_t, DocRecord>> tail;
  {
    auto cursor = lift(lmdb::Cursor::open(txn, tables_.docs_tail));
    if (!cursor) return std::unexpected(cursor.error());
    MDB_val key{}, value{};
    for (auto found = lift(cursor->get(key, value, MDB_FIRST));;
         found = lift(cursor->get(key, value, MDB_NEXT))) {
      if (!found) return std::unexpected(found.error());
      if (!*found) break;
      const std::uint64_t doc = coding::decode_be64(static_cast<const char*>(key.mv_data));
      auto record = DocRecord::decode_compact(lmdb::to_view(value), doc);
      if (!record) return corrupt("docs record " + std::to_string(doc));
      tail.emplace_back(doc, std::move(*record));
    }
  }  // the cursor closed before the tail changes
  std::size_t at = 0;
  std::vector<DocRecord> block;
  while (at < tail.size()) {
    // The records from `at` that fit a block: the first alone, the others coded against it.
    const std::uint64_t first = tail[at].first;
    std::size_t bytes = 1 + DocBlock::added_bytes(tail[at].second.encode_compact(first).size());
    std::size_t end = at + 1;
    for (; end < tail.size(); ++end) {
      const std::size_t added = DocBlock::added_bytes(
          tail[end].second.encode_compact(tail[end].first, &tail[at].second).size());
      if (bytes + added > block_bytes) break;
      bytes += added;
    }
    if (end == tail.size()) return {};  // not full yet
    block.clear();
    for (std::size_t i = at; i < end; ++i) {
      if (tail[i].first != first + (i - at)) {
        return corrupt("docs_tail (document " + std::to_string(tail[i].first) + " out of order)");
      }
      block.push_back(std::move(tail[i].second));
    }
    if (auto put = lift(tables_.docs.put(txn, coding::be64_key(first),
                                         DocBlock::encode(block, first), MDB_APPEND));
        !put) {
      return put;
    }
    for (std::size_t i = at; i < end; ++i) {
      if (auto gone = lift(tables_.docs_tail.del(txn, coding::be64_key(tail[i].first))); !gone) {
        return gone;
      }
    }
    at = end;
  }
  return {};
}

StoreResult<std::uint64_t> DocsTable::last(const lmdb::Txn& txn) const {
  MDB_val key{}, value{};
  if (tables_.docs_block_from != records::kNoDocBlocks) {
    auto tail = lift(lmdb::Cursor::open(txn, tables_.docs_tail));
    if (!tail) return std::unexpected(tail.error());
    auto found = lift(tail->get(key, value, MDB_LAST));
    if (!found) return std::unexpected(found.error());
    if (*found) return coding::decode_be64(static_cast<const char*>(key.mv_data));
  }
  auto cursor = lift(lmdb::Cursor::open(txn, tables_.docs));
  if (!cursor) return std::unexpected(cursor.error());
  auto found = lift(cursor->get(key, value, MDB_LAST));
  if (!found) return std::unexpected(found.error());
  if (!*found) return 0;
  const std::uint64_t doc = coding::decode_be64(static_cast<const char*>(key.mv_data));
  if (!blocked(doc)) return doc;
  auto count = DocBlock::count(lmdb::to_view(value));
  if (!count) return corrupt("docs block " + std::to_string(doc));
  return doc + *count - 1;
}

}  // namespace neardup
