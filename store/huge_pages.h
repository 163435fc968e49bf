// Memory for the tables that probes reach at random (deltas, filters): on 2 MiB pages where the
// kernel allows (transparent huge pages on request) once a table is that large, because a probe
// lands anywhere in tens or hundreds of MiB and 4 KiB pages would cost it a TLB miss each.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace neardup {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

struct FreeHuge {
  void operator()(void* p) const { std::free(p); }
};
template <typename T>
using HugeArray = std::unique_ptr<T[], FreeHuge>;

// n values of T, uninitialized, 64-byte aligned; from 2 MiB on, a whole number of 2 MiB pages
// advised huge (advice only: a kernel that refuses leaves 4 KiB pages). Throws std::bad_alloc.
template <typename T>
HugeArray<T> allocate_huge(std::size_t n) {
  const std::size_t bytes = n * sizeof(T);
  if (bytes < kHugePage) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p == nullptr) throw std::bad_alloc();
    return HugeArray<T>(static_cast<T*>(p));
  }
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
  ::madvise(p, rounded, MADV_HUGEPAGE);
  return HugeArray<T>(static_cast<T*>(p));
}

}  // namespace neardup
