#include "frontend/composite_masked_sums.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"
#include "support/int_math.h"

namespace polyred {

namespace {

constexpr std::string_view kMaskedSumOps[] = {"CumSum", "CumProd", "UnsortedSegmentSum", "TensorScatterAdd"};

// Scans of up to this many elements take one n x n mask (one kernel); longer ones go by
// blocks of sqrt(n) (several kernels, n * sqrt(n) work).
constexpr int64_t kDirectScanLength = 1024;

class MaskedSums : public AttributedExpansion {
 public:
  using AttributedExpansion::AttributedExpansion;

  TupleOpOutput expand(std::string_view name, const std::vector<TensorId>& ins) {
    if (name == "CumSum" || name == "CumProd") return scan(ins, name == "CumSum" ? BuiltinCombiner::Sum : BuiltinCombiner::Prod);
    if (name == "UnsortedSegmentSum") return segmentSum(ins);
    return scatterAdd(ins);
  }

 private:
  void needNumbers(TensorId x, const char* what) const {
    const DType t = info(x).dtype;
    if (t == DType::Bool || isComplex(t)) fail(std::string(what) + " must be numbers, got " + std::string(dtypeName(t)));
  }
  void needIndices(TensorId x, const char* what) const {
    const DType t = info(x).dtype;
    if (t != DType::Int32 && t != DType::Int64) fail(std::string(what) + " must be int32 or int64, got " + std::string(dtypeName(t)));
  }
  void checkWork(const Shape& mask) const {
    if (productUpTo(mask, kMaxMaskedWork) > kMaxMaskedWork)
      fail("computed as a masked reduction this takes more than " + std::to_string(kMaxMaskedWork) +
           " operations (mask " + toString(mask) + "); a dedicated scan kernel is not built");
  }
  // The reduction over `axes` of `values` where `mask` holds, else the identity.
  TensorId maskedReduce(TensorId mask, TensorId values, const Shape& shape, BuiltinCombiner c, std::vector<int64_t> axes) {
    const DType t = info(values).dtype;
    TensorId kept = add(node(OpKind::Select, {mask, values, constant(c == BuiltinCombiner::Prod ? 1 : 0, t)}), shape, t);
    return reduce(kept, c, axes, false);
  }

  // out[.., i, ..] folds x[.., j, ..] over the j the mask keeps: a [.., i, j, ..] mask.
  TupleOpOutput scan(const std::vector<TensorId>& ins, BuiltinCombiner c) {
    if (ins.empty() || ins.size() > 2) fail("takes the tensor and, optionally, the axis as a constant input");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    needNumbers(ins[0], "the elements");
    const auto rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = intParameter("axis", ins, 1, 0);
    if (rank == 0 || axis < -rank || axis >= rank)
      fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    const bool exclusive = boolAttr("exclusive"), reverse = boolAttr("reverse");
    const OpKind keep = reverse ? (exclusive ? OpKind::Greater : OpKind::GreaterEqual)
                                : (exclusive ? OpKind::Less : OpKind::LessEqual);
    const int64_t n = x.shape[static_cast<size_t>(axis)];
    if (n <= kDirectScanLength) return {node(OpKind::Cast, {prefix(ins[0], axis, keep, c)}), x.shape, x.dtype};
    // Blocks of T = ceil(sqrt(n)) elements: the scan within each block, plus the
    // combined totals of the blocks before it (after it, reversed) -- n * T + B * B work
    // per row instead of n * n. The axis is padded to B * T with the identity.
    const auto a = static_cast<size_t>(axis);
    const auto t = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    const int64_t b = (n + t - 1) / t;
    Shape padded = x.shape, blocks = x.shape;
    padded[a] = b * t;
    blocks[a] = t;
    blocks.insert(blocks.begin() + axis, b);
    const double identity = c == BuiltinCombiner::Prod ? 1 : 0;
    Node w = node(OpKind::Window, {ins[0]});
    w.begin.assign(x.shape.size(), 0);
    TensorId inside = apply(OpKind::Less, {iota(padded, axis), constant(static_cast<double>(n), DType::Int64)});
    TensorId filled = add(node(OpKind::Select, {inside, add(std::move(w), padded, x.dtype), constant(identity, x.dtype)}),
                          padded, x.dtype);
    TensorId rows = reshape(filled, blocks);
    TensorId within = prefix(rows, axis + 1, keep, c);
    TensorId before = prefix(reduce(rows, c, {axis + 1}, true), axis, reverse ? OpKind::Greater : OpKind::Less, c);
    TensorId joined = reshape(apply(c == BuiltinCombiner::Prod ? OpKind::Mul : OpKind::Add, {within, before}), padded);
    Node crop = node(OpKind::Window, {joined});
    crop.begin.assign(x.shape.size(), 0);
    return {std::move(crop), x.shape, x.dtype};
  }

