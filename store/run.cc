#include "store/run.h"

#include <xxhash.h>

#include <cstdio>

namespace neardup {

void encode_record(RunFormat format, std::span<const Entry> entries, char* out) {
  const std::size_t n = entries.size();
  if (format == RunFormat::kWide) {
    for (std::size_t i = 0; i < n; ++i) {
      coding::encode_fixed64(out + 8 * i, entries[i].key);
      coding::encode_fixed64(out + 8 * (n + i), entries[i].doc);
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    coding::encode_fixed40(out + 5 * i, entries[i].key >> kNarrowDroppedBits);
    coding::encode_fixed40(out + 5 * (n + i), entries[i].doc);
  }
}

void decode_record(RunFormat format, const char* in, std::span<Entry> entries) {
  const std::size_t n = entries.size();
  for (std::size_t i = 0; i < n; ++i) {
    entries[i] = Entry{record_key_at(format, in, i), record_doc_at(format, in, n, i)};
  }
}

std::uint64_t record_checksum(const char* value, std::size_t bytes) {
  const std::uint64_t hash = XXH3_64bits(value, bytes);
  return hash == 0 ? 1 : hash;
}

lmdb::LmdbError damaged_record(std::string_view where, std::uint64_t last_key) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(last_key));
  return lmdb::LmdbError{MDB_CORRUPTED,
                         "run " + std::string(where) + ": the record ending at key " + hex +
                             " does not match its checksum: the store is damaged (restore it "
                             "from a copy, or re-index)"};
}

lmdb::Result<> RunWriter::write_record(std::span<const Entry> entries) {
  encoded_.resize(layout_of(format_).entry_bytes() * entries.size());
  encode_record(format_, entries, encoded_.data());
  char key[kRecordKeyBytes];
  coding::encode_be64(key, entries.back().key);
  coding::encode_be64(key + 8, entries.back().doc);
  coding::encode_fixed64(key + 16, record_checksum(encoded_.data(), encoded_.size()));
  for (std::size_t j = 0; j < kFences; ++j) {
    const Entry& fence = entries[fence_position(j, entries.size())];
    coding::encode_fixed32(key + kRecordKeyBytesWithoutFences + 4 * j,
                           static_cast<std::uint32_t>(fence.key >> 32));
  }
  auto out = dbi_.reserve(txn_, std::string_view(key, sizeof key), encoded_.size(), MDB_APPEND);
  if (!out) return std::unexpected(out.error());
  std::memcpy(*out, encoded_.data(), encoded_.size());
  return {};
}

bool RunDirectory::intact(std::size_t i) const {
  return checksums[i] == 0 ||
         record_checksum(records[i], sizes[i] * layout_of(format).entry_bytes()) == checksums[i];
}

lmdb::Result<RunDirectory> RunDirectory::load(const lmdb::Txn& txn, lmdb::Dbi dbi,
                                              RunFormat format) {
  auto cursor = lmdb::Cursor::open(txn, dbi);
  if (!cursor) return std::unexpected(cursor.error());
  RunDirectory dir;
  dir.format = format;
  const std::size_t entry_bytes = layout_of(format).entry_bytes();
  MDB_val key{}, value{};
  bool fenced = true;
  for (auto found = cursor->get(key, value, MDB_FIRST);;
       found = cursor->get(key, value, MDB_NEXT)) {
    if (!found) return std::unexpected(found.error());
    if (!*found) break;
    const char* bytes = static_cast<const char*>(key.mv_data);
    dir.last_keys.push_back(stored_key(format, coding::decode_be64(bytes)));
    dir.records.push_back(static_cast<const char*>(value.mv_data));
    dir.sizes.push_back(static_cast<std::uint32_t>(value.mv_size / entry_bytes));
    dir.checksums.push_back(
        key.mv_size >= kRecordKeyBytesWithoutFences ? coding::decode_fixed64(bytes + 16) : 0);
    fenced = fenced && key.mv_size == kRecordKeyBytes;
    if (fenced) {
      for (std::size_t j = 0; j < kFences; ++j) {
        dir.fences.push_back(coding::decode_fixed32(bytes + kRecordKeyBytesWithoutFences + 4 * j));
      }
    }
  }
  if (!fenced) dir.fences.clear();
  return dir;
}

