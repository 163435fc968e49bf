#include "common/prefetch.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace neardup {
namespace {

// A prefetch is a hint: asked for an address no page backs, or none at all, it neither faults nor
// reads anything (the filters ask for lines computed from keys, before any bounds are known).
TEST(Prefetch, AnyAddressIsOnlyAHint) {
  const long page = ::sysconf(_SC_PAGESIZE);
  void* mapped = ::mmap(nullptr, static_cast<std::size_t>(page), PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  prefetch_line(mapped);  // a page that may not be read
  prefetch_line(nullptr);
  ::munmap(mapped, static_cast<std::size_t>(page));
  prefetch_line(mapped);  // no longer mapped
  std::vector<std::uint64_t> lines(64, 7);
  for (const auto& line : lines) prefetch_line(&line);
  EXPECT_EQ(lines[63], 7u);  // and changes nothing
}

}  // namespace
}  // namespace neardup