  // The masked scan of x along `axis`: out[.., i, ..] folds x[.., j, ..] over the j with
  // `keep`(j, i), through a [.., i, j, ..] mask.
  TensorId prefix(TensorId x, int64_t axis, OpKind keep, BuiltinCombiner c) {
    const Shape shape = info(x).shape;
    Shape wide = shape, spread = shape;  // [.., i, j, ..] and x along j
    wide.insert(wide.begin() + axis + 1, shape[static_cast<size_t>(axis)]);
    spread.insert(spread.begin() + axis, 1);
    checkWork(wide);
    TensorId mask = apply(keep, {iota(wide, axis + 1), iota(wide, axis)});
    return maskedReduce(mask, reshape(x, spread), wide, c, {axis + 1});
  }

  // out[s, rest] sums data[i.., rest] where ids[i..] == s: one ScatterAdd (an atomic
  // scatter, or a masked sum where that cannot run: canon/scatter_fallback).
  TupleOpOutput segmentSum(const std::vector<TensorId>& ins) {
    if (ins.size() < 2 || ins.size() > 3) fail("takes data, segment ids and, optionally, num_segments as a constant input");
    const Tensor data = info(ins[0]), ids = info(ins[1]);  // copies: adding nodes moves the graph's tensors
    needNumbers(ins[0], "the data");
    needIndices(ins[1], "segment ids");
    const int64_t segments = intParameter("num_segments", ins, 2);
    if (segments < 1 || segments > (int64_t{1} << 40)) fail("num_segments " + std::to_string(segments) + " must be positive");
    const size_t r = ids.shape.size();
    if (r > data.shape.size() || !std::equal(ids.shape.begin(), ids.shape.end(), data.shape.begin()))
      fail("segment ids of shape " + toString(ids.shape) + " must be a leading part of the data's shape " + toString(data.shape));
    Shape out = {segments};
    out.insert(out.end(), data.shape.begin() + static_cast<std::ptrdiff_t>(r), data.shape.end());
    return {node(OpKind::ScatterAdd, {ins[0], ins[1]}), out, data.dtype};
  }

  // input, plus the updates added at their index tuples' rows: one ScatterAdd whose
  // index is the tuple's flat position among input's first k axes (-1, dropped, where
  // a component is outside its axis) and whose base is the input.
  TupleOpOutput scatterAdd(const std::vector<TensorId>& ins) {
    if (ins.size() != 3) fail("takes 3 inputs (input, indices, updates), got " + std::to_string(ins.size()));
    const Tensor x = info(ins[0]), updates = info(ins[2]);  // copies: adding nodes moves the graph's tensors
    needNumbers(ins[0], "the input");
    needIndices(ins[1], "indices");
    if (updates.dtype != x.dtype) fail("updates must have the input's dtype " + std::string(dtypeName(x.dtype)));
    TensorId indices = ins[1];
    if (info(indices).shape.size() == 1) indices = reshape(indices, {info(indices).shape[0], 1});  // AKG: [N] is [N, 1]
    const Shape ind = info(indices).shape;
    const auto k = static_cast<size_t>(ind.back());
    if (k < 1 || k > x.shape.size())
      fail("index tuples of " + std::to_string(k) + " components for a rank-" + std::to_string(x.shape.size()) + " input");
    const Shape lead(ind.begin(), ind.end() - 1), rows(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(k));
    Shape want = lead;
    want.insert(want.end(), x.shape.begin() + static_cast<std::ptrdiff_t>(k), x.shape.end());
    if (updates.shape != want)
      fail("updates have shape " + toString(updates.shape) + "; indices and input ask for " + toString(want));
    Node n = node(OpKind::ScatterAdd, {ins[2], flatIndex(indices, rows), ins[0]});
    n.axes = {static_cast<int64_t>(k)};
    return {std::move(n), x.shape, x.dtype};
  }
};

}  // namespace

std::span<const std::string_view> maskedSumOpNames() { return kMaskedSumOps; }

bool isMaskedSumOp(std::string_view name) {
  return std::find(std::begin(kMaskedSumOps), std::end(kMaskedSumOps), name) != std::end(kMaskedSumOps);
}

TupleOpOutput expandMaskedSum(std::string_view name, const std::vector<TensorId>& ins, const CompositeAttrs& attrs,
                              ExpansionSink& sink, const std::string& file, const std::string& op) {
  return MaskedSums(sink, file, op, attrs).expand(name, ins);
}

}  // namespace polyred
