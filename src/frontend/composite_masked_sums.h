// MindSpore's scans and scatters -- CumSum, CumProd, UnsortedSegmentSum and
// TensorScatterAdd. The scatters are one ScatterAdd node each (ir/ops.h: an atomic
// scatter kernel, or a masked sum where that cannot run, canon/scatter_fallback); the
// scans are expanded as masked reductions: every output element folds the inputs a
// mask selects (the prefix along the axis), so they are ordinary reductions that fuse
// with their producers.
//
// The cost is the mask's size: a scan of n <= 1024 elements does n * n work per row (one
// kernel), a longer one n * sqrt(n) (blocks of sqrt(n): the scan within each block plus
// the totals of the blocks before it; a few kernels). Expansions past kMaxMaskedWork
// operations are refused with that reason (a dedicated scan kernel is not built).
//
// Semantics (AKG's kernels, MindSpore's attributes; docs/format.md):
//   CumSum(x; axis, exclusive, reverse)   out[.., i, ..] = sum of x[.., j, ..] over
//       j <= i (exclusive: j < i; reverse: j >= i; both: j > i); axis as an attribute
//       (int or one-element list) or a constant input
//   CumProd(x; axis, exclusive, reverse)  the same with products (empty: 1)
//   UnsortedSegmentSum(data, ids; num_segments)  out[s, rest] = sum of data[i.., rest]
//       over the i.. with ids[i..] == s (ids of shape data[:r]; ids outside
//       [0, num_segments) are dropped); num_segments an attribute or a constant input
//   TensorScatterAdd(input, indices[.., k], updates)  input, plus updates[l.., rest]
//       added at input[indices[l.., 0..k-1], rest] for every l.. (1-D indices: k = 1;
//       tuples with a component outside its axis are dropped)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/composite_expansions.h"
#include "frontend/composite_json.h"
#include "frontend/composite_tuple_ops.h"

namespace polyred {

// 2^31 mask elements: a few milliseconds on a GPU.
constexpr int64_t kMaxMaskedWork = int64_t{1} << 31;

std::span<const std::string_view> maskedSumOpNames();
bool isMaskedSumOp(std::string_view name);

// The op's one output (not yet added), its intermediate nodes emitted through `sink`.
// Throws Error naming `file` and `op` for wrong operands, attributes or too much work.
TupleOpOutput expandMaskedSum(std::string_view name, const std::vector<TensorId>& ins, const CompositeAttrs& attrs,
                              ExpansionSink& sink, const std::string& file, const std::string& op);

}  // namespace polyred
