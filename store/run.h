// Sorted runs: the on-disk part of one index column (a permuted table of one scheme, ids,
// members, or one scheme's LSH bands).
//
// A column is a multiset of entries (key, doc): for a table, key is the permuted fingerprint;
// for ids, the xxh3-64 of the page id; for bands, a band key. Recent entries live in a Delta
// (memory, rebuilt from the docs table at open); older ones in a few immutable sorted runs, each
// its own LMDB database written once in key order with MDB_APPEND and dropped whole when merged
// into a larger run (an LSM tree over LMDB). A run packs thousands of entries per record (a
// value of about 64 KiB: its keys, then its docs, each without the bits the record's entries
// share), so its B-tree is a few leaf pages, mirrored in memory by a RunDirectory; a probe is a
// binary search of the directory and a search in one or two cache-cold pages of keys, and an
// insert costs 7-11 bytes of sequential writing per merge instead of a random 4 KiB page.
// Layout: FORMAT.md.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/coding.h"
#include "store/elias_fano.h"
#include "store/lmdb.h"

namespace neardup {

// Trivial on purpose (no member initializers): deltas allocate large arrays of them untouched.
struct Entry {
  std::uint64_t key;
  std::uint64_t doc;
  auto operator<=>(const Entry&) const = default;
  // The same order as <=>, in one 128-bit comparison (sorts and merges compare entries most).
  friend bool operator<(const Entry& a, const Entry& b) {
    return ((static_cast<unsigned __int128>(a.key) << 64) | a.doc) <
           ((static_cast<unsigned __int128>(b.key) << 64) | b.doc);
  }
};

// What a column's runs keep of an entry. In memory an entry is always (u64 key, u64 doc).
//   kWide:   the u64 key and the u64 doc: permuted-table, ids and members columns, whose
//            probes compare key bits below any prefix.
//   kNarrow: the top 40 bits of the key and a doc below 2^40: LSH band columns, whose probes
//            look a key up exactly. A run then answers for the key's top 40 bits, a superset
//            that the index confirms against the stored sketch.
//   keeping(kept): the top `kept` bits of the key (40 to 63) and the u64 doc: the
//            permuted-table and ids columns of a store of format 11 or later (store/FORMAT.md,
//            "Keys that keep fewer bits"), whose keys are cut to their top `kept` bits before
//            they enter the column, and whose candidates the index confirms against the stored
//            document (its fingerprint, its id). Its runs are Elias–Fano only; the column
//            merges as a wide one (column.h).
// (How many bytes a record spends on each: RecordForm.)
struct RunFormat {
  enum class Kind : std::uint8_t { kWide, kNarrow, kShort };
  Kind kind = Kind::kWide;
  std::uint8_t dropped = 0;  // the low bits of a key its runs drop: 0 wide, 24 narrow, 1-24 short

