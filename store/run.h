// Sorted runs: the on-disk part of one index column (a permuted table of one scheme, or ids).
//
// A column is a multiset of 16-byte entries (key, doc): for a table, key is the permuted
// fingerprint; for ids, the xxh3-64 of the page id. Recent entries live in a Delta (memory,
// rebuilt from the docs table at open); older ones in a few immutable sorted runs, each its own
// LMDB database written once in key order with MDB_APPEND and dropped whole when merged into a
// larger run (an LSM tree over LMDB). A run packs 4095 entries per record (a 64 KiB overflow
// value: its keys, then its docs), so its B-tree is a few leaf pages, mirrored in memory by a
// RunDirectory; a probe is a binary search of the directory and a search in one or two
// cache-cold pages of keys, and an insert costs 16 bytes of sequential writing per merge
// instead of a random 4 KiB page. Layout: FORMAT.md.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "store/lmdb.h"

namespace neardup {

// Trivial on purpose (no member initializers): deltas allocate large arrays of them untouched.
struct Entry {
  std::uint64_t key;
  std::uint64_t doc;
  auto operator<=>(const Entry&) const = default;
};

// Entries per run record: 4095 entries of 16 bytes plus LMDB's 16-byte page header fill exactly
// 16 overflow pages of 4 KiB.
inline constexpr std::size_t kEntriesPerChunk = 4095;

inline void store_be64(char* out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<char>(v & 0xff);
}
inline std::uint64_t load_be64(const char* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}
inline void store_le64(char* out, std::uint64_t v) { std::memcpy(out, &v, 8); }  // x86-64, arm64
inline std::uint64_t load_le64(const char* in) {
  std::uint64_t v;
  std::memcpy(&v, in, 8);
  return v;
}

// A record's bytes for n entries: the n keys, then the n docs (u64 each, little-endian), so a
// probe scanning a prefix range reads only keys (8 bytes an entry) and the docs of its hits.
inline void encode_record(std::span<const Entry> entries, char* out) {
  const std::size_t n = entries.size();
  for (std::size_t i = 0; i < n; ++i) {
    store_le64(out + 8 * i, entries[i].key);
    store_le64(out + 8 * (n + i), entries[i].doc);
  }
}
inline void decode_record(const char* in, std::span<Entry> entries) {
  const std::size_t n = entries.size();
  for (std::size_t i = 0; i < n; ++i) {
    entries[i] = Entry{load_le64(in + 8 * i), load_le64(in + 8 * (n + i))};
  }
}

// Appends sorted entries to an empty run database, a record at a time.
class RunWriter {
 public:
  RunWriter(const lmdb::Txn& txn, lmdb::Dbi dbi) : txn_(txn), dbi_(dbi) {}
  // Writes 1..kEntriesPerChunk entries as one record. Entries come in ascending (key, doc)
  // order, across records too; every record but the last holds kEntriesPerChunk.
  // Errors: MDB_MAP_FULL, MDB_TXN_FULL, ...
  lmdb::Result<> write_record(std::span<const Entry> entries);

 private:
  const lmdb::Txn& txn_;
  lmdb::Dbi dbi_;
};

// Merges `fresh` (sorted) and the whole runs `inputs` into the empty run `out`, in one pass
// (a compaction of the LSM column). Errors: those of RunWriter and of reading the inputs.
lmdb::Result<> merge_runs(const lmdb::Txn& txn, std::span<const Entry> fresh,
                          std::span<const lmdb::Dbi> inputs, lmdb::Dbi out);

// Where a run's records are, kept in memory so that a probe needs no B-tree descent: per
// record (in order), its last key, its bytes in the LMDB map and its entry count.
// Contract: built in a transaction, it stays valid after that transaction while the run is not
// dropped and the map is not resized: LMDB never moves or rewrites the pages of a committed
// database that is still referenced (copy-on-write, and a live run is never written again).
// The index rebuilds a column's directories after a merge and all of them after map growth.
struct RunDirectory {
  std::vector<std::uint64_t> last_keys;
  std::vector<const char*> records;
  std::vector<std::uint32_t> sizes;  // entries per record

  // Walks the run's leaf nodes (the records themselves are not read). Errors: LMDB's.
  static lmdb::Result<RunDirectory> load(const lmdb::Txn& txn, lmdb::Dbi dbi);
};

// A probe of one run for the entries with lo <= key <= hi, in two steps so that the cache
// misses of many probes overlap: start() finds the record in the directory (a binary search in
// memory) and prefetches the part of the record where the search will begin; finish() searches
// and scans, continuing into the next record while the range continues.
class RunProbe {
 public:
  // gap: the expected distance between neighbouring keys (2^64 / entries; keys are uniform,
  // being permuted fingerprints or hashes), which aims the search at the right cache line.
  RunProbe(const RunDirectory& directory, std::uint64_t lo, std::uint64_t hi, double gap)
      : dir_(&directory), lo_(lo), hi_(hi), gap_(gap) {}

  lmdb::Result<> start() {
    prefetch();
    return {};
  }
  // start() for a probe that will not be finished: only loads the lines into the cache.
  void prefetch() {
    const auto& keys = dir_->last_keys;
    record_ =
        static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), lo_) - keys.begin());
    position();
  }

  // Calls fn(key, doc) for each entry in range, in order, where doc() returns the entry's doc:
  // it is read only when called (a hit), so a scan touches the keys alone.
  template <typename Fn>
  lmdb::Result<> finish(Fn&& fn) {
    while (n_ > 0) {
      for (std::ptrdiff_t i = first(); i < n_; ++i) {
        std::uint64_t k = key_at(i);
        if (k > hi_) return {};
        fn(k, [this, i] { return load_le64(data_ + 8 * (n_ + i)); });
      }
      ++record_;
      position();
    }
    return {};
  }

 private:
  // Loads record_ (none past the end) and prefetches where the search will look.
  void position() {
    n_ = 0;
    if (record_ >= dir_->records.size()) return;
    data_ = dir_->records[record_];
    n_ = static_cast<std::ptrdiff_t>(dir_->sizes[record_]);
    // Guess from the record's last key (in the directory: no cache miss) and the gap.
    last_ = dir_->last_keys[record_];
    const double behind = last_ >= lo_ ? static_cast<double>(last_ - lo_) / gap_ : 0;
    guess_ =
        behind >= static_cast<double>(n_ - 1) ? 0 : n_ - 1 - static_cast<std::ptrdiff_t>(behind);
    // Prefetch the lines the search and scan will read: the expected range's keys (with
    // slack for the guess's error), so that the probes of all columns stream in together.
    const double expected = (static_cast<double>(hi_ - lo_) + 1) / gap_;
    const std::ptrdiff_t from = std::max<std::ptrdiff_t>(guess_ - 16, 0);
    const std::ptrdiff_t to = std::min<std::ptrdiff_t>(
        n_, guess_ + 16 + static_cast<std::ptrdiff_t>(std::min(expected, 512.0)));
    for (std::ptrdiff_t i = from; i < to; i += 8) __builtin_prefetch(data_ + 8 * i);
  }

  std::uint64_t key_at(std::ptrdiff_t i) const { return load_le64(data_ + 8 * i); }

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
  std::ptrdiff_t n_ = 0, guess_ = 0;
  std::uint64_t last_ = 0;  // the record's last key
};

// Reads a whole run in order, a record at a time (for merges).
class RunReader {
 public:
  static lmdb::Result<RunReader> open(const lmdb::Txn& txn, lmdb::Dbi dbi);
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
  lmdb::Cursor cursor_;
  std::vector<Entry> chunk_;
  std::size_t at_ = 0;
};

}  // namespace neardup
