#include "store/run.h"

namespace neardup {

lmdb::Result<> RunWriter::add(const Entry& entry) {
  chunk_.push_back(entry);
  if (chunk_.size() == kEntriesPerChunk) return finish();
  return {};
}

lmdb::Result<> RunWriter::finish() {
  if (chunk_.empty()) return {};
  // The record's key is its last entry, big-endian, so MDB_SET_RANGE(lo) lands on the record
  // holding the first entry >= lo.
  char key[16];
  store_be64(key, chunk_.back().key);
  store_be64(key + 8, chunk_.back().doc);
  auto out = dbi_.reserve(txn_, std::string_view(key, sizeof key), 16 * chunk_.size(), MDB_APPEND);
  if (!out) return std::unexpected(out.error());
  for (std::size_t i = 0; i < chunk_.size(); ++i) {
    store_le64(*out + 16 * i, chunk_[i].key);
    store_le64(*out + 16 * i + 8, chunk_[i].doc);
  }
  chunk_.clear();
  return {};
}

lmdb::Result<RunReader> RunReader::open(const lmdb::Txn& txn, lmdb::Dbi dbi) {
  auto cursor = lmdb::Cursor::open(txn, dbi);
  if (!cursor) return std::unexpected(cursor.error());
  RunReader reader;
  reader.cursor_ = std::move(*cursor);
  if (auto loaded = reader.load(MDB_FIRST); !loaded) return std::unexpected(loaded.error());
  return reader;
}

lmdb::Result<> RunReader::next() {
  if (++at_ < chunk_.size()) return {};
  return load(MDB_NEXT);
}

lmdb::Result<> RunReader::load(MDB_cursor_op op) {
  chunk_.clear();
  at_ = 0;
  MDB_val key{}, value{};
  auto found = cursor_.get(key, value, op);
  if (!found) return std::unexpected(found.error());
  if (!*found) return {};
  const char* data = static_cast<const char*>(value.mv_data);
  for (std::size_t i = 0; i < value.mv_size / 16; ++i) {
    chunk_.push_back(Entry{load_le64(data + 16 * i), load_le64(data + 16 * i + 8)});
  }
  return {};
}

}  // namespace neardup
