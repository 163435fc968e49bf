// A prefetch the compiler keeps wherever it is reached.
//
// __builtin_prefetch is not an effect to GCC's interprocedural analysis: a function whose only
// work is prefetching is taken for one without effects, and a call to it whose result is unused
// is dropped. An out-of-line loop that asked for the lines of a union filter a merge was about
// to write was dropped whole, and the writes waited on their misses one by one (store/column.h,
// kFilterAhead). An asm statement is an effect: use this where a prefetch is all a function or
// loop does.
#pragma once

namespace neardup {

inline void prefetch_line(const void* address) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 (%0)" : : "r"(address));
#elif defined(__aarch64__)
  asm volatile("prfm pldl1keep, [%0]" : : "r"(address));
#else
  __builtin_prefetch(address);
#endif
}

}  // namespace neardup
