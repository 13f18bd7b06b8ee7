// MindSpore ops that polyred computes from coordinates: PadAkg, UnPadAkg, OneHot and
// ElemAny, expanded into polyred's Window and Iota (ir/ops.h) and ordinary elementwise
// ops and reductions, so they fuse like any producer and show in --dump=graph.
//
// Takes the op name, its operands and attributes; emits the intermediate nodes through
// an ExpansionSink (the composite reader) and gives back the last node with the shape
// and dtype it computes, which the reader checks against the declared output.
// Semantics (MindSpore/AKG; docs/format.md):
//   PadAkg(x; head, tail, pad_val)  out shape x + head + tail; out[idx] = x[idx - head]
//       inside, pad_val outside:    Select(inside(Iota...), Window(x, begin = -head), pad_val)
//   UnPadAkg(x; tail)               out shape x - tail; out[idx] = x[idx]:  Window(x, begin 0)
//   OneHot(indices, on, off; depth, axis)  out = on where indices == the coordinate along
//       `axis` (inserted, extent depth; -1 = last), else off (negative or >= depth: off)
//   ElemAny(x; dst_type)            [1]: 1 if some element is > 0, else 0 (AKG's kernel
//       only stores the 1 and relies on a zeroed output; polyred always stores)
//   Pad(x; paddings)                PadAkg with head/tail = paddings[d] = [before, after], 0
//   Tile(x; multiples)              out shape x * multiples (x's shape padded with leading
//       1s to their count); out[idx] = x[idx mod shape]:  Window(x, begin 0)
//   Slice(x; begin, size)           out[idx] = x[idx + begin] (size -1: to the end)
//   StridedSlice(x; begin, end, strides, begin_mask, end_mask, shrink_axis_mask)
//       positive strides (TensorFlow's rules: negative begin/end count from the end and
//       are clamped; a mask bit takes the whole axis; a shrink bit keeps one element and
//       drops the axis): Window, and for strides > 1 Reshape + Window + Reshape;
//       ellipsis and new-axis masks and negative strides are refused
//   Concat(x0, x1, ...; axis)       out[.., i, ..] = xk[.., i - offset k, ..] where
//       offset k <= i < offset k+1:  Select(Iota < offset, Window(xk), ...)
//   Split(x; axis, output_num)      output_num equal parts along axis (default 0): one
//       Window each (the only index op with several outputs: expandSplit)
//   LayoutTransform(x; src_format, dst_format)  NCHW <-> NHWC as a Transpose
//   StridedSliceOnnx(x, begin, end[, axes[, steps]])  constant lists, read by the reader
//       as the StridedSlice they describe (composite_index_attrs: stridedSliceOnnxAttrs)
//   TransData(x; src_format, dst_format)  plain <-> FRACTAL_NZ (cubes of 16, zero-padded):
//       Pad + Reshape + Transpose, and back Transpose + Reshape + Window
//   GatherNd(params, indices[.., k])  out[i.., rest] = params[indices[i.., 0..k-1], rest],
//       0 where a component is outside its axis: a Gather of params' first k axes merged
//   Pool2D(x; global, pool_type, data_layout, kernel_size, strides, pad, round_mode)
//       max or average over each window of the padded H and W axes (AKG's topi pool:
//       max pads with the lowest finite value, average divides by the window's size, pad
//       included); one strided Window per window element, combined with Maximum / Add;
//       global: a reduction over H and W
//   StandardNormal(; seed, seed2, shape)  standard normal values of the declared float
//       type and shape, a pure function of the seeds and the element's row-major
//       position p: PhiloxNormal(p, philoxKey(seed, seed2)) (ir/philox.h), p a sum of
//       Iota * stride. Every launch gives the same numbers (AKG's kernel does too for a
//       nonzero seed; for seed 0 it seeds from the clock, polyred does not)
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/composite_expansions.h"

namespace polyred {

struct IndexOpAttrs {
  std::vector<int64_t> head, tail;    // PadAkg, UnPadAkg; Pad's "paddings" read into them
  double padValue = 0;                // PadAkg
  int64_t depth = -1;                 // OneHot
  std::optional<int64_t> axis;        // OneHot (default -1), Concat (default 0)
  std::optional<DType> dstType;       // ElemAny
  std::vector<int64_t> multiples;     // Tile
  std::vector<int64_t> begin, size;   // Slice, StridedSlice
  std::vector<int64_t> end, strides;  // StridedSlice
  int64_t beginMask = 0, endMask = 0, ellipsisMask = 0, newAxisMask = 0, shrinkAxisMask = 0;
  int64_t outputNum = 0;                   // Split
  std::string srcFormat, dstFormat;        // LayoutTransform
  struct Pool {                            // Pool2D
    bool global = false;
    std::string type, layout;              // "max"/"avg"; "NHWC", "NCHW" or 5-D "NC1HWC0"
    std::vector<int64_t> kernel, strides;  // [h, w]
    std::vector<int64_t> pad;              // [top, left, bottom, right] (TVM's order)
  } pool;
  int64_t seed = 0, seed2 = 0;      // StandardNormal
  std::vector<Shape> givenShapes;   // StandardNormal: its "shape" attribute and shape inputs
  Shape declaredShape;  // the op's declared output: Pool2D's rounding is read from it
  DType declaredType = DType::Float32;  // StandardNormal computes in it
};

struct IndexOpResult {
  Node last;  // not yet added
  Shape shape;
  DType dtype = DType::Float32;
};

std::span<const std::string_view> indexOpNames();
bool isIndexOp(std::string_view name);

// Throws Error naming `op` for wrong operands or attributes.
IndexOpResult expandIndexOp(std::string_view name, const std::vector<TensorId>& ins, const IndexOpAttrs& attrs,
                            ExpansionSink& sink, const std::string& op);

// Split's parts, in output order.
std::vector<IndexOpResult> expandSplit(const std::vector<TensorId>& ins, const IndexOpAttrs& attrs, ExpansionSink& sink,
                                       const std::string& op);

}  // namespace polyred
