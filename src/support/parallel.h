// parallelFor: body(0), ..., body(n - 1) on up to `threads` threads (the calling thread
// among them), each index once, in no particular order. After every index has run, the
// exception of the lowest index that threw, if any, is rethrown on the calling thread --
// what a serial loop stopping at its first failure would have thrown.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace polyred {

template <class Body>
void parallelFor(size_t n, unsigned threads, const Body& body) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k = next++; k < n; k = next++) {
      try {
        body(k);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  const size_t workers = std::min<size_t>(std::max(threads, 1u), n);
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace polyred
