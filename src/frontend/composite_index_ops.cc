#include "frontend/composite_index_ops.h"

#include <algorithm>

#include "frontend/row_major_position.h"
#include "ir/philox.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

constexpr std::string_view kIndexOps[] = {
    "PadAkg", "Pad", "UnPadAkg", "OneHot", "ElemAny", "ElemAll", "Tile", "Slice", "StridedSlice", "Concat", "Split",
    "LayoutTransform", "GatherNd", "Pool2D", "TransData", "StandardNormal",
    "StridedSliceOnnx"};  // read as StridedSlice by the reader (its parameters are constant lists)

// The most window elements Pool2D expands (one strided Window each).
constexpr int64_t kMaxPoolWindow = 1024;

// The lowest finite value of t, which AKG's max pooling pads with.
double lowestFinite(DType t) {
  switch (t) {
    case DType::Int8: return -128;
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return 0;
    case DType::Int32: return -2147483648.0;
    case DType::Int64: return -9223372036854775808.0;
    case DType::Float16: return -65504;
    case DType::BFloat16: return -3.3895313892515355e38;
    case DType::Float32: return -3.4028234663852886e38;
    default: return -1.7976931348623157e308;
  }
}

class IndexExpansion : public ExpansionBuilder {
 public:
  using ExpansionBuilder::ExpansionBuilder;

  [[noreturn]] void fail(const std::string& why) const { throw Error("", op_, why); }
  TensorId window(TensorId x, const Shape& shape, std::vector<int64_t> begin) {
    Node n = node(OpKind::Window, {x});
    n.begin = std::move(begin);
    return add(std::move(n), shape, info(x).dtype);
  }

  void needInputs(const std::vector<TensorId>& ins, size_t n, const std::string& roles) const {
    if (ins.size() != n) fail("takes " + std::to_string(n) + " inputs (" + roles + "), got " + std::to_string(ins.size()));
  }
  void needPerAxis(const std::vector<int64_t>& v, const char* what, size_t rank) const {
    if (v.size() != rank) fail(std::string(what) + " has " + std::to_string(v.size()) + " entries for a rank-" +
                               std::to_string(rank) + " input");
    if (std::any_of(v.begin(), v.end(), [](int64_t e) { return e < 0; })) fail(std::string(what) + " has a negative entry");
    if (std::any_of(v.begin(), v.end(), [](int64_t e) { return e > (int64_t{1} << 40); }))
      fail(std::string(what) + " has an entry larger than any tensor extent");
  }

  IndexOpResult pad(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor to pad");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    needPerAxis(a.head, "head", x.shape.size());
    needPerAxis(a.tail, "tail", x.shape.size());
    Shape out = x.shape;
    std::vector<int64_t> begin(out.size());
    for (size_t d = 0; d < out.size(); ++d) {
      if (x.shape[d] == 0 && (a.head[d] || a.tail[d])) fail("cannot pad an empty axis");
      out[d] = x.shape[d] + a.head[d] + a.tail[d];
      begin[d] = -a.head[d];
    }
    // Coordinates in int32 where every padded extent allows (one compare instead of two).
    const DType coordinate =
        *std::max_element(out.begin(), out.end()) < (int64_t{1} << 31) ? DType::Int32 : DType::Int64;
    TensorId inside = -1;  // and of the per-axis range tests, over the padded axes
    for (size_t d = 0; d < out.size(); ++d) {
      if (!a.head[d] && !a.tail[d]) continue;
      TensorId c = iota(out, static_cast<int64_t>(d), coordinate);
      auto test = [&](OpKind k, int64_t bound) {
        TensorId t = apply(k, {c, constant(static_cast<double>(bound), coordinate)});
        inside = inside < 0 ? t : apply(OpKind::LogicalAnd, {inside, t});
      };
      if (a.head[d]) test(OpKind::GreaterEqual, a.head[d]);
      if (a.tail[d]) test(OpKind::Less, a.head[d] + x.shape[d]);
    }
    TensorId shifted = window(ins[0], out, begin);
    if (inside < 0) return {node(OpKind::Cast, {shifted}), out, x.dtype};  // nothing padded: a copy
    return {node(OpKind::Select, {inside, shifted, constant(a.padValue, x.dtype)}), out, x.dtype};
  }