  static const RunFormat kWide, kNarrow;
  // The format of a table or ids column that keeps the top `kept` bits of each key (meta
  // key_bits: 64 is wide). Contract: kMinKeptBits <= kept <= 64.
  static constexpr RunFormat keeping(std::uint32_t kept);
  // The bits of a key its runs keep: 64 (wide), 40 (narrow) or the kept bits (short).
  constexpr std::uint32_t kept_bits() const { return 64 - dropped; }
  constexpr std::uint64_t dropped_mask() const { return (std::uint64_t{1} << dropped) - 1; }
  bool operator==(const RunFormat&) const = default;
};
// The bits of a key a narrow run drops: its low 24 (it keeps the top 40).
inline constexpr int kNarrowDroppedBits = 24;
// The fewest bits a short run keeps of a key (meta key_bits).
inline constexpr std::uint32_t kMinKeptBits = 64 - kNarrowDroppedBits;
inline constexpr RunFormat RunFormat::kWide{Kind::kWide, 0};
inline constexpr RunFormat RunFormat::kNarrow{Kind::kNarrow, kNarrowDroppedBits};
constexpr RunFormat RunFormat::keeping(std::uint32_t kept) {
  return kept >= 64 ? kWide : RunFormat{Kind::kShort, static_cast<std::uint8_t>(64 - kept)};
}
// The key as a run of this format keeps it: whole (wide) or its top kept_bits() bits.
inline constexpr std::uint64_t stored_key(RunFormat format, std::uint64_t key) {
  return key & ~format.dropped_mask();
}
// The largest key a run of this format cannot tell from `key`.
inline constexpr std::uint64_t stored_key_end(RunFormat format, std::uint64_t key) {
  return key | format.dropped_mask();
}

inline constexpr std::uint64_t kMaxNarrowDoc = (std::uint64_t{1} << 40) - 1;

// A record is one LMDB value of about 64 KiB (16 overflow pages of 4 KiB less LMDB's 16-byte
// header), its key in the LMDB key (below).
inline constexpr std::size_t kRecordBytes = 16 * 4096 - 16;

// How one record stores its n entries: the n keys, then the n docs at a fixed width, so that a
// probe scanning a range reads only keys and the docs of its hits.
//   Elias–Fano (what this build writes, for every run): the keys less the first entry's stored
//   key (`prefix`), coded Elias–Fano (store/elias_fano.h) with `key_bits` low bits; the docs as
//   in a bit-packed record. A band key of a large run takes about 15 bits instead of 27, a
//   wide key of a 10M-entry run about 43 instead of 54. Keys are read in order only (no
//   key_at()): RunProbe searches from the record's fences, which are the high-part bits of
//   their entries.
//   Bit-packed (written by format 8 for every run, and by format 9 at first for wide ones): a key
//   is the low key_bits bits of its stored bits (the top 40 of a narrow key, all 64 of a wide one),
//   the rest (`prefix`) shared by every entry of the record; a doc is its distance from
//   `base_doc`, the record's smallest, in doc_bits bits. Both widths are the fewest bits the
//   record's entries need (1 to 56, or 64), and entry i's key starts at bit i * key_bits of the
//   record (its docs at a byte boundary after the keys), so a record of a large band run
//   spends about 27 + 22 bits on an entry. The entry count is in the record's key.
//   Byte-packed (formats 6 and 7): the same with widths of whole bytes (8 * key_bytes bits),
//   its entry count from the value's size.
//   All three end in 8 zero bytes, so that every field is read with one 8-byte load.
//   Fixed (stores of format 5 and older): u64 key and u64 doc (wide), or 40 bits of each
//   (narrow), nothing shared.
struct RecordForm {
  std::uint64_t prefix = 0;    // shared stored bits (in the stored key's own space); the first
                               // entry's stored key (Elias–Fano)
  std::uint64_t base_doc = 0;  // added to each doc
  std::uint8_t key_bits = 64, doc_bits = 64;  // key_bits: a key's low bits (Elias–Fano)
  std::uint8_t shift = 0;  // the stored bits' place in the key: 0 wide, 24 narrow
  bool packed = false;     // bit- or byte-packed or Elias–Fano: ends in kPackedSlack zero bytes
  bool elias_fano = false;
  std::uint32_t count = 0;      // entries, for a bit-packed or Elias–Fano record (0: from the
                                // value's size)
  std::uint32_t high_bits = 0;  // Elias–Fano: bits of the keys' high part

  // Bytes of the keys and of the docs of n entries, and of the whole value.
  // The keys' fixed-width fields (an Elias–Fano record's low parts), then their high part.
  std::size_t field_region(std::size_t n) const { return (n * key_bits + 7) / 8; }
  std::size_t key_region(std::size_t n) const {
    return field_region(n) + (elias_fano ? (std::size_t{high_bits} + 7) / 8 : 0);
  }
  std::size_t value_bytes(std::size_t n) const {
    return key_region(n) + (n * doc_bits + 7) / 8 + (packed ? kPackedSlack : 0);
  }
  // The entries a value of `bytes` bytes holds.
  std::size_t entries(std::size_t bytes) const {
    if (count != 0) return count;
    return (bytes - (packed ? kPackedSlack : 0)) * 8 / (std::size_t{key_bits} + doc_bits);
  }
  // Entry i's key. Contract: not Elias–Fano (whose keys are read in order: keys()).
  std::uint64_t key_at(const char* record, std::size_t i) const {
    return (prefix | field(record, i, key_bits)) << shift;
  }
  std::uint64_t doc_at(const char* record, std::size_t n, std::size_t i) const {
    return base_doc + field(record + key_region(n), i, doc_bits);
  }
  // The byte of the record where entry i's key starts (not Elias–Fano).
  const char* key_address(const char* record, std::size_t i) const {
    return record + i * key_bits / 8;
  }
  // An Elias–Fano record's keys, and the key of a value read from them.
  elias_fano::Reader keys(const char* record) const {
    return elias_fano::Reader(record, record + field_region(count), key_bits, high_bits);
  }
  std::uint64_t key_of(std::uint64_t value) const { return (prefix + value) << shift; }
  // Calls fn(i, key) for each of the n entries in order (every form).
  template <typename Fn>
  void for_each_key(const char* record, std::size_t n, Fn&& fn) const {
    if (!elias_fano) {
      for (std::size_t i = 0; i < n; ++i) fn(i, key_at(record, i));
      return;
    }
    keys(record).for_each_value(n, [&](std::uint64_t i, std::uint64_t value) {
      fn(static_cast<std::size_t>(i), key_of(value));
    });
  }

