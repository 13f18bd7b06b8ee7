// The row-major position of every element of a tensor of `shape`, as int64 values made
// from coordinates: the sum of Iota_d * stride_d over the axes longer than 1, or a zero
// broadcast to the shape when it has one element. StandardNormal draws at these
// positions (ir/philox.h); GraphBuilder::standardNormal and the composite reader's
// expansion (frontend/composite_index_ops) make their nodes through different builders,
// so the nodes come from the callables: iota(axis), times(value, stride),
// plus(a, b) and zeros().
#pragma once

#include <cstdint>
#include <optional>

#include "ir/graph.h"

namespace polyred {

template <class V, class Iota, class Times, class Plus, class Zeros>
V rowMajorPosition(const Shape& shape, Iota iota, Times times, Plus plus, Zeros zeros) {
  std::optional<V> position;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0; stride *= shape[d]) {
    if (shape[d] == 1) continue;
    V term = iota(static_cast<int64_t>(d));
    if (stride != 1) term = times(term, stride);
    position = position ? plus(*position, term) : term;
  }
  return position ? *position : zeros();
}

}  // namespace polyred
