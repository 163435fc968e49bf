#include "store/verdict.h"

#include <xxhash.h>

namespace neardup {

std::string_view status_name(Verdict::Status status) {
  switch (status) {
    case Verdict::Status::kUnique:
      return "unique";
    case Verdict::Status::kDuplicate:
      return "duplicate";
    case Verdict::Status::kSkipped:
      return "skipped";
    case Verdict::Status::kDeadLetter:
      return "dead_letter";
  }
  return "unknown";
}

std::string_view method_name(std::uint8_t method) {
  switch (method) {
    case Verdict::kSimHash:
      return "simhash";
    case Verdict::kMinHash:
      return "minhash";
    case Verdict::kBoth:
      return "both";
    default:
      return "";
  }
}

std::uint64_t record_digest(std::string_view bytes) {
  const std::uint64_t digest = XXH3_64bits(bytes.data(), bytes.size());
  return digest == 0 ? 1 : digest;
}

}  // namespace neardup
