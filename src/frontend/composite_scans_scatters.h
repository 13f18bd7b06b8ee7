// MindSpore's scans and scatters -- CumSum, CumProd, UnsortedSegmentSum and
// TensorScatterAdd -- each one node of polyred's own: a Scan (ir/ops.h; the scan kernel,
// canon/flatten) or a ScatterAdd (an atomic scatter kernel, or a masked sum where that
// cannot run, canon/scatter_fallback).
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

std::span<const std::string_view> scanScatterOpNames();
bool isScanScatterOp(std::string_view name);

// The op's one output (not yet added), its intermediate nodes emitted through `sink`.
// Throws Error naming `file` and `op` for wrong operands or attributes.
TupleOpOutput readScanScatter(std::string_view name, const std::vector<TensorId>& ins, const CompositeAttrs& attrs,
                              ExpansionSink& sink, const std::string& file, const std::string& op);

}  // namespace polyred
