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
#include <type_traits>
#include <vector>

#include "common/coding.h"
#include "store/lmdb.h"

namespace neardup {

// Trivial on purpose (no member initializers): deltas allocate large arrays of them untouched.
struct Entry {
  std::uint64_t key;
  std::uint64_t doc;
  auto operator<=>(const Entry&) const = default;
};

// What a column's runs keep of an entry. In memory an entry is always (u64 key, u64 doc).
//   kWide:   the u64 key and the u64 doc: permuted-table, ids and members columns, whose
//            probes compare key bits below any prefix.
//   kNarrow: the top 40 bits of the key and a doc below 2^40: LSH band columns, whose probes
//            look a key up exactly. A run then answers for the key's top 40 bits, a superset
//            that the index confirms against the stored sketch.
// (How many bytes a record spends on each: RecordForm.)
enum class RunFormat : std::uint8_t { kWide, kNarrow };

// The bits of a key a narrow run drops: its low 24 (it keeps the top 40).
inline constexpr int kNarrowDroppedBits = 24;
inline constexpr std::uint64_t kNarrowDropped = (std::uint64_t{1} << kNarrowDroppedBits) - 1;
// The key as a run of this format keeps it: whole (wide) or its top 40 bits (narrow).
inline constexpr std::uint64_t stored_key(RunFormat format, std::uint64_t key) {
  return format == RunFormat::kWide ? key : key & ~kNarrowDropped;
}
// The largest key a run of this format cannot tell from `key`.
inline constexpr std::uint64_t stored_key_end(RunFormat format, std::uint64_t key) {
  return format == RunFormat::kWide ? key : key | kNarrowDropped;
}

inline constexpr std::uint64_t kMaxNarrowDoc = (std::uint64_t{1} << 40) - 1;

// A record is one LMDB value of about 64 KiB (16 overflow pages of 4 KiB less LMDB's 16-byte
// header), its key in the LMDB key (below).
inline constexpr std::size_t kRecordBytes = 16 * 4096 - 16;

// How one record stores its n entries: the n keys, then the n docs, each at a fixed width, so
// that a probe scanning a range reads only keys and the docs of its hits.
//   Bit-packed (what this build writes): a key is the low key_bits bits of its stored bits
//   (the top 40 of a narrow key, all 64 of a wide one), the rest (`prefix`) shared by every
//   entry of the record; a doc is its distance from `base_doc`, the record's smallest, in
//   doc_bits bits. Both widths are the fewest bits the record's entries need (1 to 56, or 64),
//   and entry i's key starts at bit i * key_bits of the record (its docs at a byte boundary
//   after the keys), so a record of a large band run spends about 27 + 22 bits on an entry.
//   The entry count is in the record's key.
//   Byte-packed (formats 6 and 7): the same with widths of whole bytes (8 * key_bytes bits),
//   its entry count from the value's size.
//   Both end in 8 zero bytes, so that every field is read with one 8-byte load.
//   Fixed (stores of format 5 and older): u64 key and u64 doc (wide), or 40 bits of each
//   (narrow), nothing shared.
struct RecordForm {
  std::uint64_t prefix = 0;    // shared stored bits (in the stored key's own space)
  std::uint64_t base_doc = 0;  // added to each doc
  std::uint8_t key_bits = 64, doc_bits = 64;
  std::uint8_t shift = 0;  // the stored bits' place in the key: 0 wide, 24 narrow
  bool packed = false;     // bit- or byte-packed: ends in kPackedSlack zero bytes
  std::uint32_t count = 0;  // entries, for a bit-packed record (0: from the value's size)

