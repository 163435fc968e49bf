// RunProbe: one probe of a sorted run (store/run.h) for the entries in a key range, in two steps
// so that the cache misses of many probes overlap. Records of every form are searched: by their
// fences and an interpolated guess (bit-packed and older forms, whose keys have a fixed width),
// or by counting zeros from a fence (Elias–Fano: store/elias_fano.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "store/elias_fano.h"
#include "store/page_advice.h"
#include "store/run.h"

namespace neardup {

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
  // After prefetch() of an Elias–Fano record: adds the pages of the lines it asked for (the
  // high part from the search's start to the range, the range's low parts) to `advice`, so that
  // the kernel reads them before the probe touches them. Nothing for other forms (table runs,
  // read ahead at open) or when the key is past the run.
  void advise(PageAdvice& advice) const {
    if (n_ == 0 || !form_->elias_fano || low_lines_.first == nullptr) return;
    advice.add(low_lines_.first, low_lines_.second);
    advice.add(high_lines_.first, high_lines_.second);
  }
  // Ahead of a probe of [lo, ...]: prefetches the directory lines its start() will most likely
  // read (those of the record lo's place in the key space points to), without reading any, so
  // that a page's probes can be announced a page early without waiting for a miss.
  static void prefetch_directory(const RunDirectory& directory, std::uint64_t lo) {
    const std::size_t n = directory.last_keys.size();
    if (n == 0) return;
    const std::size_t r = guessed_record(stored_key(directory.format, lo), n);
    __builtin_prefetch(directory.last_keys.data() + r);
    __builtin_prefetch(directory.records.data() + r);
    __builtin_prefetch(directory.sizes.data() + r);
    __builtin_prefetch(directory.forms.data() + r);
    if (!directory.fences.empty()) __builtin_prefetch(directory.fences.data() + kFences * r);
  }

  // finish() for a range of keys compared with `query` within k bits (a table's prefix bucket,
  // query cut to the column's stored bits as its keys are): calls fn(key, doc) for the entries in
  // range that may lie within k, every one that does among them, in order. An Elias–Fano record
  // of low parts of kMinNearLowBits or more reads only the low parts of the others
  // (Reader::scan_near); fn compares each key it is given. Returns the entries in range.
  template <typename Fn>
  std::uint64_t finish_near(std::uint64_t query, int k, Fn&& fn) {
    std::uint64_t scanned = 0;
    auto counted = [&](std::uint64_t key, auto doc) {
      ++scanned;
      return fn(key, doc);
    };
    each_record([&] {
      if (form_->elias_fano && form_->key_bits >= kMinNearLowBits) {
        return scan_near(fn, query, k, scanned);
      }
      return form_->elias_fano ? scan_elias_fano(counted) : scan(counted);
    });
    return scanned;
  }
  // Below this many low bits a key's low part lets too many entries through to pay for skipping
  // the high part: P(within 3 of 12 random bits) = 299 / 4,096.
  static constexpr unsigned kMinNearLowBits = 12;

  // Calls fn(key, doc) for each entry in range, in order, where doc() returns the entry's doc:
  // it is read only when called (a hit), so a scan touches the keys alone. A callback that
  // returns bool ends the scan by returning false.
  template <typename Fn>
  void finish(Fn&& fn) {
    each_record([&] { return form_->elias_fano ? scan_elias_fano(fn) : scan(fn); });
  }

 private:
  // Calls scan_record() for the loaded record and each next one while it returns true (the
  // range goes on past the record).
  template <typename Scan>
  void each_record(Scan&& scan_record) {
    while (n_ > 0 && scan_record()) {
      ++record_;
      position();
    }
  }

  // Calls fn for entry i (key k) of the record; false when fn ends the scan.
  template <typename Fn>
  bool visit(Fn& fn, std::uint64_t k, std::ptrdiff_t i) {
    auto doc = [this, i] {
      return form_->doc_at(data_, static_cast<std::size_t>(n_), static_cast<std::size_t>(i));
    };
    if constexpr (std::is_same_v<decltype(fn(k, doc)), bool>) {
      return fn(k, doc);
    } else {
      fn(k, doc);
      return true;
    }
  }

