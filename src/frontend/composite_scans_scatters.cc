#include "frontend/composite_scans_scatters.h"

#include <algorithm>

#include "frontend/composite_reader.h"
#include "support/error.h"

namespace polyred {

namespace {

constexpr std::string_view kScanScatterOps[] = {"CumSum", "CumProd", "UnsortedSegmentSum", "TensorScatterAdd"};

class ScansScatters : public AttributedExpansion {
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
  // One Scan node along the axis.
  TupleOpOutput scan(const std::vector<TensorId>& ins, BuiltinCombiner c) {
    if (ins.empty() || ins.size() > 2) fail("takes the tensor and, optionally, the axis as a constant input");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    if (x.dtype == DType::Bool) fail("the elements must be numbers (complex64 too), got bool");
    const auto rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = intParameter("axis", ins, 1, 0);
    if (rank == 0 || axis < -rank || axis >= rank)
      fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    Node n = node(OpKind::Scan, {ins[0]});
    n.axes = {axis < 0 ? axis + rank : axis};
    n.exclusive = boolAttr("exclusive");
    n.reverse = boolAttr("reverse");
    n.reduction = builtinReduction(c, x.dtype, x.dtype);
    return {std::move(n), x.shape, x.dtype};
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

std::span<const std::string_view> scanScatterOpNames() { return kScanScatterOps; }

bool isScanScatterOp(std::string_view name) {
  return std::find(std::begin(kScanScatterOps), std::end(kScanScatterOps), name) != std::end(kScanScatterOps);
}

TupleOpOutput readScanScatter(std::string_view name, const std::vector<TensorId>& ins, const CompositeAttrs& attrs,
                              ExpansionSink& sink, const std::string& file, const std::string& op) {
  return ScansScatters(sink, file, op, attrs).expand(name, ins);
}

}  // namespace polyred