  // Bytes of the keys and of the docs of n entries, and of the whole value.
  std::size_t key_region(std::size_t n) const { return (n * key_bits + 7) / 8; }
  std::size_t value_bytes(std::size_t n) const {
    return key_region(n) + (n * doc_bits + 7) / 8 + (packed ? kPackedSlack : 0);
  }
  // The entries a value of `bytes` bytes holds.
  std::size_t entries(std::size_t bytes) const {
    if (count != 0) return count;
    return (bytes - (packed ? kPackedSlack : 0)) * 8 / (std::size_t{key_bits} + doc_bits);
  }
  std::uint64_t key_at(const char* record, std::size_t i) const {
    return (prefix | field(record, i, key_bits)) << shift;
  }
  std::uint64_t doc_at(const char* record, std::size_t n, std::size_t i) const {
    return base_doc + field(record + key_region(n), i, doc_bits);
  }
  // The byte of the record where entry i's key starts.
  const char* key_address(const char* record, std::size_t i) const {
    return record + i * key_bits / 8;
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

// The fixed form of a format (records of format 5 and older).
inline constexpr RecordForm fixed_form(RunFormat format) {
  return format == RunFormat::kWide
             ? RecordForm{.key_bits = 64, .doc_bits = 64, .shift = 0}
             : RecordForm{.key_bits = 40, .doc_bits = 40, .shift = kNarrowDroppedBits};
}

// The most entries a writer puts in a record (a record holds fewer when they need more bits
// than that: records are at most kRecordBytes).
inline constexpr std::size_t entries_per_record(RunFormat format) {
  return (kRecordBytes - RecordForm::kPackedSlack) * 8 / (format == RunFormat::kWide ? 48 : 32);
}

// The bit-packed form of the longest prefix of sorted entries (their keys already
// stored_key()) whose record fits in kRecordBytes (at least one entry): its count is
// form.count. byte_packed_form: the byte-packed form of all of them (formats 6 and 7).
RecordForm packed_form(RunFormat format, std::span<const Entry> entries);
RecordForm byte_packed_form(RunFormat format, std::span<const Entry> entries);
// A record's value for its form: the n keys, the n docs, and (packed) 8 zero bytes.
void encode_record(const RecordForm& form, std::span<const Entry> entries, std::string& out);
void decode_record(const RecordForm& form, const char* in, std::span<Entry> entries);

// A record's checksum: XXH3-64 of its value bytes, never 0 (0 marks a record without one).
// Written into the record's key (below) and checked wherever a whole record is read: by merges
// and RunReader, not by probes.
std::uint64_t record_checksum(const char* value, std::size_t bytes);

// A record's LMDB key: its last entry's key and doc, big-endian (so that MDB_SET_RANGE(lo) lands
// on the record holding the first entry >= lo), then its checksum, little-endian, then its
// fences: the top 32 bits of the keys of entries fence_position(j, n), j < kFences, u32
// little-endian each, which aim a probe at the right cache line of the record (RunProbe).
// A packed record's key goes on with its form: u64 base doc, u8 key bits, u8 doc bits, u32
// entries (bit-packed, 102 bytes); or u64 base doc, u8 key bytes, u8 doc bytes (byte-packed,
// 98 bytes); the prefix is the last key's. Records written before packing have an 88-byte
// key, before fences a 24-byte key, before checksums the 16-byte key alone.
inline constexpr std::size_t kFences = 16;
inline constexpr std::size_t kRecordKeyBytes = 24 + 4 * kFences;
inline constexpr std::size_t kPackedRecordKeyBytes = kRecordKeyBytes + 10;
inline constexpr std::size_t kBitPackedRecordKeyBytes = kRecordKeyBytes + 14;
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
  // bit-packed record, and returns how many it wrote. Entries come in ascending order of
  // (stored_key, doc), across records too. Errors: MDB_MAP_FULL, MDB_TXN_FULL, ...
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
  // Entry i of record r, and record r whole.
  std::uint64_t key_at(std::size_t r, std::size_t i) const {
    return forms[r].key_at(records[r], i);
  }
  void decode(std::size_t r, std::span<Entry> entries) const {
    decode_record(forms[r], records[r], entries);
  }
};

// The error for a record whose bytes do not match its checksum (MDB_CORRUPTED): `where` names
// the run ("t/s-1/0/7"), `last_key` the record's key.
lmdb::LmdbError damaged_record(std::string_view where, std::uint64_t last_key);

// A probe of one run for the entries with lo <= key <= hi, in two steps so that the cache
// misses of many probes overlap: start() finds the record in the directory (a binary search in
// memory) and prefetches the part of the record where the search will begin; finish() searches
// and scans, continuing into the next record while the range continues.
class RunProbe {
 public:
  // gap: the expected distance between neighbouring keys (2^64 / entries; keys are uniform,
  // being permuted fingerprints or hashes), which aims the search at the right cache line.
  // A narrow run is probed for [stored_key(lo), stored_key_end(hi)].
  RunProbe(const RunDirectory& directory, std::uint64_t lo, std::uint64_t hi, double gap)
      : dir_(&directory),
        lo_(stored_key(directory.format, lo)),
        hi_(stored_key_end(directory.format, hi)),
        gap_(gap) {}

  void start() { prefetch(); }
  // start() for a probe that will not be finished: only loads the lines into the cache.
  void prefetch() {
    record_ = first_record();
    position();
  }

  // Calls fn(key, doc) for each entry in range, in order, where doc() returns the entry's doc:
  // it is read only when called (a hit), so a scan touches the keys alone. A callback that
  // returns bool ends the scan by returning false.
  template <typename Fn>
  void finish(Fn&& fn) {
    while (n_ > 0) {
      for (std::ptrdiff_t i = first(); i < n_; ++i) {
        std::uint64_t k = key_at(i);
        if (k > hi_) return;
        auto doc = [this, i] {
          return form_->doc_at(data_, static_cast<std::size_t>(n_), static_cast<std::size_t>(i));
        };
        if constexpr (std::is_same_v<decltype(fn(k, doc)), bool>) {
          if (!fn(k, doc)) return;
        } else {
          fn(k, doc);
        }
      }
      ++record_;
      position();
    }
  }

