#include "store/run.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
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

// The fewest bits (at least 1) that hold v, as a bit-packed width: 1 to 56, else 64 (a field of
// 57 to 63 bits would not fit one 8-byte load at every bit offset).
std::uint8_t bits_for(std::uint64_t v) {
  const auto bits = static_cast<std::uint8_t>(std::max(1, static_cast<int>(std::bit_width(v))));
  return bits <= 56 ? bits : 64;
}

// The bits above the low `bits` of a stored key: shared by the record's entries.
std::uint64_t prefix_of(std::uint64_t last, std::uint8_t bits) {
  return bits >= 64 ? 0 : last & ~((std::uint64_t{1} << bits) - 1);
}

// Appends fields of `bits` bits (1 to 64, each below 2^bits) from a byte on, least significant
// bit first, a u64 at a time: no field is read back from memory (writing each field into the
// bytes the last one wrote would wait on that store).
class BitWriter {
 public:
  explicit BitWriter(char* out) : out_(out) {}
  void put(std::uint64_t v, unsigned bits) {
    word_ |= v << filled_;  // filled_ < 64
    filled_ += bits;
    if (filled_ >= 64) {
      coding::encode_fixed64(out_, word_);
      out_ += 8;
      filled_ -= 64;
      word_ = filled_ == 0 ? 0 : v >> (bits - filled_);
    }
  }
  // Writes the last partial word whole: 8 bytes, the bits past the fields zero.
  void finish() {
    if (filled_ > 0) coding::encode_fixed64(out_, word_);
  }

 private:
  char* out_;
  std::uint64_t word_ = 0;
  unsigned filled_ = 0;
};

// The longest prefix of sorted entries (at least one) whose record fits in kRecordBytes, and
// its form: make(m, key_span, doc_low, doc_high) is the form of the first m entries, whose
// stored keys span key_span (last - first) and whose docs lie in [doc_low, doc_high]. A form's
// size only grows with the entries taken (sorted keys), so one pass finds it: a chunk of entries
// at a time while the record fits with all of them, then one at a time.
template <typename Make>
RecordForm longest_fitting(std::span<const Entry> entries, int shift, Make make) {
  const std::uint64_t first = entries.front().key >> shift;
  std::uint64_t low = entries.front().doc, high = low;
  constexpr std::size_t kChunk = 64;
  std::size_t n = 0;
  auto form_of = [&](std::size_t m, std::uint64_t lo, std::uint64_t hi) {
    return make(m, (entries[m - 1].key >> shift) - first, lo, hi);
  };
  auto fits = [&](std::size_t m, const RecordForm& form) {
    return m == 1 || form.value_bytes(m) <= kRecordBytes;
  };
  while (n < entries.size()) {
    const std::size_t m = std::min(entries.size(), n + kChunk);
    std::uint64_t lo = low, hi = high;
    for (std::size_t i = n; i < m; ++i) {
      lo = std::min(lo, entries[i].doc);
      hi = std::max(hi, entries[i].doc);
    }
    if (fits(m, form_of(m, lo, hi))) {
      low = lo;
      high = hi;
      n = m;
      continue;
    }
    for (; n < m; ++n) {  // the chunk does not fit whole: as many of it as do
      lo = std::min(low, entries[n].doc);
      hi = std::max(high, entries[n].doc);
      if (!fits(n + 1, form_of(n + 1, lo, hi))) break;
      low = lo;
      high = hi;
    }
    break;
  }
  RecordForm form = form_of(n, low, high);
  form.count = static_cast<std::uint32_t>(n);
  return form;
}

}  // namespace

RecordForm packed_form(RunFormat format, std::span<const Entry> entries) {
  RecordForm base = fixed_form(format);
  base.packed = true;
  const int shift = base.shift;
  // Sorted keys: the bits a key needs (first ^ key's top bit) never fall as entries are taken.
  return longest_fitting(
      entries, shift, [&](std::size_t m, std::uint64_t, std::uint64_t lo, std::uint64_t hi) {
        RecordForm form = base;
        form.key_bits = bits_for((entries.front().key >> shift) ^ (entries[m - 1].key >> shift));
        form.doc_bits = bits_for(hi - lo);
        form.prefix = prefix_of(entries[m - 1].key >> shift, form.key_bits);
        form.base_doc = lo;
        return form;
      });
}

