// ScatterAdd nodes the atomic scatter cannot store as a finished output, rewritten.
//
// Takes: a verified Graph and whether the compile is deterministic. Gives: the same
// graph in which every ScatterAdd is one of
//   - an atomic scatter into a graph output (canon/flatten: an elementwise kernel over
//     the values whose store adds at the indexed output row, into an output the runtime
//     zeroes or sets to a copy of its base input before the launch): no node reads the
//     result, its base (if any) is a graph input nobody writes in place, and its dtype
//     has an atomic add in the device library -- or the graph writes the result in
//     place of its base input (Assign) and nothing else reads either: then the adds
//     land in the base's own buffer, with nothing set before the launch;
//   - an atomic scatter into a temporary (the partition materializes a ScatterAdd that
//     other nodes read; the runtime zeroes the temporary before the launch): no base,
//     a dtype with an atomic add, read by other nodes. A scatter of int8, uint8,
//     float16 or bfloat16 values adds their widening (int32, float32: ReduceSum's
//     accumulator, so the sums round or wrap once, at the end) and is cast back; a base
//     becomes an Add after the scatter; a result another node reads is read from there;
//   - the masked sum
//         out[s, rest] = base[s, rest] + sum over c.. of (indices[c..] == s ? values[c.., rest] : 0)
//     (s: the indexed axes merged) -- a [S, c.., rest] mask reduced over c.., an
//     ordinary reduction, S times the values' work: for float values in deterministic
//     mode (float atomic adds land in a different order on every run). A masked sum of
//     more than kMaxMaskedScatterWork mask elements is refused (exit 2) with the reason.
#pragma once

#include <string>

#include "ir/graph.h"

namespace polyred {

// 2^31 mask elements: a few milliseconds on a GPU.
constexpr int64_t kMaxMaskedScatterWork = int64_t{1} << 31;

// Why ScatterAdd node `n` of `g` cannot add atomically into a graph output as it
// stands, or "" when it can.
std::string whyNotAtomicScatter(const Graph& g, const Node& n, bool deterministic);

// The ScatterAdd node that produces `t` when its atomic store can be a finished graph
// output (no node reads `t`), else nullptr. The partition and the flattening agree
// through it on which scatters are stores and which are materialized.
const Node* outputScatter(const Graph& g, TensorId t);

Graph lowerUnstorableScatters(const Graph& g, bool deterministic);

}  // namespace polyred
