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
  const std::string_view bytes = *value;  // valid while the transaction writes nothing
  auto base = tail_base(txn);
  if (!base) return std::unexpected(base.error());
  if (!*base) return corrupt("docs_tail");
  if ((*base)->first == doc) return std::move((*base)->second);
  auto record = DocRecord::decode_compact(bytes, doc, &(*base)->second);
  if (!record) return corrupt("docs record " + std::to_string(doc));
  return record;
}

StoreResult<std::optional<std::pair<std::uint64_t, DocRecord>>> DocsTable::tail_base(
    const lmdb::Txn& txn) const {
  auto cursor = lift(lmdb::Cursor::open(txn, tables_.docs_tail));
  if (!cursor) return std::unexpected(cursor.error());
  MDB_val key{}, value{};
  auto found = lift(cursor->get(key, value, MDB_FIRST));
  if (!found) return std::unexpected(found.error());
  if (!*found) return std::nullopt;
  const std::uint64_t first = coding::decode_be64(static_cast<const char*>(key.mv_data));
  auto record = DocRecord::decode_compact(lmdb::to_view(value), first);
  if (!record) return corrupt("docs record " + std::to_string(first));
  return std::pair{first, std::move(*record)};
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
  // Coded against the tail's first record as before: a rewrite changes neither its id nor its
  // time, which the others are coded against.
  auto base = tail_base(txn);
  if (!base) return std::unexpected(base.error());
  if (!*base) return corrupt("docs_tail");
  const bool first = (*base)->first == doc;
  return lift(tables_.docs_tail.put(
      txn, key, record.encode_compact(doc, first ? nullptr : &(*base)->second)));
}

StoreResult<> DocsTable::Appender::load(const lmdb::Txn& txn) {
  count_ = 0;
  bytes_ = 0;
  auto base = DocsTable(tables_).tail_base(txn);
  if (!base) return std::unexpected(base.error());
  if (*base) {
    first_ = (*base)->first;
    base_ = std::move((*base)->second);
    auto cursor = lift(lmdb::Cursor::open(txn, tables_.docs_tail));
    if (!cursor) return std::unexpected(cursor.error());
    MDB_val key{}, value{};
    for (auto found = lift(cursor->get(key, value, MDB_FIRST));;
         found = lift(cursor->get(key, value, MDB_NEXT))) {
      if (!found) return std::unexpected(found.error());
      if (!*found) break;
      ++count_;
      bytes_ += DocBlock::added_bytes(value.mv_size);
    }
  }
  loaded_ = true;
  return {};
}

StoreResult<> DocsTable::Appender::close(const lmdb::Txn& txn) {
  std::string block;
  coding::put_varint64(block, count_);
  {
    auto cursor = lift(lmdb::Cursor::open(txn, tables_.docs_tail));
    if (!cursor) return std::unexpected(cursor.error());
    MDB_val key{}, value{};
    std::uint64_t next = first_;
    for (auto found = lift(cursor->get(key, value, MDB_FIRST));;
         found = lift(cursor->get(key, value, MDB_NEXT))) {
      if (!found) return std::unexpected(found.error());
      if (!*found) break;
      if (coding::decode_be64(static_cast<const char*>(key.mv_data)) != next++) {
        return corrupt("docs_tail (not the consecutive documents from " + std::to_string(first_) +
                       ")");
      }
      coding::put_varint64(block, value.mv_size);
      block += lmdb::to_view(value);
    }
    if (next != first_ + count_) return corrupt("docs_tail");
  }  // the cursor closed before the tail is emptied
  if (auto put = lift(tables_.docs.put(txn, coding::be64_key(first_), block, MDB_APPEND)); !put) {
    return put;
  }
  if (auto emptied = lift(tables_.docs_tail.drop(txn, false)); !emptied) return emptied;
  count_ = 0;
  bytes_ = 0;
  return {};
}

StoreResult<> DocsTable::Appender::append(const lmdb::Txn& txn, std::uint64_t doc,
                                          const DocRecord& record) {
  const std::string key = coding::be64_key(doc);
  if (doc < tables_.docs_block_from) {
    return lift(
        tables_.docs.put(txn, key, record.encode(doc, tables_.docs_compact_from), MDB_APPEND));
  }
  if (!loaded_) {
    if (auto loaded = load(txn); !loaded) return loaded;
  }
  std::string bytes;
  if (count_ > 0) {
    bytes = record.encode_compact(doc, &base_);
    std::string count;
    coding::put_varint64(count, count_ + 1);
    if (count.size() + bytes_ + DocBlock::added_bytes(bytes.size()) > block_bytes_) {
      if (auto closed = close(txn); !closed) return closed;
    }
  }
  if (count_ == 0) {
    bytes = record.encode_compact(doc);
    first_ = doc;
    base_ = record;
  }
  if (auto put = lift(tables_.docs_tail.put(txn, key, bytes, MDB_APPEND)); !put) return put;
  ++count_;
  bytes_ += DocBlock::added_bytes(bytes.size());
  return {};
}

StoreResult<> DocsTable::Appender::rewrite(const lmdb::Txn& txn, std::uint64_t doc,
                                           const DocRecord& record) {
  loaded_ = false;  // a tail record's size may change: read the tail again at the next append
  return DocsTable(tables_).rewrite(txn, doc, record);
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
