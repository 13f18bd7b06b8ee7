// Integer helpers shared by the policies (binding, row cache).
#pragma once

#include <cstdint>

namespace polyred {

// ceil(a / b) for a >= 0, b > 0.
constexpr int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace polyred