  IndexOpResult unpad(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor to unpad");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    needPerAxis(a.tail, "tail", x.shape.size());
    Shape out = x.shape;
    for (size_t d = 0; d < out.size(); ++d) {
      if (a.tail[d] > x.shape[d]) fail("tail removes more than axis " + std::to_string(d) + " holds");
      out[d] -= a.tail[d];
    }
    Node w = node(OpKind::Window, {ins[0]});
    w.begin.assign(out.size(), 0);
    return {std::move(w), out, x.dtype};
  }

  IndexOpResult oneHot(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 3, "indices, on_value, off_value");
    const Tensor indices = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    if (indices.dtype != DType::Int32 && indices.dtype != DType::Int64)
      fail("indices must be int32 or int64, got " + std::string(dtypeName(indices.dtype)));
    const DType t = info(ins[1]).dtype;
    if (info(ins[2]).dtype != t) fail("on_value and off_value have different dtypes");
    for (TensorId v : {ins[1], ins[2]})
      if (numElements(info(v).shape) != 1) fail("on_value and off_value must be single values");
    if (a.depth < 0) fail("needs a non-negative \"depth\" attribute");
    const int64_t rank = static_cast<int64_t>(indices.shape.size());
    const int64_t given = a.axis.value_or(-1);
    if (given < -1 || given > rank) fail("axis " + std::to_string(given) + " is out of range for rank " + std::to_string(rank));
    const size_t axis = static_cast<size_t>(given == -1 ? rank : given);
    Shape out = indices.shape, unit = indices.shape;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), a.depth);
    unit.insert(unit.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    Node r = node(OpKind::Reshape, {ins[0]});
    TensorId column = add(std::move(r), unit, indices.dtype);
    TensorId hit = apply(OpKind::Equal, {column, iota(out, static_cast<int64_t>(axis), indices.dtype)});
    auto scalar = [&](TensorId v) { return add(node(OpKind::Reshape, {v}), {}, t); };
    return {node(OpKind::Select, {hit, scalar(ins[1]), scalar(ins[2])}), out, t};
  }

  // ElemAny: 1 if some element is > 0; ElemAll: 1 if every element is nonzero (NaN is
  // nonzero, as AKG's `x == 0` test leaves it). One value, shape [1], in dst_type
  // (ElemAny; default the input's) or the input's dtype (ElemAll, which reads no
  // attribute in AKG either).
  IndexOpResult elemAny(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    return elementTest(ins, a.dstType, OpKind::Greater, Reduction::logicalOr(DType::Bool));
  }
  IndexOpResult elemAll(const std::vector<TensorId>& ins, const IndexOpAttrs&) {
    return elementTest(ins, std::nullopt, OpKind::NotEqual, Reduction::logicalAnd(DType::Bool));
  }

  IndexOpResult elementTest(const std::vector<TensorId>& ins, std::optional<DType> dst, OpKind test, Reduction combine) {
    needInputs(ins, 1, "the tensor to test");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    const DType t = dst.value_or(x.dtype);
    TensorId passes = apply(test, {ins[0], constant(0, x.dtype)});
    TensorId total = passes;
    if (!x.shape.empty()) {
      Node r = node(OpKind::Reduce, {passes});
      for (size_t d = 0; d < x.shape.size(); ++d) r.axes.push_back(static_cast<int64_t>(d));
      r.reduction = std::move(combine);
      total = add(std::move(r), {}, DType::Bool);
    }
    TensorId value = t == DType::Bool ? total : add(node(OpKind::Cast, {total}), {}, t);
    return {node(OpKind::Reshape, {value}), {1}, t};
  }

  IndexOpResult tile(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor to tile");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    if (a.multiples.size() < x.shape.size())
      fail("multiples has " + std::to_string(a.multiples.size()) + " entries for a rank-" +
           std::to_string(x.shape.size()) + " input");
    needPerAxis(a.multiples, "multiples", a.multiples.size());
    Shape in(a.multiples.size() - x.shape.size(), 1);  // leading 1s, as MindSpore pads the shape
    in.insert(in.end(), x.shape.begin(), x.shape.end());
    TensorId source = in == x.shape ? ins[0] : add(node(OpKind::Reshape, {ins[0]}), in, x.dtype);
    Shape out = in;
    for (size_t d = 0; d < out.size(); ++d) {
      if (in[d] == 0 && a.multiples[d] > 0) fail("cannot tile an empty axis");
      out[d] = in[d] * a.multiples[d];
    }
    Node w = node(OpKind::Window, {source});
    w.begin.assign(out.size(), 0);
    return {std::move(w), out, x.dtype};
  }

  IndexOpResult slice(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor to slice");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    const size_t rank = x.shape.size();
    if (a.begin.size() != rank || a.size.size() != rank)
      fail("begin and size need one entry per axis of the rank-" + std::to_string(rank) + " input");
    Shape out(rank);
    for (size_t d = 0; d < rank; ++d) {
      const int64_t b = a.begin[d], n = a.size[d] == -1 ? x.shape[d] - b : a.size[d];
      if (b < 0 || b > x.shape[d] || n < 0 || n > x.shape[d] - b)
        fail("axis " + std::to_string(d) + ": begin " + std::to_string(b) + " and size " + std::to_string(a.size[d]) +
             " leave the extent " + std::to_string(x.shape[d]));
      out[d] = n;
    }
    Node w = node(OpKind::Window, {ins[0]});
    w.begin = a.begin;
    return {std::move(w), out, x.dtype};
  }

  // Positive strides: stridedWindow; a negative one: steppedSlice (one stepped Window).
  IndexOpResult stridedSlice(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor to slice");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    const size_t rank = x.shape.size();
    if (a.ellipsisMask || a.newAxisMask) fail("ellipsis_mask and new_axis_mask are not supported (write a Reshape)");
    if (a.begin.size() > rank || a.end.size() != a.begin.size() || a.strides.size() != a.begin.size())
      fail("begin, end and strides need the same number of entries, at most the input's rank " + std::to_string(rank));
    const SliceAxes axes = canonicalSlice(x.shape, a);
    if (std::any_of(axes.step.begin(), axes.step.end(), [](int64_t s) { return s < 0; })) return steppedSlice(ins[0], axes);
    return {stridedWindow(ins[0], axes.begin, axes.count, axes.step, axes.result), axes.result, x.dtype};
  }

  // x[.., begin + stride * i, ..] for i < count on every axis (strides >= 1), shaped
  // `out` (count's elements): no op of its own -- a Window of count * stride elements
  // from `begin` (reads past the end wrap and are dropped), each strided axis split into
  // [count, stride] by a Reshape, a Window keeping index 0 of every stride axis, and a
  // Reshape to `out`. The last node is not added.
  Node stridedWindow(TensorId x, const std::vector<int64_t>& begin, const Shape& count,
                     const std::vector<int64_t>& stride, const Shape& out) {
    const DType t = info(x).dtype;
    Shape span(count.size()), split, picked;  // the Window's extents; the split shape; one of each stride
    for (size_t d = 0; d < count.size(); ++d) {
      span[d] = count[d] * stride[d];
      split.push_back(count[d]);
      picked.push_back(count[d]);
      if (stride[d] > 1) split.push_back(stride[d]), picked.push_back(1);
    }
    Node w = node(OpKind::Window, {x});
    w.begin = begin;
    if (span == out) return w;
    TensorId taken = add(std::move(w), span, t);
    if (split != span) {
      Node firsts = node(OpKind::Window, {reshape(taken, split)});
      firsts.begin.assign(split.size(), 0);
      taken = add(std::move(firsts), picked, t);
    }
    return node(OpKind::Reshape, {taken});
  }

  // TensorFlow's canonical slice of every axis, for strides of either sign: a masked
  // begin is the first index taken (the last for a negative stride), a masked end the
  // one past the last (before the first), other positions count from the end when
  // negative and clamp to [0, n] ([-1, n - 1] for a negative stride); a shrink bit keeps
  // index `begin` and drops the axis from the result.
  struct SliceAxes {
    std::vector<int64_t> begin, step;
    Shape count, result;  // elements taken per axis; the result's shape (no shrunk axes)
  };
  SliceAxes canonicalSlice(const Shape& shape, const IndexOpAttrs& a) const {
    const size_t rank = shape.size();
    SliceAxes s{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), Shape(rank), {}};
    for (size_t d = 0; d < rank; ++d) {
      const bool given = d < a.begin.size();
      const int64_t n = shape[d];
      if (given && a.strides[d] == 0) fail("stride 0 on axis " + std::to_string(d));
      if (given && (a.shrinkAxisMask >> d & 1)) {
        const int64_t i = a.begin[d] < 0 ? a.begin[d] + n : a.begin[d];
        if (i < 0 || i >= n) fail("shrink_axis_mask keeps index " + std::to_string(a.begin[d]) + " of axis " +
                                  std::to_string(d) + " (extent " + std::to_string(n) + ")");
        s.begin[d] = i;
        s.count[d] = 1;
        continue;
      }
      const int64_t step = given ? a.strides[d] : 1, low = step > 0 ? 0 : -1, high = step > 0 ? n : n - 1;
      auto canonical = [&](int64_t i) { return std::clamp(i < 0 ? i + n : i, low, high); };
      const int64_t b = !given || (a.beginMask >> d & 1) ? (step > 0 ? low : high) : canonical(a.begin[d]);
      const int64_t e = !given || (a.endMask >> d & 1) ? (step > 0 ? high : low) : canonical(a.end[d]);
      const int64_t span = step > 0 ? e - b : b - e, along = step > 0 ? step : -step;
      s.step[d] = step;
      s.count[d] = span > 0 ? (span + along - 1) / along : 0;
      s.begin[d] = s.count[d] > 0 ? b : 0;  // nothing read
      s.result.push_back(s.count[d]);
    }
    return s;
  }

  // A slice with a negative stride: one Window stepping by the strides, then a Reshape
  // dropping shrunk axes.
  IndexOpResult steppedSlice(TensorId x, const SliceAxes& axes) {
    for (size_t d = 0; d < axes.step.size(); ++d)
      if (axes.step[d] < -(int64_t{1} << 20) || axes.step[d] > (int64_t{1} << 20))
        fail("stride " + std::to_string(axes.step[d]) + " on axis " + std::to_string(d) + " is out of range");
    const DType t = info(x).dtype;
    Node w = node(OpKind::Window, {x});
    w.begin = axes.begin;
    w.steps = axes.step;
    if (axes.count == axes.result) return {std::move(w), axes.result, t};
    return {node(OpKind::Reshape, {add(std::move(w), axes.count, t)}), axes.result, t};
  }

  IndexOpResult concat(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    if (ins.empty()) fail("takes at least one input");
    const Tensor first = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    const int64_t rank = static_cast<int64_t>(first.shape.size());
    const int64_t given = a.axis.value_or(0);
    if (rank == 0 || given < -rank || given >= rank)
      fail("axis " + std::to_string(given) + " is out of range for rank " + std::to_string(rank));
    const size_t axis = static_cast<size_t>(given < 0 ? given + rank : given);
    Shape out = first.shape;
    out[axis] = 0;
    std::vector<int64_t> offsets;  // where each input starts along the axis
    for (size_t k = 0; k < ins.size(); ++k) {
      const Tensor& x = info(ins[k]);
      Shape other = x.shape, want = first.shape;
      if (x.dtype != first.dtype) fail("input " + std::to_string(k) + " is " + std::string(dtypeName(x.dtype)) +
                                       ", input 0 " + std::string(dtypeName(first.dtype)));
      if (other.size() == want.size()) other[axis] = want[axis] = 0;
      if (other != want) fail("input " + std::to_string(k) + " has shape " + toString(x.shape) + ", which differs from input 0's " +
                              toString(first.shape) + " off axis " + std::to_string(axis));
      offsets.push_back(out[axis]);
      out[axis] += x.shape[axis];
    }
    // Inputs with nothing along the axis contribute nothing (and cannot be read).
    std::vector<size_t> parts;
    for (size_t k = 0; k < ins.size(); ++k)
      if (info(ins[k]).shape[axis] > 0) parts.push_back(k);
    auto shifted = [&](size_t k) {
      Node w = node(OpKind::Window, {ins[k]});
      w.begin.assign(out.size(), 0);
      w.begin[axis] = -offsets[k];
      return w;
    };
    if (parts.empty()) return {shifted(0), out, first.dtype};  // an empty result
    if (parts.size() == 1) return {shifted(parts[0]), out, first.dtype};
    // From the last part down: part p where the coordinate is below part p+1's start,
    // else what the later parts give.
    TensorId coordinate = iota(out, static_cast<int64_t>(axis), DType::Int64);
    auto choose = [&](size_t p, TensorId later) {
      const double next = static_cast<double>(offsets[parts[p + 1]]);
      TensorId before = apply(OpKind::Less, {coordinate, constant(next, DType::Int64)});
      return node(OpKind::Select, {before, add(shifted(parts[p]), out, first.dtype), later});
    };
    TensorId later = add(shifted(parts.back()), out, first.dtype);
    for (size_t p = parts.size() - 2; p > 0; --p) later = add(choose(p, later), out, first.dtype);
    return {choose(0, later), out, first.dtype};
  }

  // Equal parts of x along the axis, one Window each.
  std::vector<IndexOpResult> split(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor to split");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    const int64_t rank = static_cast<int64_t>(x.shape.size()), given = a.axis.value_or(0);
    if (rank == 0 || given < -rank || given >= rank)
      fail("axis " + std::to_string(given) + " is out of range for rank " + std::to_string(rank));
    const size_t axis = static_cast<size_t>(given < 0 ? given + rank : given);
    if (a.outputNum < 1 || x.shape[axis] % a.outputNum != 0)
      fail("output_num " + std::to_string(a.outputNum) + " does not divide axis " + std::to_string(axis) +
           " (extent " + std::to_string(x.shape[axis]) + ")");
    Shape part = x.shape;
    part[axis] /= a.outputNum;
    std::vector<IndexOpResult> parts;
    for (int64_t k = 0; k < a.outputNum; ++k) {
      Node w = node(OpKind::Window, {ins[0]});
      w.begin.assign(part.size(), 0);
      w.begin[axis] = k * part[axis];
      parts.push_back({std::move(w), part, x.dtype});
    }
    return parts;
  }

  // GatherNd: a Gather along axis 0 of params with its first k axes merged by a Reshape
  // (still the graph input's memory), at the flat index sum_j indices[.., j] * stride_j,
  // or -1 (out of range: 0) where some component is outside its axis.
  IndexOpResult gatherNd(const std::vector<TensorId>& ins) {
    needInputs(ins, 2, "params, indices");
    const Tensor params = info(ins[0]), indices = info(ins[1]);  // copies: adding nodes moves the graph's tensors
    if (indices.dtype != DType::Int32 && indices.dtype != DType::Int64)
      fail("indices must be int32 or int64, got " + std::string(dtypeName(indices.dtype)));
    const auto rank = static_cast<int64_t>(params.shape.size());
    const int64_t k = indices.shape.empty() ? 0 : indices.shape.back();
    if (k < 1 || k > rank)
      fail("the indices' last extent (" + std::to_string(k) + " index components) must be between 1 and params' rank " +
           std::to_string(rank));
    const Shape lead(indices.shape.begin(), indices.shape.end() - 1);
    Shape merged = {1}, out = lead;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < k) merged[0] *= params.shape[static_cast<size_t>(d)];
      else merged.push_back(params.shape[static_cast<size_t>(d)]), out.push_back(params.shape[static_cast<size_t>(d)]);
    }
    TensorId at = flatIndex(ins[1], Shape(params.shape.begin(), params.shape.begin() + static_cast<std::ptrdiff_t>(k)));
    TensorId rows = k == 1 ? ins[0] : add(node(OpKind::Reshape, {ins[0]}), merged, params.dtype);
    Node g = node(OpKind::Gather, {rows, at});
    g.axes = {0};
    return {std::move(g), out, params.dtype};
  }

  IndexOpResult pool2d(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor to pool");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    const IndexOpAttrs::Pool& p = a.pool;
    const size_t rank = x.shape.size();
    const std::string layout = !p.layout.empty() ? p.layout : rank == 5 ? "NC1HWC0" : "NHWC";
    if (!(rank == 4 && (layout == "NHWC" || layout == "NCHW")) && !(rank == 5 && (layout == "NC1HWC0" || layout == "NCHWc")))
      fail("data_layout " + quotedName(layout) + " with a rank-" + std::to_string(rank) +
           " input: NHWC and NCHW take rank 4, NC1HWC0 rank 5");
    if (x.dtype == DType::Bool || isComplex(x.dtype)) fail("pools numbers, got " + std::string(dtypeName(x.dtype)));
    const std::vector<int64_t> hw = {layout == "NHWC" ? 1 : 2, layout == "NHWC" ? 2 : 3};
    const bool isMax = p.type == "max";
    const DType ct = computeType(x.dtype);
    if (p.global) {
      TensorId r = reduce(isMax ? ins[0] : cast(ins[0], ct), isMax ? BuiltinCombiner::Max : BuiltinCombiner::Sum, hw, true);
      Shape out = info(r).shape;
      if (isMax) return {node(OpKind::Cast, {r}), out, x.dtype};
      const double n = static_cast<double>(x.shape[static_cast<size_t>(hw[0])] * x.shape[static_cast<size_t>(hw[1])]);
      return {node(OpKind::Cast, {apply(OpKind::Div, {r, constant(n, ct)})}), out, x.dtype};
    }
    IndexOpAttrs padding;  // the padded input: head = top/left, tail reaching the last window
    padding.head.assign(rank, 0);
    padding.tail.assign(rank, 0);
    padding.padValue = isMax ? lowestFinite(x.dtype) : 0;
    Shape out = x.shape;
    std::vector<int64_t> stride(rank, 1);
    for (size_t i = 0; i < 2; ++i) {
      const auto d = static_cast<size_t>(hw[i]);
      const int64_t n = x.shape[d], k = p.kernel[i], s = p.strides[i], head = p.pad[i], tail = p.pad[i + 2];
      if (k < 1 || s < 1 || head < 0 || tail < 0 || k > (int64_t{1} << 20) || s > (int64_t{1} << 20) || head >= k || tail >= k)
        fail("kernel_size and strides must be positive and each pad smaller than the kernel");
      if (n + head + tail < k) fail("the window " + std::to_string(k) + " is larger than the padded extent");
      const int64_t floorOut = (n + head + tail - k) / s + 1, ceilOut = (n + head + tail - k + s - 1) / s + 1;
      // round_mode: MindSpore's shape inference reads 0 as ceil, AKG's kernel as floor; the
      // declared output shape says which one the file was made with.
      const bool ceil = a.declaredShape.size() == rank && a.declaredShape[d] == ceilOut;
      out[d] = ceil ? ceilOut : floorOut;
      padding.head[d] = head;
      padding.tail[d] = std::max<int64_t>(0, (out[d] - 1) * s + k - n - head);
      stride[d] = s;
    }
    if (p.kernel[0] * p.kernel[1] > kMaxPoolWindow)
      fail("a window of " + std::to_string(p.kernel[0] * p.kernel[1]) + " elements; polyred expands at most " +
           std::to_string(kMaxPoolWindow) + " (one load each)");
    // In the compute type from the start: no rounding of the padded values and partial
    // maxima to 16 bits on the way (a max is exact in float32; the sum rounds once).
    IndexOpResult padded = pad({cast(ins[0], ct)}, padding);
    TensorId source = add(std::move(padded.last), padded.shape, ct);
    TensorId acc = -1;
    for (int64_t i = 0; i < p.kernel[0]; ++i)
      for (int64_t j = 0; j < p.kernel[1]; ++j) {
        std::vector<int64_t> begin(rank, 0);
        begin[static_cast<size_t>(hw[0])] = i;
        begin[static_cast<size_t>(hw[1])] = j;
        TensorId tap = add(stridedWindow(source, begin, out, stride, out), out, ct);
        acc = acc < 0 ? tap : apply(isMax ? OpKind::Maximum : OpKind::Add, {acc, tap});
      }
    if (isMax) return {node(OpKind::Cast, {acc}), out, x.dtype};
    const double n = static_cast<double>(p.kernel[0] * p.kernel[1]);
    return {node(OpKind::Cast, {apply(OpKind::Div, {acc, constant(n, ct)})}), out, x.dtype};
  }

  // TransData between a plain layout and FRACTAL_NZ (AKG's kernel; cubes of 16):
  // [.., m, n] -> [.., N1, M1, 16, 16], out[.., n1, m1, m0, n0] = x[.., 16 m1 + m0,
  // 16 n1 + n0] and 0 past m or n: a Pad, a Reshape into cubes and a Transpose; back, the
  // Transpose, the Reshape and a Window cropping to the declared [.., m, n].
  IndexOpResult transData(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    constexpr int64_t cube = 16;
    auto plain = [](const std::string& f) { return f == "DefaultFormat" || f == "NCHW" || f == "ND"; };
    const size_t r = x.shape.size();
    Shape batch(x.shape.begin(), x.shape.end() - static_cast<std::ptrdiff_t>(std::min<size_t>(r, 2)));
    std::vector<int64_t> perm(batch.size());
    for (size_t d = 0; d < perm.size(); ++d) perm[d] = static_cast<int64_t>(d);
    const auto b = static_cast<int64_t>(batch.size());
    if (plain(a.srcFormat) && a.dstFormat == "FRACTAL_NZ") {
      if (r < 2) fail("takes a tensor of rank at least 2");
      const int64_t m = x.shape[r - 2], n = x.shape[r - 1], m1 = (m + cube - 1) / cube, n1 = (n + cube - 1) / cube;
      IndexOpAttrs padding;
      padding.head.assign(r, 0);
      padding.tail.assign(r, 0);
      padding.tail[r - 2] = m1 * cube - m;
      padding.tail[r - 1] = n1 * cube - n;
      IndexOpResult padded = pad(ins, padding);
      Shape cubes = batch, out = batch;
      cubes.insert(cubes.end(), {m1, cube, n1, cube});
      out.insert(out.end(), {n1, m1, cube, cube});
      TensorId split = add(node(OpKind::Reshape, {add(std::move(padded.last), padded.shape, x.dtype)}), cubes, x.dtype);
      Node t = node(OpKind::Transpose, {split});
      t.perm = perm;
      t.perm.insert(t.perm.end(), {b + 2, b, b + 1, b + 3});
      return {std::move(t), out, x.dtype};
    }
    if (a.srcFormat != "FRACTAL_NZ" || !plain(a.dstFormat))
      fail("from " + quotedName(a.srcFormat) + " to " + quotedName(a.dstFormat) +
           ": only between DefaultFormat/NCHW/ND and FRACTAL_NZ");
    if (r < 4 || x.shape[r - 1] != cube || x.shape[r - 2] != cube)
      fail("a FRACTAL_NZ tensor has shape [.., N1, M1, 16, 16], got " + toString(x.shape));
    batch.resize(r - 4);
    perm.resize(r - 4);
    const auto lead = static_cast<int64_t>(r - 4);
    const Shape& want = a.declaredShape;
    const int64_t n1 = x.shape[r - 4], m1 = x.shape[r - 3];
    if (want.size() != r - 2 || !std::equal(batch.begin(), batch.end(), want.begin()) || want[r - 4] > m1 * cube ||
        want[r - 4] <= (m1 - 1) * cube || want[r - 3] > n1 * cube || want[r - 3] <= (n1 - 1) * cube)
      fail("the declared output " + toString(want) + " is not the plain shape of " + toString(x.shape));
    Node t = node(OpKind::Transpose, {ins[0]});
    t.perm = perm;
    t.perm.insert(t.perm.end(), {lead + 1, lead + 2, lead, lead + 3});
    Shape cubes = batch, whole = batch;
    cubes.insert(cubes.end(), {m1, cube, n1, cube});
    whole.insert(whole.end(), {m1 * cube, n1 * cube});
    TensorId rows = add(node(OpKind::Reshape, {add(std::move(t), cubes, x.dtype)}), whole, x.dtype);
    Node crop = node(OpKind::Window, {rows});
    crop.begin.assign(want.size(), 0);
    return {std::move(crop), want, x.dtype};
  }

  // StandardNormal: PhiloxNormal(row-major position, key) over the declared shape, in
  // the declared float type.
  IndexOpResult standardNormal(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 0, "none: its shape is an attribute or a constant list");
    const Shape& shape = a.declaredShape;
    for (const Shape& s : a.givenShapes)
      if (s != shape) fail("its shape " + toString(s) + " is not its declared output's " + toString(shape));
    if (!isFloat(a.declaredType))
      fail("gives float values; its output is declared " + std::string(dtypeName(a.declaredType)));
    auto int64 = [&](int64_t v) { return constant(Scalar::ofInt(DType::Int64, v)); };
    const TensorId position = rowMajorPosition<TensorId>(
        shape, [&](int64_t axis) { return iota(shape, axis); },
        [&](TensorId v, int64_t s) { return apply(OpKind::Mul, {v, int64(s)}); },
        [&](TensorId x, TensorId y) { return apply(OpKind::Add, {x, y}); },
        [&] { return add(node(OpKind::BroadcastTo, {int64(0)}), shape, DType::Int64); });
    return {node(OpKind::PhiloxNormal, {position, int64(philoxKey(a.seed, a.seed2))}), shape, a.declaredType};
  }

  // NCHW <-> NHWC: a Transpose. (Ascend's fractal formats have no meaning here.)
  IndexOpResult layoutTransform(const std::vector<TensorId>& ins, const IndexOpAttrs& a) {
    needInputs(ins, 1, "the tensor to transform");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    Node t = node(OpKind::Transpose, {ins[0]});
    if (a.srcFormat == a.dstFormat) t.perm = {0, 1, 2, 3};
    else if (a.srcFormat == "NCHW" && a.dstFormat == "NHWC") t.perm = {0, 2, 3, 1};
    else if (a.srcFormat == "NHWC" && a.dstFormat == "NCHW") t.perm = {0, 3, 1, 2};
    else fail("from " + quotedName(a.srcFormat) + " to " + quotedName(a.dstFormat) + ": only NCHW <-> NHWC are supported");
    if (x.shape.size() != 4) fail("takes a rank-4 tensor, got rank " + std::to_string(x.shape.size()));
    Shape out(4);
    for (size_t d = 0; d < 4; ++d) out[d] = x.shape[static_cast<size_t>(t.perm[d])];
    return {std::move(t), out, x.dtype};
  }
};

}  // namespace