  static constexpr std::size_t kPackedSlack = 8;

 private:
  std::uint64_t field(const char* region, std::size_t i, std::uint8_t bits) const {
    if (bits == 64) return coding::decode_fixed64(region + 8 * i);
    if (!packed) return coding::decode_fixed40(region + 5 * i);  // a fixed narrow record: no slack
    const std::size_t bit = i * bits;
    return (coding::decode_fixed64(region + bit / 8) >> (bit % 8)) &
           ((std::uint64_t{1} << bits) - 1);
  }
};

// The fixed form of a format (records of format 5 and older; what the packed forms start from).
// A short format's fixed form is its base for Elias–Fano only (no fixed record was written).
inline constexpr RecordForm fixed_form(RunFormat format) {
  if (format == RunFormat::kNarrow) {
    return RecordForm{.key_bits = 40, .doc_bits = 40, .shift = kNarrowDroppedBits};
  }
  return RecordForm{.key_bits = static_cast<std::uint8_t>(format.kept_bits()),
                    .doc_bits = 64,
                    .shift = format.dropped};
}

// The most entries a writer puts in a record (a record holds fewer when they need more bits
// than that: records are at most kRecordBytes).
inline constexpr std::size_t entries_per_record(RunFormat format) {
  return (kRecordBytes - RecordForm::kPackedSlack) * 8 / (format == RunFormat::kWide ? 48 : 32);
}

// The Elias–Fano (bit-packed) form of the longest prefix of sorted entries (their keys already
// stored_key()) whose record fits in kRecordBytes (at least one entry): its count is
// form.count. byte_packed_form: the byte-packed form of all of them. This build writes
// Elias–Fano records only; the other forms are those of earlier builds (bit-packed: format 8,
// and format 9's first wide runs; byte-packed: formats 6 and 7), which tests write to check
// that they are still read.
RecordForm packed_form(RunFormat format, std::span<const Entry> entries);
RecordForm elias_fano_form(RunFormat format, std::span<const Entry> entries);
RecordForm byte_packed_form(RunFormat format, std::span<const Entry> entries);
// A record's value for its form: the n keys, the n docs, and (packed) 8 zero bytes.
void encode_record(const RecordForm& form, std::span<const Entry> entries, std::string& out);
// The bit of entry i's 1 in the high part of an Elias–Fano record (its fence: RunProbe).
inline std::uint64_t high_position(const RecordForm& form, const Entry& e, std::size_t i) {
  return (((e.key >> form.shift) - form.prefix) >> form.key_bits) + i;
}
void decode_record(const RecordForm& form, const char* in, std::span<Entry> entries);

// A record's checksum: XXH3-64 of its value bytes, never 0 (0 marks a record without one).
// Written into the record's key (below) and checked wherever a whole record is read: by merges
// and RunReader, not by probes.
std::uint64_t record_checksum(const char* value, std::size_t bytes);

// A record's LMDB key: its last entry's key and doc, big-endian (so that MDB_SET_RANGE(lo) lands
// on the record holding the first entry >= lo), then its checksum, little-endian, then its
// fences: for entries fence_position(j, n), j < kFences, the top 32 bits of their keys (the
// high-part bits of their 1s in an Elias–Fano record: high_position), u32 little-endian each,
// which aim a probe at the right cache line of the record (RunProbe).
// A packed record's key goes on with its form: u64 base doc, u8 key bits, u8 doc bits, u32
// entries (bit-packed, 102 bytes), then u64 the first entry's stored key (Elias–Fano, 110
// bytes); or u64 base doc, u8 key bytes, u8 doc bytes (byte-packed, 98 bytes); the prefix is
// the last key's. Records written before packing have an 88-byte key, before fences a 24-byte
// key, before checksums the 16-byte key alone.
inline constexpr std::size_t kFences = 16;
inline constexpr std::size_t kRecordKeyBytes = 24 + 4 * kFences;
inline constexpr std::size_t kPackedRecordKeyBytes = kRecordKeyBytes + 10;
inline constexpr std::size_t kBitPackedRecordKeyBytes = kRecordKeyBytes + 14;
inline constexpr std::size_t kEliasFanoRecordKeyBytes = kRecordKeyBytes + 22;
inline constexpr std::size_t kRecordKeyBytesWithoutFences = 24;
inline constexpr std::size_t kRecordKeyBytesWithoutChecksum = 16;
inline constexpr std::size_t fence_position(std::size_t j, std::size_t n) {
  return j * n / kFences;
}

// Appends sorted entries to an empty run database, a record at a time.
class RunWriter {
 public:
  RunWriter(const lmdb::Txn& txn, lmdb::Dbi dbi, RunFormat format)
      : txn_(txn), dbi_(dbi), format_(format) {}
  // Writes the longest prefix of `entries` (one or more) that fits in a record as one
  // Elias–Fano record, and returns how many it wrote.
  // Entries come in ascending order of (stored_key, doc), across records too. Errors: MDB_MAP_FULL,
  // MDB_TXN_FULL, ...
  lmdb::Result<std::size_t> write_record(std::span<const Entry> entries);