 private:
  // Loads record_ (none past the end) and prefetches where the search will look.
  void position() {
    n_ = 0;
    if (record_ >= dir_->records.size()) return;
    data_ = dir_->records[record_];
    form_ = &dir_->forms[record_];
    n_ = static_cast<std::ptrdiff_t>(dir_->sizes[record_]);
    last_ = dir_->last_keys[record_];
    if (!dir_->fences.empty()) {
      guess_ = fenced_guess();
    } else {
      // Guess from the record's last key (in the directory: no cache miss) and the gap.
      const double behind = last_ >= lo_ ? static_cast<double>(last_ - lo_) / gap_ : 0;
      guess_ =
          behind >= static_cast<double>(n_ - 1) ? 0 : n_ - 1 - static_cast<std::ptrdiff_t>(behind);
    }
    // Prefetch the lines the search and scan will read: the expected range's keys (with
    // slack for the guess's error), so that the probes of all columns stream in together.
    const double expected = (static_cast<double>(hi_ - lo_) + 1) / gap_;
    const std::ptrdiff_t from = std::max<std::ptrdiff_t>(guess_ - 16, 0);
    const std::ptrdiff_t to = std::min<std::ptrdiff_t>(
        n_, guess_ + 16 + static_cast<std::ptrdiff_t>(std::min(expected, 512.0)));
    const std::ptrdiff_t step = std::max(1, 512 / form_->key_bits);  // keys a cache line
    for (std::ptrdiff_t i = from; i < to; i += step) {
      __builtin_prefetch(form_->key_address(data_, static_cast<std::size_t>(i)));
    }
  }

  // The guess from the record's fences: between the last fence below lo_'s top 32 bits and the
  // next (or the record's last key), in proportion to where lo_ falls between their keys.
  std::ptrdiff_t fenced_guess() const {
    const std::uint32_t* f = dir_->fences.data() + kFences * record_;
    const auto target = static_cast<std::uint32_t>(lo_ >> 32);
    std::size_t j = 0;  // fences below target (they ascend)
    for (std::size_t i = 0; i < kFences; ++i) j += f[i] < target;
    if (j == 0) return 0;
    const auto n = static_cast<std::size_t>(n_);
    const std::size_t from = fence_position(j - 1, n);
    const std::size_t to = j < kFences ? fence_position(j, n) : n - 1;
    const std::uint64_t low = f[j - 1];
    const std::uint64_t high = j < kFences ? f[j] : last_ >> 32;
    if (high <= low || target >= high)
      return static_cast<std::ptrdiff_t>(target >= high ? to : from);
    return static_cast<std::ptrdiff_t>(from + (target - low) * (to - from) / (high - low));
  }

  // The first record whose last key is >= lo_: guessed from lo_'s place in the key space (keys
  // are uniform and records hold equal counts), then walked to; a binary search of the rest of
  // the directory when the guess is far off.
  std::size_t first_record() const {
    const auto& keys = dir_->last_keys;
    const std::size_t n = keys.size();
    if (n == 0) return 0;
    std::size_t r = static_cast<std::size_t>(
        (static_cast<unsigned __int128>(lo_) * n) >> 64);
    for (int step = 0; step < 4; ++step) {
      if (r > 0 && keys[r - 1] >= lo_) {
        --r;
      } else if (r < n && keys[r] < lo_) {
        ++r;
      } else {
        return r;
      }
    }
    const auto at = r > 0 && keys[r - 1] >= lo_
                        ? std::lower_bound(keys.begin(), keys.begin() + static_cast<long>(r), lo_)
                        : std::lower_bound(keys.begin() + static_cast<long>(r), keys.end(), lo_);
    return static_cast<std::size_t>(at - keys.begin());
  }

  std::uint64_t key_at(std::ptrdiff_t i) const {
    return form_->key_at(data_, static_cast<std::size_t>(i));
  }

  // The first entry >= lo (n_ if none): gallop from the guess to bracket it, then binary
  // search. Invariant: key_at(below) < lo <= key_at(above), below = -1 meaning "before".
  std::ptrdiff_t first() const {
    if (last_ < lo_) return n_;
    std::ptrdiff_t below = -1, above = n_ - 1;
    if (key_at(guess_) < lo_) {
      below = guess_;
      for (std::ptrdiff_t step = 1; below + step < above; step *= 2) {
        if (key_at(below + step) >= lo_) {
          above = below + step;
          break;
        }
        below += step;
      }
    } else {
      above = guess_;
      for (std::ptrdiff_t step = 1; above - step > below; step *= 2) {
        if (key_at(above - step) < lo_) {
          below = above - step;
          break;
        }
        above -= step;
      }
    }
    while (above - below > 1) {
      std::ptrdiff_t mid = below + (above - below) / 2;
      (key_at(mid) < lo_ ? below : above) = mid;
    }
    return above;
  }

  const RunDirectory* dir_;
  std::uint64_t lo_, hi_;
  double gap_;
  std::size_t record_ = 0;
  const char* data_ = nullptr;  // the record: n_ keys, then n_ docs
  const RecordForm* form_ = nullptr;
  std::ptrdiff_t n_ = 0, guess_ = 0;
  std::uint64_t last_ = 0;  // the record's last key
};

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