RecordForm elias_fano_form(RunFormat format, std::span<const Entry> entries) {
  RecordForm base = fixed_form(format);
  base.packed = true;
  base.elias_fano = true;
  base.prefix = entries.front().key >> base.shift;
  return longest_fitting(
      entries, base.shift,
      [&](std::size_t m, std::uint64_t span, std::uint64_t lo, std::uint64_t hi) {
        RecordForm form = base;
        form.key_bits = static_cast<std::uint8_t>(elias_fano::low_bits_for(m, span));
        // More than 2^32 bits never fits a record; value_bytes() then says so.
        form.high_bits = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(m + (span >> form.key_bits), UINT32_MAX));
        form.doc_bits = bits_for(hi - lo);
        form.base_doc = lo;
        return form;
      });
}

RecordForm byte_packed_form(RunFormat format, std::span<const Entry> entries) {
  RecordForm form = fixed_form(format);
  form.packed = true;
  const int shift = form.shift;
  const std::uint64_t first = entries.front().key >> shift, last = entries.back().key >> shift;
  form.key_bits = static_cast<std::uint8_t>(8 * bytes_for(first ^ last));
  form.prefix = prefix_of(last, form.key_bits);
  std::uint64_t low = entries.front().doc, high = low;
  for (const Entry& e : entries) {
    low = std::min(low, e.doc);
    high = std::max(high, e.doc);
  }
  form.base_doc = low;
  form.doc_bits = static_cast<std::uint8_t>(8 * bytes_for(high - low));
  return form;
}

void encode_record(const RecordForm& form, std::span<const Entry> entries, std::string& out) {
  const std::size_t n = entries.size();
  out.assign(form.value_bytes(n), '\0');
  if (!form.packed) {  // fixed: whole u64s, or 40 bits of each (nothing past the value to load)
    const std::size_t width = form.key_bits / 8;
    for (std::size_t i = 0; i < n; ++i) {
      char buf[8];
      coding::encode_fixed64(buf, entries[i].key >> form.shift);
      std::memcpy(out.data() + width * i, buf, width);
      coding::encode_fixed64(buf, entries[i].doc);
      std::memcpy(out.data() + width * (n + i), buf, width);
    }
    return;
  }
  // The keys' last word may spill zeros into the docs' first bytes (an Elias–Fano record's
  // low parts into its high part's), written after them; the docs' last word ends in the 8 zero
  // bytes of slack.
  if (form.elias_fano) {
    const std::uint64_t mask = (std::uint64_t{1} << form.key_bits) - 1;
    BitWriter low(out.data());
    for (const Entry& e : entries)
      low.put(((e.key >> form.shift) - form.prefix) & mask, form.key_bits);
    low.finish();
    char* high = out.data() + form.field_region(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t bit = high_position(form, entries[i], i);
      high[bit / 8] = static_cast<char>(high[bit / 8] | (1 << (bit % 8)));
    }
  } else {
    BitWriter keys(out.data());
    for (const Entry& e : entries) keys.put((e.key >> form.shift) - form.prefix, form.key_bits);
    keys.finish();
  }
  BitWriter docs(out.data() + form.key_region(n));
  for (const Entry& e : entries) docs.put(e.doc - form.base_doc, form.doc_bits);
  docs.finish();
}

void decode_record(const RecordForm& form, const char* in, std::span<Entry> entries) {
  const std::size_t n = entries.size();
  form.for_each_key(in, n, [&](std::size_t i, std::uint64_t key) {
    entries[i] = Entry{key, form.doc_at(in, n, i)};
  });
}

