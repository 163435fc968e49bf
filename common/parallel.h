// parallel_for: run f(i) for i in [0, n) on up to `threads` threads (0: one per core).
// Used to run the pure pipeline stages over a batch of pages on all cores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace neardup {

inline unsigned resolve_threads(unsigned threads) {
  return threads ? threads : std::max(1u, std::thread::hardware_concurrency());
}

template <typename F>
void parallel_for(std::size_t n, unsigned threads, F&& f) {
  threads = static_cast<unsigned>(std::min<std::size_t>(resolve_threads(threads), n));
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) f(i);
  };
  std::vector<std::jthread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
}

}  // namespace neardup
