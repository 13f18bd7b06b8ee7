// ScatterAdd nodes the atomic scatter cannot take, written as masked sums.
//
// Takes: a verified Graph and whether the compile is deterministic. Gives: the same
// graph, except that each ScatterAdd the atomic scatter (canon/flatten: an elementwise
// kernel over the values whose store adds at the indexed output row) cannot run is
// written as the masked sum
//     out[s, rest] = base[s, rest] + sum over c.. of (indices[c..] == s ? values[c.., rest] : 0)
// (s: the indexed axes merged) -- a [S, c.., rest] mask reduced over c.., an ordinary
// reduction that fuses with its producers and consumers, S times the values' work. The
// atomic scatter is not used:
//   - where another op reads the result (also Assign's in-place write): an atomic
//     store is a finished kernel output only, never a value inside a kernel;
//   - where the base (the tensor the sums are added to) is not a graph input the runtime
//     can copy into the output before the launch, or is written in place by the graph;
//   - for int8, uint8, float16 and bfloat16 values: the device library adds atomically
//     in 32- and 64-bit words only (a float16 atomic would also round every add);
//   - for float values in deterministic mode: float atomic adds land in a different
//     order on every run.
// A masked sum of more than kMaxMaskedScatterWork mask elements is refused (exit 2)
// with that reason.
#pragma once

#include <string>

#include "ir/graph.h"

namespace polyred {

// 2^31 mask elements: a few milliseconds on a GPU.
constexpr int64_t kMaxMaskedScatterWork = int64_t{1} << 31;

// Why ScatterAdd node `n` of `g` cannot be an atomic scatter, or "" when it can.
std::string whyNotAtomicScatter(const Graph& g, const Node& n, bool deterministic);

Graph scattersAsMaskedSums(const Graph& g, bool deterministic);

}  // namespace polyred
