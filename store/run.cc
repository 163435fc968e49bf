#include "store/run.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace neardup {

namespace {

// The fewest bytes (at least 1) that hold v.
std::uint8_t bytes_for(std::uint64_t v) {
  std::uint8_t n = 1;
  while (n < 8 && (v >> (8 * n)) != 0) ++n;
  return n;
}

void put_field(char* at, std::uint64_t v, std::uint8_t bytes) {
  char buf[8];
  coding::encode_fixed64(buf, v);
  std::memcpy(at, buf, bytes);
}

}  // namespace

RecordForm packed_form(RunFormat format, std::span<const Entry> entries) {
  RecordForm form = fixed_form(format);
  form.packed = true;
  const int shift = form.shift;
  const std::uint64_t first = entries.front().key >> shift, last = entries.back().key >> shift;
  // The low bytes in which the first and last stored keys differ: sorted, every key between
  // them shares the bytes above.
  std::uint8_t key_bytes = bytes_for(first ^ last);
  form.key_bytes = key_bytes;
  form.prefix = key_bytes == 8 ? 0 : last & ~((std::uint64_t{1} << (8 * key_bytes)) - 1);
  std::uint64_t low = entries.front().doc, high = low;
  for (const Entry& e : entries) {
    low = std::min(low, e.doc);
    high = std::max(high, e.doc);
  }
  form.base_doc = low;
  form.doc_bytes = bytes_for(high - low);
  return form;
}

void encode_record(const RecordForm& form, std::span<const Entry> entries, std::string& out) {
  const std::size_t n = entries.size();
  out.assign(n * form.entry_bytes() + (form.packed ? RecordForm::kPackedSlack : 0), '\0');
  char* keys = out.data();
  char* docs = keys + n * form.key_bytes;
  for (std::size_t i = 0; i < n; ++i) {
    put_field(keys + form.key_bytes * i, (entries[i].key >> form.shift) - form.prefix,
              form.key_bytes);
    put_field(docs + form.doc_bytes * i, entries[i].doc - form.base_doc, form.doc_bytes);
  }
}

void decode_record(const RecordForm& form, const char* in, std::span<Entry> entries) {
  const std::size_t n = entries.size();
  for (std::size_t i = 0; i < n; ++i) entries[i] = Entry{form.key_at(in, i), form.doc_at(in, n, i)};
}

bool record_form(RunFormat format, std::string_view key, RecordForm& form) {
  form = fixed_form(format);
  if (key.size() != kPackedRecordKeyBytes) return true;
  const char* at = key.data() + kRecordKeyBytes;
  const std::uint8_t key_bytes = static_cast<std::uint8_t>(at[8]);
  const std::uint8_t doc_bytes = static_cast<std::uint8_t>(at[9]);
  const std::uint8_t stored_bytes = format == RunFormat::kWide ? 8 : 5;
  if (key_bytes < 1 || key_bytes > stored_bytes || doc_bytes < 1 || doc_bytes > 8) return false;
  form.packed = true;
  form.key_bytes = key_bytes;
  form.doc_bytes = doc_bytes;
  form.base_doc = coding::decode_fixed64(at);
  const std::uint64_t last = coding::decode_be64(key.data()) >> form.shift;
  form.prefix = key_bytes == 8 ? 0 : last & ~((std::uint64_t{1} << (8 * key_bytes)) - 1);
  return true;
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
  const RecordForm form = packed_form(format_, entries);
  encode_record(form, entries, encoded_);
  char key[kPackedRecordKeyBytes];
  coding::encode_be64(key, entries.back().key);
  coding::encode_be64(key + 8, entries.back().doc);
  coding::encode_fixed64(key + 16, record_checksum(encoded_.data(), encoded_.size()));
  for (std::size_t j = 0; j < kFences; ++j) {
    const Entry& fence = entries[fence_position(j, entries.size())];
    coding::encode_fixed32(key + kRecordKeyBytesWithoutFences + 4 * j,
                           static_cast<std::uint32_t>(fence.key >> 32));
  }
  coding::encode_fixed64(key + kRecordKeyBytes, form.base_doc);
  key[kRecordKeyBytes + 8] = static_cast<char>(form.key_bytes);
  key[kRecordKeyBytes + 9] = static_cast<char>(form.doc_bytes);
  auto out = dbi_.reserve(txn_, std::string_view(key, sizeof key), encoded_.size(), MDB_APPEND);
  if (!out) return std::unexpected(out.error());
  std::memcpy(*out, encoded_.data(), encoded_.size());
  return {};
}

bool RunDirectory::intact(std::size_t i) const {
  return checksums[i] == 0 || record_checksum(records[i], bytes[i]) == checksums[i];
}

lmdb::Result<RunDirectory> RunDirectory::load(const lmdb::Txn& txn, lmdb::Dbi dbi,
                                              RunFormat format) {
  auto cursor = lmdb::Cursor::open(txn, dbi);
  if (!cursor) return std::unexpected(cursor.error());
  RunDirectory dir;
  dir.format = format;
  MDB_val key{}, value{};
  bool fenced = true;
  for (auto found = cursor->get(key, value, MDB_FIRST);;
       found = cursor->get(key, value, MDB_NEXT)) {
    if (!found) return std::unexpected(found.error());
    if (!*found) break;
    const char* bytes = static_cast<const char*>(key.mv_data);
    RecordForm form;
    if (!record_form(format, std::string_view(bytes, key.mv_size), form)) {
      return std::unexpected(damaged_record("of this column", coding::decode_be64(bytes)));
    }
    dir.last_keys.push_back(stored_key(format, coding::decode_be64(bytes)));
    dir.records.push_back(static_cast<const char*>(value.mv_data));
    dir.sizes.push_back(static_cast<std::uint32_t>(form.entries(value.mv_size)));
    dir.bytes.push_back(static_cast<std::uint32_t>(value.mv_size));
    dir.forms.push_back(form);
    dir.checksums.push_back(
        key.mv_size >= kRecordKeyBytesWithoutFences ? coding::decode_fixed64(bytes + 16) : 0);
    fenced = fenced && key.mv_size >= kRecordKeyBytes;
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
  RecordForm form;
  if (!record_form(format_, std::string_view(key_bytes, key.mv_size), form)) {
    return std::unexpected(damaged_record(where_, coding::decode_be64(key_bytes)));
  }
  chunk_.resize(form.entries(value.mv_size));
  decode_record(form, static_cast<const char*>(value.mv_data), chunk_);
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
  const std::size_t per_record = entries_per_record(format);
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
