#include "frontend/composite_index_ops.h"

#include <algorithm>

#include "support/error.h"

namespace polyred {

namespace {

constexpr std::string_view kIndexOps[] = {"PadAkg", "UnPadAkg", "OneHot", "ElemAny", "ElemAll"};

class IndexExpansion : public ExpansionBuilder {
 public:
  using ExpansionBuilder::ExpansionBuilder;

  [[noreturn]] void fail(const std::string& why) const { throw Error("", op_, why); }
  TensorId iota(const Shape& shape, int64_t axis, DType t) {
    Node n = node(OpKind::Iota, {});
    n.axes = {axis};
    return add(std::move(n), shape, t);
  }
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
    TensorId inside = -1;  // and of the per-axis range tests, over the padded axes
    for (size_t d = 0; d < out.size(); ++d) {
      if (!a.head[d] && !a.tail[d]) continue;
      TensorId c = iota(out, static_cast<int64_t>(d), DType::Int64);
      auto test = [&](OpKind k, int64_t bound) {
        TensorId t = apply(k, {c, constant(static_cast<double>(bound), DType::Int64)});
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
    if (a.axis < -1 || a.axis > rank) fail("axis " + std::to_string(a.axis) + " is out of range for rank " + std::to_string(rank));
    const size_t axis = static_cast<size_t>(a.axis == -1 ? rank : a.axis);
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
};

}  // namespace

std::span<const std::string_view> indexOpNames() { return kIndexOps; }

bool isIndexOp(std::string_view name) {
  return std::find(std::begin(kIndexOps), std::end(kIndexOps), name) != std::end(kIndexOps);
}

IndexOpResult expandIndexOp(std::string_view name, const std::vector<TensorId>& ins, const IndexOpAttrs& attrs,
                            ExpansionSink& sink, const std::string& op) {
  IndexExpansion e(sink, op);
  if (name == "PadAkg") return e.pad(ins, attrs);
  if (name == "UnPadAkg") return e.unpad(ins, attrs);
  if (name == "OneHot") return e.oneHot(ins, attrs);
  if (name == "ElemAll") return e.elemAll(ins, attrs);
  return e.elemAny(ins, attrs);
}

}  // namespace polyred