 private:
  const lmdb::Txn& txn_;
  lmdb::Dbi dbi_;
  RunFormat format_;
  std::string encoded_;  // a record's value, checksummed before it is put
};

// The form of a record from its LMDB key and value size (any of the key sizes above). False
// when the key's widths are not a form (a damaged key).
bool record_form(RunFormat format, std::string_view key, RecordForm& form);

// Merges `fresh` (sorted by (stored_key, doc), keys already stored_key()) and the whole runs
// `inputs` into the empty run `out`, in one pass (a compaction of the LSM column). Errors:
// those of RunWriter and of reading the inputs.
lmdb::Result<> merge_runs(const lmdb::Txn& txn, RunFormat format, std::span<const Entry> fresh,
                          std::span<const lmdb::Dbi> inputs, lmdb::Dbi out);

// Where a run's records are, kept in memory so that a probe needs no B-tree descent: per
// record (in order), its last key, its bytes in the LMDB map and its entry count.
// Contract: built in a transaction, it stays valid after that transaction while the run is not
// dropped and the map is not resized: LMDB never moves or rewrites the pages of a committed
// database that is still referenced (copy-on-write, and a live run is never written again).
// The index rebuilds a column's directories after a merge and all of them after map growth.
struct RunDirectory {
  RunFormat format = RunFormat::kWide;
  std::vector<std::uint64_t> last_keys;  // stored_key of each record's last entry
  std::vector<const char*> records;
  std::vector<std::uint32_t> sizes;      // entries per record
  std::vector<std::uint32_t> bytes;      // value bytes per record
  std::vector<RecordForm> forms;         // per record
  std::vector<std::uint64_t> checksums;  // per record, 0 when it has none
  // kFences per record when every record has them (else empty): one cache line a record.
  std::vector<std::uint32_t> fences;

  // Walks the run's leaf nodes (the records themselves are not read). Errors: LMDB's,
  // MDB_CORRUPTED for a record key that names no form.
  static lmdb::Result<RunDirectory> load(const lmdb::Txn& txn, lmdb::Dbi dbi, RunFormat format);

  // Reads record i whole and checks it against its checksum; true for a record without one.
  bool intact(std::size_t i) const;
  // Bytes of memory it holds.
  std::size_t memory() const {
    return last_keys.capacity() * sizeof(std::uint64_t) + records.capacity() * sizeof(char*) +
           (sizes.capacity() + bytes.capacity() + fences.capacity()) * sizeof(std::uint32_t) +
           forms.capacity() * sizeof(RecordForm) + checksums.capacity() * sizeof(std::uint64_t);
  }
  // The keys of record r in order (fn(i, key)), and record r whole.
  template <typename Fn>
  void for_each_key(std::size_t r, Fn&& fn) const {
    forms[r].for_each_key(records[r], sizes[r], fn);
  }
  void decode(std::size_t r, std::span<Entry> entries) const {
    decode_record(forms[r], records[r], entries);
  }
};

// The error for a record whose bytes do not match its checksum (MDB_CORRUPTED): `where` names
// the run ("t/s-1/0/7"), `last_key` the record's key.
lmdb::LmdbError damaged_record(std::string_view where, std::uint64_t last_key);

// Reads a whole run in order, a record at a time (for merges).
class RunReader {
 public:
  // Records are checked against their checksums as they are read: a damaged one is
  // damaged_record(where, ...).
  static lmdb::Result<RunReader> open(const lmdb::Txn& txn, lmdb::Dbi dbi, RunFormat format,
                                      std::string where = "a run");
  // The current entry; valid while !done().
  const Entry& current() const { return chunk_[at_]; }
  bool done() const { return at_ >= chunk_.size(); }
  lmdb::Result<> next();
  // The entries of the current record from the current one on (empty when done), and a move
  // to the next record.
  std::span<const Entry> rest() const {
    return std::span<const Entry>(chunk_).subspan(std::min(at_, chunk_.size()));
  }
  lmdb::Result<> next_record() { return load(MDB_NEXT); }

 private:
  lmdb::Result<> load(MDB_cursor_op op);
  RunFormat format_ = RunFormat::kWide;
  std::string where_;
  lmdb::Cursor cursor_;
  std::vector<Entry> chunk_;
  std::size_t at_ = 0;
};

}  // namespace neardup
