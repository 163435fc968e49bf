// PLACEHOLDER: replaced by the LMDB index.
#include "store/index.h"

namespace neardup {
std::string_view status_name(Verdict::Status status) {
  switch (status) {
    case Verdict::Status::kUnique: return "unique";
    case Verdict::Status::kDuplicate: return "duplicate";
    case Verdict::Status::kSkipped: return "skipped";
    case Verdict::Status::kDeadLetter: return "dead_letter";
  }
  return "unknown";
}
std::expected<std::unique_ptr<Index>, std::string> Index::open(const StoreConfig&) {
  return std::unexpected("index not built yet");
}
}  // namespace neardup
