// MindSpore ops computed by tuple reductions (ir/tuple_reduction.h): Argmax, Argmin,
// ArgMaxWithValue and ArgMinWithValue.
//
// Takes the op name, its operand and attributes; emits the Iota of the reduced
// coordinate through an ExpansionSink (the composite reader) and gives back one Reduce
// node per output (not yet added), with the shape and dtype each computes, which the
// reader checks against the declared outputs. Semantics (docs/format.md):
//   Argmax(x; axis = -1, output_type = int32)   index of the largest element along axis
//   Argmin(x; axis = -1, output_type = int32)   index of the smallest
//   ArgMaxWithValue(x; axis = 0, keep_dims = false)  outputs (index int32, value x.dtype)
//   ArgMinWithValue(x; axis = 0, keep_dims = false)
//   TupleReduce(inputs...; reduction, axis, keep_dims)  a tuple reduction the document
//       declares under "tuple_reductions" (frontend/composite_declarations): one output
//       per result, in order, each of the result's type
// Ties give the smallest index; NaN is larger and smaller than every number, and the
// first NaN's index is taken (PyTorch's torch.argmax / torch.max(dim)).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/composite_expansions.h"
#include "ir/tuple_reduction.h"

namespace polyred {

struct TupleOpAttrs {
  std::optional<int64_t> axis;
  std::optional<DType> outputType;  // Argmax/Argmin: int32 (default) or int64
  bool keepDims = false;            // ArgMaxWithValue/ArgMinWithValue
};

struct TupleOpOutput {
  Node node;  // not yet added
  Shape shape;
  DType dtype = DType::Int32;
};

std::span<const std::string_view> tupleOpNames();  // the four above and TupleReduce
bool isTupleOp(std::string_view name);

// Throws Error naming `op` for a wrong operand count or attribute (an axis out of
// range, an output_type other than int32/int64, an axis too long for an int32 index).
std::vector<TupleOpOutput> expandTupleOp(std::string_view name, const std::vector<TensorId>& ins,
                                         const TupleOpAttrs& attrs, ExpansionSink& sink, const std::string& op);

// TupleReduce: the declared tuple `t` over `ins` (its element inputs: their count, dtypes
// and one shape are checked) and the normalized `axes`; one Reduce node per result.
std::vector<TupleOpOutput> expandDeclaredTuple(const std::shared_ptr<const TupleReduction>& t,
                                               const std::vector<TensorId>& ins, const std::vector<int64_t>& axes,
                                               bool keepDims, ExpansionSink& sink, const std::string& op);

}  // namespace polyred
