// MindSpore's layer-level ops -- the activations, shape ops, statistics and value ops
// users write, which MindSpore's graph-kernel expander usually rewrites before AKG sees
// them but which composite files written by hand or by other tools still hold --
// expanded into polyred's primitives, so they fuse like any producer and show in
// --dump=graph.
//
// Takes the op name, its operands, its attributes and its declared outputs (some ops
// take a shape or a dtype from them, as MindSpore's value inference does); emits the
// intermediate nodes through an ExpansionSink (the composite reader) and gives back one
// node per output (not yet added) with the shape and dtype it computes, which the reader
// checks against the declared outputs. Semantics (MindSpore's definitions; docs/format.md):
//   ExpandDims(x; axis)         a Reshape inserting a size-1 axis (negative: from the end)
//   Squeeze(x; axis)            a Reshape dropping the listed size-1 axes (none listed: all)
//   Flatten(x)                  a Reshape to [x.shape[0], the rest]
//   BiasAdd(x, b; data_format)  x + b along the channel axis (1; NHWC: the last)
//   ZerosLike(x), OnesLike(x)   0 / 1 of x's dtype and shape
//   ReLU6(x)                    Minimum(Maximum(x, 0), 6)
//   HSigmoid(x), HSwish(x)      ReLU6(x + 3) / 6, x * ReLU6(x + 3) / 6
//   Mish(x)                     x * Tanh(Log(1 + Exp(x)))
//   LeakyReLU(x; alpha = 0.2)   Select(x > 0, x, alpha * x)
//   SquaredDifference(x, y)     (x - y) * (x - y)
//   ClipByValue(x, lo, hi)      Minimum(Maximum(x, lo), hi)   (also as "Clip")
//   SquareSumV1(x; axis, keep_dims)  ReduceSum(x * x)  (the square in x's dtype, as
//                               MindSpore's expander)
//   SquareSumAll(x, y)          two outputs: the sums of x * x and of y * y over every axis
//   LayerNorm(x, gamma, beta; begin_norm_axis, begin_params_axis, epsilon)  three
//       outputs: y = (x - mean) * Rsqrt(var + eps) * gamma + beta, mean and the biased
//       variance over the axes from begin_norm_axis (kept as size 1); 16-bit floats
//       computed in float32; each output rounded to its declared dtype
//   Shape(x)                    the 1-D int tensor of x's extents
//   ConstantOfShape(shape; value)  the output's declared shape filled with value (one
//       number, or one per element)
//   TupleGetItem(x; index)      index 0 of a one-tensor tuple: x itself
//   SelectGT(a, b, c, d)        Select(a > b, c, d) (SelectGE, SelectLT, SelectLE alike; AKG's)
//   EquivFormat(x)              x itself, as the declared output's shape (AKG's format tag change)
//   AddMinValue(x)              x + 2^-126 (float32), x + 2^-24 (float16), else x (AKG's)
//   CumSum, CumProd, UnsortedSegmentSum, TensorScatterAdd: frontend/composite_scans_scatters
// Float-only ones (HSigmoid, HSwish, Mish, LayerNorm) refuse integers, as the ops in
// ir/ops.h do.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/composite_expansions.h"
#include "frontend/composite_json.h"
#include "frontend/composite_tuple_ops.h"

namespace polyred {

struct DeclaredOutput {
  Shape shape;
  DType dtype = DType::Float32;
};

std::span<const std::string_view> layerOpNames();
bool isLayerOp(std::string_view name);

// Throws Error naming `file` and `op` for wrong operands or attributes.
std::vector<TupleOpOutput> expandLayerOp(std::string_view name, const std::vector<TensorId>& ins,
                                         const CompositeAttrs& attrs, const std::vector<DeclaredOutput>& declared,
                                         ExpansionSink& sink, const std::string& file, const std::string& op);

}  // namespace polyred