  // scan_elias_fano() for finish_near(): the entries in range are those from the search's up to
  // the first whose high part is past hi_'s, and fn is called for those whose low bits are
  // within k of the query's (scan_near). Adds the entries in range to `scanned`.
  template <typename Fn>
  bool scan_near(Fn& fn, std::uint64_t query, int k, std::uint64_t& scanned) {
    if (last_ < lo_) return true;
    const elias_fano::Reader keys = form_->keys(data_);
    const elias_fano::Position p = search(keys);
    const auto n = static_cast<std::uint64_t>(n_);
    if (p.index >= n) return true;
    const RecordForm form = *form_;
    const std::uint64_t lo = lo_, hi = hi_, hi_stored = hi >> form.shift;
    std::uint64_t end = p.index;  // the first entry past the range
    if (hi_stored >= form.prefix) {
      const std::uint64_t end_high = (hi_stored - form.prefix) >> form.key_bits;
      if (p.high() <= end_high) end = std::min(keys.seek_high(end_high + 1, p).index, n);
    }
    scanned += end - p.index;
    bool more = end == n;  // the range goes on past this record
    keys.scan_near(p, end, form.prefix, query >> form.shift, k,
                   [&](std::uint64_t i, std::uint64_t value) {
                     const std::uint64_t key = form.key_of(value);
                     if (key < lo) return true;
                     if (key > hi || !visit(fn, key, static_cast<std::ptrdiff_t>(i))) {
                       return more = false;
                     }
                     return true;
                   });
    return more;
  }

  // The record's entries in range; false when the range (or fn) ended in it.
  template <typename Fn>
  bool scan(Fn& fn) {
    for (std::ptrdiff_t i = first(); i < n_; ++i) {
      const std::uint64_t k = key_at(i);
      if (k > hi_ || !visit(fn, k, i)) return false;
    }
    return true;
  }
  // An Elias–Fano record's first entry whose high part is lo_'s or more, searched from start_.
  // Its index is past the entries in a damaged record, whose bits ran out (checksums catch it
  // where records are read whole; a probe reads only what it needs and stops).
  elias_fano::Position search(const elias_fano::Reader& keys) const {
    return target_high_ == 0 ? elias_fano::Position{}
           : back_           ? keys.seek_high_back(target_high_, start_)
                             : keys.seek_high(target_high_, start_);
  }

  template <typename Fn>
  bool scan_elias_fano(Fn& fn) {
    if (last_ < lo_) return true;
    const elias_fano::Reader keys = form_->keys(data_);
    const elias_fano::Position p = search(keys);
    // Copies, so that the loop keeps them in registers across fn.
    const RecordForm form = *form_;
    const std::uint64_t lo = lo_, hi = hi_;
    bool more = true;  // the range goes on past this record
    keys.scan(p, static_cast<std::uint64_t>(n_), [&](std::uint64_t i, std::uint64_t value) {
      const std::uint64_t k = form.key_of(value);
      if (k > hi) return more = false;
      return k < lo || (more = visit(fn, k, static_cast<std::ptrdiff_t>(i)));
    });
    return more;
  }

