// Runs fn(0) ... fn(n - 1) on up to `concurrency` threads and returns when all have run: the
// operator's way of keeping several API requests in flight (a gang's pod creates, an admission
// cycle's status writes), which one after the other leave the API server's cores idle between
// round trips. fn must be safe to call from several threads at once; concurrency <= 1 or n <= 1
// runs everything on the calling thread, in order.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace phalanx::operator_server {

template <typename Fn>
void ParallelFor(size_t n, int concurrency, Fn&& fn) {
  const size_t threads = std::min<size_t>(n, concurrency < 1 ? 1 : concurrency);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace phalanx::operator_server