lmdb::Result<RunReader> RunReader::open(const lmdb::Txn& txn, lmdb::Dbi dbi, RunFormat format,
                                        std::string where) {
  auto cursor = lmdb::Cursor::open(txn, dbi);
  if (!cursor) return std::unexpected(cursor.error());
  RunReader reader;
  reader.format_ = format;
  reader.where_ = std::move(where);
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
  const char* key_bytes = static_cast<const char*>(key.mv_data);
  if (key.mv_size >= kRecordKeyBytesWithoutFences &&
      record_checksum(static_cast<const char*>(value.mv_data), value.mv_size) !=
          coding::decode_fixed64(key_bytes + 16)) {
    return std::unexpected(damaged_record(where_, coding::decode_be64(key_bytes)));
  }
  chunk_.resize(value.mv_size / layout_of(format_).entry_bytes());
  decode_record(format_, static_cast<const char*>(value.mv_data), chunk_);
  return {};
}

lmdb::Result<> merge_runs(const lmdb::Txn& txn, RunFormat format, std::span<const Entry> fresh,
                          std::span<const lmdb::Dbi> inputs, lmdb::Dbi out) {
  // A source is a sorted span being consumed, refilled a record at a time from its reader.
  struct Source {
    const Entry* at;
    const Entry* end;
    RunReader* reader;  // null for fresh
  };
  std::vector<RunReader> readers;
  readers.reserve(inputs.size());
  std::vector<Source> sources;
  if (!fresh.empty()) sources.push_back({fresh.data(), fresh.data() + fresh.size(), nullptr});
  for (lmdb::Dbi input : inputs) {
    auto reader = RunReader::open(txn, input, format);
    if (!reader) return std::unexpected(reader.error());
    readers.push_back(std::move(*reader));
  }
  for (RunReader& reader : readers) {
    auto rest = reader.rest();
    if (!rest.empty()) sources.push_back({rest.data(), rest.data() + rest.size(), &reader});
  }
  RunWriter writer(txn, out, format);
  const std::size_t per_record = layout_of(format).entries_per_record();
  std::vector<Entry> buffer(per_record);
  std::size_t filled = 0;
  auto flush = [&]() -> lmdb::Result<> {
    if (filled == 0) return {};
    auto written = writer.write_record(std::span<const Entry>(buffer.data(), filled));
    filled = 0;
    return written;
  };
  while (!sources.empty()) {
    // The source with the smallest entry, and the smallest entry of the others: the first
    // source's entries up to that bound go out without comparing the others again.
    std::size_t min = 0;
    for (std::size_t i = 1; i < sources.size(); ++i) {
      if (*sources[i].at < *sources[min].at) min = i;
    }
    Source& s = sources[min];
    const Entry* bound = nullptr;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (i != min && (bound == nullptr || *sources[i].at < *bound)) bound = sources[i].at;
    }
    do {
      buffer[filled++] = *s.at++;
      if (filled == per_record) {
        if (auto r = flush(); !r) return r;
      }
    } while (s.at != s.end && (bound == nullptr || *s.at < *bound));
    if (s.at == s.end) {
      std::span<const Entry> rest;
      if (s.reader != nullptr) {
        if (auto r = s.reader->next_record(); !r) return r;
        rest = s.reader->rest();
      }
      if (rest.empty()) {
        sources.erase(sources.begin() + static_cast<std::ptrdiff_t>(min));
      } else {
        s.at = rest.data();
        s.end = rest.data() + rest.size();
      }
    }
  }
  return flush();
}

}  // namespace neardup
