// The records between consume and delivery, and their bytes: what neardupd's backpressure
// bounds (docs/delivery.md). The consumer pauses every assigned partition once either bound is
// reached and resumes once both are back at three quarters, so that memory stays bounded at any
// input rate while the consumer keeps polling (and stays in its group).
//
// Thread-safe: the consumer thread adds, delivery reports (or transaction commits) remove.
#pragma once

#include <atomic>
#include <cstdint>

namespace neardup::daemon {

// Values of all records between consume and delivery stay below this (plus one record).
inline constexpr std::uint64_t kMaxInFlightBytes = 256ull << 20;

class InFlight {
 public:
  explicit InFlight(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // A record of `bytes` was consumed / its output was delivered.
  void add(std::uint64_t bytes);
  void remove(std::uint64_t bytes);

  std::uint64_t records() const { return records_.load(); }
  std::uint64_t bytes() const { return bytes_.load(); }

  // At or over either bound: max_records records or the byte bound. Time to pause.
  bool over(std::uint64_t max_records) const;
  // At or below three quarters of both bounds. Time to resume.
  bool under(std::uint64_t max_records) const;

 private:
  const std::uint64_t max_bytes_;
  std::atomic<std::uint64_t> records_{0}, bytes_{0};
};

}  // namespace neardup::daemon