bool record_form(RunFormat format, std::string_view key, RecordForm& form) {
  form = fixed_form(format);
  const bool elias_fano = key.size() == kEliasFanoRecordKeyBytes;
  const bool bit_packed = key.size() == kBitPackedRecordKeyBytes || elias_fano;
  if (key.size() != kPackedRecordKeyBytes && !bit_packed) return true;
  const char* at = key.data() + kRecordKeyBytes;
  const auto stored_bits = static_cast<std::uint8_t>(format.kept_bits());
  const std::uint64_t last = coding::decode_be64(key.data()) >> form.shift;
  std::uint8_t key_bits = static_cast<std::uint8_t>(at[8]);
  std::uint8_t doc_bits = static_cast<std::uint8_t>(at[9]);
  auto width = [](std::uint8_t bits) { return (bits >= 1 && bits <= 56) || bits == 64; };
  if (elias_fano) {
    form.count = coding::decode_fixed32(at + 10);
    form.prefix = coding::decode_fixed64(at + 14);
    if (key_bits > std::min<std::uint8_t>(56, stored_bits) || !width(doc_bits) || form.count == 0 ||
        form.prefix > last) {
      return false;
    }
    const std::uint64_t high_bits = form.count + ((last - form.prefix) >> key_bits);
    if (high_bits > UINT32_MAX) return false;
    form.high_bits = static_cast<std::uint32_t>(high_bits);
    form.elias_fano = true;
  } else if (bit_packed) {
    form.count = coding::decode_fixed32(at + 10);
    if (!width(key_bits) || key_bits > stored_bits || !width(doc_bits) || form.count == 0) {
      return false;
    }
  } else {
    if (key_bits < 1 || key_bits > stored_bits / 8 || doc_bits < 1 || doc_bits > 8) return false;
    key_bits = static_cast<std::uint8_t>(8 * key_bits);
    doc_bits = static_cast<std::uint8_t>(8 * doc_bits);
  }
  form.packed = true;
  form.key_bits = key_bits;
  form.doc_bits = doc_bits;
  form.base_doc = coding::decode_fixed64(at);
  if (!elias_fano) form.prefix = prefix_of(last, key_bits);
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

lmdb::Result<std::size_t> RunWriter::write_record(std::span<const Entry> all) {
  const RecordForm form = elias_fano_form(format_, all);
  const auto entries = all.first(form.count);
  encode_record(form, entries, encoded_);
  char key[kEliasFanoRecordKeyBytes];
  coding::encode_be64(key, entries.back().key);
  coding::encode_be64(key + 8, entries.back().doc);
  coding::encode_fixed64(key + 16, record_checksum(encoded_.data(), encoded_.size()));
  for (std::size_t j = 0; j < kFences; ++j) {
    const std::size_t at = fence_position(j, entries.size());
    const std::uint64_t fence =
        form.elias_fano ? high_position(form, entries[at], at) : entries[at].key >> 32;
    coding::encode_fixed32(key + kRecordKeyBytesWithoutFences + 4 * j,
                           static_cast<std::uint32_t>(fence));
  }
  coding::encode_fixed64(key + kRecordKeyBytes, form.base_doc);
  key[kRecordKeyBytes + 8] = static_cast<char>(form.key_bits);
  key[kRecordKeyBytes + 9] = static_cast<char>(form.doc_bits);
  coding::encode_fixed32(key + kRecordKeyBytes + 10, form.count);
  coding::encode_fixed64(key + kBitPackedRecordKeyBytes, form.prefix);
  const std::size_t key_size =
      form.elias_fano ? kEliasFanoRecordKeyBytes : kBitPackedRecordKeyBytes;
  auto out = dbi_.reserve(txn_, std::string_view(key, key_size), encoded_.size(), MDB_APPEND);
  if (!out) return std::unexpected(out.error());
  std::memcpy(*out, encoded_.data(), encoded_.size());
  return entries.size();
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
    if (form.count != 0 && form.value_bytes(form.count) != value.mv_size) {
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
  if (!record_form(format_, std::string_view(key_bytes, key.mv_size), form) ||
      (form.count != 0 && form.value_bytes(form.count) != value.mv_size)) {
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
  // Writes a record of the buffered entries; those it left (they did not fit) move to the front.
  auto flush = [&]() -> lmdb::Result<> {
    if (filled == 0) return {};
    auto written = writer.write_record(std::span<const Entry>(buffer.data(), filled));
    if (!written) return std::unexpected(written.error());
    std::copy(buffer.begin() + static_cast<std::ptrdiff_t>(*written),
              buffer.begin() + static_cast<std::ptrdiff_t>(filled), buffer.begin());
    filled -= *written;
    return {};
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
  while (filled > 0) {
    if (auto r = flush(); !r) return r;
  }
  return {};
}

}  // namespace neardup
