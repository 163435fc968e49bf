// Sorted runs: the on-disk part of one index column (a permuted table of one scheme, or ids).
//
// A column is a multiset of 16-byte entries (key, doc): for a table, key is the permuted
// fingerprint; for ids, the xxh3-64 of the page id. Recent entries live in a Delta (memory,
// rebuilt from the docs table at open); older ones in a few immutable sorted runs, each its own
// LMDB database written once in key order with MDB_APPEND and dropped whole when merged into a
// larger run (an LSM tree over LMDB). A run packs 4095 entries per record (a 64 KiB overflow
// value), so its B-tree is a few hot pages; a probe is one descent and a search in one or two
// cache-cold pages of entries, and an insert costs 16 bytes of sequential writing per merge
// instead of a random 4 KiB page. Layout: FORMAT.md.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <cstring>
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

// Appends sorted entries to an empty run database, one record per kEntriesPerChunk.
class RunWriter {
 public:
  RunWriter(const lmdb::Txn& txn, lmdb::Dbi dbi) : txn_(txn), dbi_(dbi) {}
  // Entries must come in ascending (key, doc) order. Errors: MDB_MAP_FULL, MDB_TXN_FULL, ...
  lmdb::Result<> add(const Entry& entry);
  // Writes the last partial record.
  lmdb::Result<> finish();

 private:
  const lmdb::Txn& txn_;
  lmdb::Dbi dbi_;
  std::vector<Entry> chunk_;
};

// A probe of one run for the entries with lo <= key <= hi, in two steps so that the cache
// misses of many probes overlap: start() descends the B-tree (MDB_SET_RANGE; its pages are few
// and hot) and prefetches the part of the record where the search will begin; finish() searches
// and scans, following MDB_NEXT while the range continues.
class RunProbe {
 public:
  // gap: the expected distance between neighbouring keys (2^64 / entries; keys are uniform,
  // being permuted fingerprints or hashes), which aims the search at the right cache line.
  RunProbe(lmdb::Cursor& cursor, std::uint64_t lo, std::uint64_t hi, double gap)
      : cursor_(&cursor), lo_(lo), hi_(hi), gap_(gap) {}

  lmdb::Result<> start() { return position(MDB_SET_RANGE); }

  // Calls fn(entry) for each entry in range, in order.
  template <typename Fn>
  lmdb::Result<> finish(Fn&& fn) {
    while (n_ > 0) {
      for (std::ptrdiff_t i = first(); i < n_; ++i) {
        std::uint64_t k = key_at(i);
        if (k > hi_) return {};
        fn(Entry{k, load_le64(data_ + 16 * i + 8)});
      }
      if (auto next = position(MDB_NEXT); !next) return next;
    }
    return {};
  }

 private:
  lmdb::Result<> position(MDB_cursor_op op) {
    char probe[16];
    store_be64(probe, lo_);
    store_be64(probe + 8, 0);
    MDB_val key{sizeof probe, probe}, value{};
    n_ = 0;
    auto found = cursor_->get(key, value, op);
    if (!found) return std::unexpected(found.error());
    if (!*found) return {};
    data_ = static_cast<const char*>(value.mv_data);
    n_ = static_cast<std::ptrdiff_t>(value.mv_size / 16);
    // Guess from the record's last key (its LMDB key: no cache miss) and the gap.
    last_ = load_be64(static_cast<const char*>(key.mv_data));
    const double behind = last_ >= lo_ ? static_cast<double>(last_ - lo_) / gap_ : 0;
    guess_ =
        behind >= static_cast<double>(n_ - 1) ? 0 : n_ - 1 - static_cast<std::ptrdiff_t>(behind);
    // Prefetch the lines the search and scan will read: the expected range entries (with
    // slack for the guess's error), so that the probes of all columns stream in together.
    const double expected = (static_cast<double>(hi_ - lo_) + 1) / gap_;
    const std::ptrdiff_t from = std::max<std::ptrdiff_t>(guess_ - 16, 0);
    const std::ptrdiff_t to = std::min<std::ptrdiff_t>(
        n_, guess_ + 16 + static_cast<std::ptrdiff_t>(std::min(expected, 512.0)));
    for (std::ptrdiff_t i = from; i < to; i += 4) __builtin_prefetch(data_ + 16 * i);
    return {};
  }

  std::uint64_t key_at(std::ptrdiff_t i) const { return load_le64(data_ + 16 * i); }

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

  lmdb::Cursor* cursor_;
  std::uint64_t lo_, hi_;
  double gap_;
  const char* data_ = nullptr;
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

 private:
  lmdb::Result<> load(MDB_cursor_op op);
  lmdb::Cursor cursor_;
  std::vector<Entry> chunk_;
  std::size_t at_ = 0;
};

}  // namespace neardup
