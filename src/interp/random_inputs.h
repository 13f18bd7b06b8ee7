// Random inputs for a graph, as the benchmark method prescribes (bench/METHOD.md):
// never zeros, bool mostly true, integers in [-100, 100).
//
// Takes a graph and a seed; gives one HostTensor per graph input, in g.inputs order.
// The same seed gives the same bytes on every machine (a fixed generator, no
// std::distribution). Each input draws from its own stream, keyed by its position.
#pragma once

#include <cstdint>
#include <vector>

#include "interp/host_tensor.h"
#include "ir/graph.h"

namespace polyred {

// Float ranges are before rounding to the dtype (float16 may round 1 - 2^-23 up to 1).
enum class ValueRange {
  // floats: uniform in [-1, 1), exactly 0 excluded; integers: [-100, 100), unsigned types [1, 100)
  Symmetric,
  // floats: uniform in [0.5, 2); integers: [1, 100). For graphs with log, sqrt, division.
  Positive,
};

// Bool inputs are true with probability 0.9 in either range.
std::vector<HostTensor> makeRandomInputs(const Graph& g, uint64_t seed, ValueRange r = ValueRange::Symmetric);

// One random tensor of the given dtype and shape, by the same rules.
HostTensor makeRandomTensor(DType t, const Shape& s, uint64_t seed, ValueRange r = ValueRange::Symmetric);

}  // namespace polyred
