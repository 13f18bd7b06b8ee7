// Integer helpers shared by the policies (binding, row cache, masked-sum limits).
#pragma once

#include <cstdint>
#include <vector>

namespace polyred {

// ceil(a / b) for a >= 0, b > 0.
constexpr int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The product of non-negative `factors`, or cap + 1 as soon as it would pass `cap`
// (never overflowing): the size of a mask, checked against a masked sum's limit.
inline int64_t productUpTo(const std::vector<int64_t>& factors, int64_t cap) {
  int64_t product = 1;
  for (int64_t f : factors) product = f != 0 && product > cap / f ? cap + 1 : product * f;
  return product;
}

}  // namespace polyred
