#include "daemon/in_flight.h"

namespace neardup::daemon {

void InFlight::add(std::uint64_t bytes) {
  records_ += 1;
  bytes_ += bytes;
}

void InFlight::remove(std::uint64_t bytes) {
  records_ -= 1;
  bytes_ -= bytes;
}

bool InFlight::over(std::uint64_t max_records) const {
  return records_ >= max_records || bytes_ >= max_bytes_;
}

bool InFlight::under(std::uint64_t max_records) const {
  return records_ <= max_records * 3 / 4 && bytes_ <= max_bytes_ * 3 / 4;
}

}  // namespace neardup::daemon