  // An Elias–Fano record: the high part of lo_'s value, and the entry nearer it in zeros of the
  // two it lies between, from which the search counts: the last fence entry below it (entry 0
  // when none), or the next fence entry (the record's last entry after the last fence), counted
  // back from (back_). Prefetches the bits the search and the scan will read.
  void position_elias_fano() {
    start_ = elias_fano::Position{};
    back_ = false;
    target_high_ = 0;
    const std::uint64_t lo = lo_ >> form_->shift;
    if (last_ < lo_ || lo <= form_->prefix) return;
    target_high_ = (lo - form_->prefix) >> form_->key_bits;
    const auto n = static_cast<std::uint64_t>(n_);
    elias_fano::Position to{
        .index = n - 1,
        .bit = (((last_ >> form_->shift) - form_->prefix) >> form_->key_bits) + n - 1};
    if (!dir_->fences.empty()) {
      // The last fence below the target (their high parts ascend): a binary search of the
      // fences after entry 0's.
      static_assert(kFences == 16);
      const std::uint32_t* f = dir_->fences.data() + kFences * record_;
      std::size_t below = 0;
      for (std::size_t step = kFences / 2; step > 0; step /= 2) {
        const std::size_t j = below + step;
        if (f[j] - fence_position(j, n) < target_high_) below = j;
      }
      if (below > 0)
        start_ = elias_fano::Position{.index = fence_position(below, n), .bit = f[below]};
      if (below + 1 < kFences) {
        to = elias_fano::Position{.index = fence_position(below + 1, n), .bit = f[below + 1]};
      }
    }
    const std::uint64_t ahead = target_high_ - start_.high();
    if (to.high() >= target_high_ && to.high() - target_high_ < ahead) {
      back_ = true;
      start_ = to;
    }
    // The entry the search should reach, at the record's mean entries per high value, and the
    // lines the search and the scan of the expected range will read (with slack for the guess's
    // error, as for the other forms): the high part between the start and the range, and the
    // range's low parts.
    const elias_fano::Reader keys = form_->keys(data_);
    const double ones = static_cast<double>(n),
                 zeros = static_cast<double>(form_->high_bits) - ones;
    const double per_zero = ones / (zeros + 1), bits_per_entry = 1 + zeros / ones;
    const std::uint64_t guess =
        back_
            ? start_.index - std::min<std::uint64_t>(
                                 start_.index,
                                 static_cast<std::uint64_t>(
                                     static_cast<double>(start_.high() - target_high_) * per_zero))
            : std::min<std::uint64_t>(
                  n - 1,
                  start_.index + static_cast<std::uint64_t>(static_cast<double>(ahead) * per_zero));
    const std::uint64_t first = guess > kSlack ? guess - kSlack : 0;
    const std::uint64_t last = std::min<std::uint64_t>(n - 1, guess + kSlack + expected_entries());
    const std::uint64_t step = std::max(1u, 512u / std::max<unsigned>(form_->key_bits, 1));
    for (std::uint64_t i = first; i <= last; i += step) __builtin_prefetch(keys.low_address(i));
    low_lines_ = {keys.low_address(first), keys.low_address(last) + 8};
    // An entry's 1 lies about bits_per_entry bits a place from the start's.
    std::uint64_t from_bit = start_.bit, to_bit;
    if (back_) {
      const auto behind =
          static_cast<std::uint64_t>(static_cast<double>(start_.index - first) * bits_per_entry);
      from_bit = start_.bit - std::min(start_.bit, behind + 64);
      to_bit = std::max(start_.bit + 64,
                        from_bit + static_cast<std::uint64_t>(static_cast<double>(last - first) *
                                                              bits_per_entry));
    } else {
      to_bit =
          start_.bit +
          static_cast<std::uint64_t>(static_cast<double>(last - start_.index) * bits_per_entry) +
          64;
    }
    for (std::uint64_t bit = from_bit; bit < to_bit && bit < form_->high_bits; bit += 512)
      __builtin_prefetch(keys.high_address(elias_fano::Position{.bit = bit}));
    high_lines_ = {keys.high_address(elias_fano::Position{.bit = from_bit}),
                   keys.high_address(elias_fano::Position{
                       .bit = std::min<std::uint64_t>(to_bit, form_->high_bits)}) +
                       8};
  }

  // The entries expected in [lo_, hi_] (at most 512 counted: a longer range streams in as it is
  // scanned), and the slack around a guess that prefetching covers.
  std::uint64_t expected_entries() const {
    return static_cast<std::uint64_t>(std::min((static_cast<double>(hi_ - lo_) + 1) / gap_, 512.0));
  }
  static constexpr std::uint64_t kSlack = 16;

  // Loads record_ (none past the end) and prefetches where the search will look.
  void position() {
    n_ = 0;
    if (record_ >= dir_->records.size()) return;
    data_ = dir_->records[record_];
    form_ = &dir_->forms[record_];
    n_ = static_cast<std::ptrdiff_t>(dir_->sizes[record_]);
    last_ = dir_->last_keys[record_];
    if (form_->elias_fano) {
      position_elias_fano();
      return;
    }
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
    const auto slack = static_cast<std::ptrdiff_t>(kSlack);
    const std::ptrdiff_t from = std::max<std::ptrdiff_t>(guess_ - slack, 0);
    const std::ptrdiff_t to = std::min<std::ptrdiff_t>(
        n_, guess_ + slack + static_cast<std::ptrdiff_t>(expected_entries()));
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

  // The record a stored key falls in by its place in the key space, of n records (keys are
  // uniform and records hold equal counts).
  static std::size_t guessed_record(std::uint64_t stored, std::size_t n) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(stored) * n) >> 64);
  }

  // The first record whose last key is >= lo_: guessed from lo_'s place in the key space (keys
  // are uniform and records hold equal counts), then walked to; a binary search of the rest of
  // the directory when the guess is far off.
  std::size_t first_record() const {
    const auto& keys = dir_->last_keys;
    const std::size_t n = keys.size();
    if (n == 0) return 0;
    std::size_t r = guessed_record(lo_, n);
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
  std::uint64_t last_ = 0;     // the record's last key
  // Elias–Fano: where the search starts (an entry before the target, or one at or after it when
  // back_), and for what high part.
  elias_fano::Position start_;
  bool back_ = false;
  std::uint64_t target_high_ = 0;
  // Elias–Fano: the bytes position_elias_fano() prefetched, low parts and high part (advise()).
  std::pair<const char*, const char*> low_lines_{}, high_lines_{};
};

}  // namespace neardup