std::span<const std::string_view> indexOpNames() { return kIndexOps; }

bool isIndexOp(std::string_view name) {
  return std::find(std::begin(kIndexOps), std::end(kIndexOps), name) != std::end(kIndexOps);
}

IndexOpResult expandIndexOp(std::string_view name, const std::vector<TensorId>& ins, const IndexOpAttrs& attrs,
                            ExpansionSink& sink, const std::string& op) {
  IndexExpansion e(sink, op);
  if (name == "PadAkg" || name == "Pad") return e.pad(ins, attrs);
  if (name == "Tile") return e.tile(ins, attrs);
  if (name == "Slice") return e.slice(ins, attrs);
  if (name == "StridedSlice") return e.stridedSlice(ins, attrs);
  if (name == "Concat") return e.concat(ins, attrs);
  if (name == "LayoutTransform") return e.layoutTransform(ins, attrs);
  if (name == "GatherNd") return e.gatherNd(ins);
  if (name == "Pool2D") return e.pool2d(ins, attrs);
  if (name == "TransData") return e.transData(ins, attrs);
  if (name == "UnPadAkg") return e.unpad(ins, attrs);
  if (name == "OneHot") return e.oneHot(ins, attrs);
  if (name == "ElemAll") return e.elemAll(ins, attrs);
  if (name == "StandardNormal") return e.standardNormal(ins, attrs);
  return e.elemAny(ins, attrs);
}

std::vector<IndexOpResult> expandSplit(const std::vector<TensorId>& ins, const IndexOpAttrs& attrs, ExpansionSink& sink,
                                       const std::string& op) {
  return IndexExpansion(sink, op).split(ins, attrs);
}

}  // namespace polyred
