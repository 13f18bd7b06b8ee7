#include "frontend/composite_expansions.h"

#include <algorithm>
#include <cmath>

#include "frontend/composite_reader.h"
#include "support/error.h"

namespace polyred {

namespace {

constexpr std::string_view kExpanded[] = {"ReduceMean", "ReLU",    "Square",     "Sigmoid", "Softplus",
                                          "GeLU",       "Softmax", "LogSoftmax"};

// Emits nodes for one expansion, in the compute type (float32 for 16-bit floats).
class Expansion : public ExpansionBuilder {
 public:
  using ExpansionBuilder::ExpansionBuilder;

  TensorId scalar(double v, TensorId like) { return constant(v, info(like).dtype); }
};

}  // namespace

Node ExpansionBuilder::node(OpKind k, std::vector<TensorId> ins) const {
  Node n;
  n.kind = k;
  n.name = op_;
  n.inputs = std::move(ins);
  return n;
}

TensorId ExpansionBuilder::apply(OpKind k, std::vector<TensorId> ins) {
  Shape shape = info(ins[0]).shape;
  for (TensorId in : ins) shape = *broadcastShapes(shape, info(in).shape);
  DType t = isComparison(k) || isLogical(k) ? DType::Bool : info(ins[k == OpKind::Select ? 1 : 0]).dtype;
  return add(node(k, std::move(ins)), shape, t);
}

TensorId ExpansionBuilder::cast(TensorId x, DType t) {
  if (info(x).dtype == t) return x;
  return add(node(OpKind::Cast, {x}), info(x).shape, t);
}

TensorId ExpansionBuilder::iota(const Shape& shape, int64_t axis, DType t) {
  Node n = node(OpKind::Iota, {});
  n.axes = {axis};
  return add(std::move(n), shape, t);
}

void AttributedExpansion::fail(const std::string& why) const { throw Error(file_, op_, why); }

int64_t AttributedExpansion::intAttr(const char* name, int64_t fallback) const {
  const Json* v = attr(attrs_, name);
  return v ? readInt(*v, name) : fallback;
}

double AttributedExpansion::floatAttr(const char* name, double fallback) const {
  const Json* v = attr(attrs_, name);
  return v ? readScalarValue(*v, DType::Float64, name).asDouble() : fallback;
}

bool AttributedExpansion::boolAttr(const char* name) const {
  const Json* v = attr(attrs_, name);
  return v && readBool(*v, name);
}

int64_t AttributedExpansion::intParameter(const char* name, const std::vector<TensorId>& ins, size_t at,
                                          std::optional<int64_t> fallback) const {
  if (ins.size() > at) {
    const Tensor& t = info(ins[at]);
    if (t.role != TensorRole::Constant || !isInteger(t.dtype)) fail(std::string("the ") + name + " input must be an integer constant");
    return t.constant->i;
  }
  const Json* v = attr(attrs_, name);
  if (!v && fallback) return *fallback;
  if (!v) fail(std::string("needs a \"") + name + "\" attribute");
  if (!v->is_array()) return readInt(*v, name);
  std::vector<int64_t> list = readIntList(*v, name);
  if (list.size() != 1) fail(std::string(name) + " must be one integer");
  return list[0];
}

TensorId ExpansionBuilder::reduce(TensorId x, BuiltinCombiner c, const std::vector<int64_t>& axes, bool keepDims) {
  Node n = node(OpKind::Reduce, {x});
  n.axes = axes;
  n.keepDims = keepDims;
  n.reduction = builtinReduction(c, info(x).dtype);
  return add(std::move(n), reducedShape(info(x).shape, axes, keepDims), info(x).dtype);
}

Shape reducedShape(const Shape& in, const std::vector<int64_t>& axes, bool keepDims) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (!reduced) out.push_back(in[d]);
    else if (keepDims) out.push_back(1);
  }
  return out;
}

TensorId ExpansionBuilder::flatIndex(TensorId indices, const Shape& extents) {
  const Tensor ind = info(indices);  // a copy: adding nodes below may move the graph's tensors
  const Shape lead(ind.shape.begin(), ind.shape.end() - 1);
  Shape column = lead;
  column.push_back(1);
  const TensorId zero = constant(0, DType::Int64);
  TensorId flat = -1, inside = -1;
  int64_t stride = numElements(extents);
  for (size_t j = 0; j < extents.size(); ++j) {
    stride /= extents[j];
    Node w = node(OpKind::Window, {indices});
    w.begin.assign(ind.shape.size(), 0);
    w.begin.back() = static_cast<int64_t>(j);
    TensorId c = cast(reshape(add(std::move(w), column, ind.dtype), lead), DType::Int64);
    TensorId ok = apply(OpKind::LogicalAnd, {apply(OpKind::GreaterEqual, {c, zero}),
                                             apply(OpKind::Less, {c, constant(static_cast<double>(extents[j]), DType::Int64)})});
    inside = inside < 0 ? ok : apply(OpKind::LogicalAnd, {inside, ok});
    TensorId safe = apply(OpKind::Select, {ok, c, zero});  // no overflow in the product
    TensorId term = stride == 1 ? safe : apply(OpKind::Mul, {safe, constant(static_cast<double>(stride), DType::Int64)});
    flat = flat < 0 ? term : apply(OpKind::Add, {flat, term});
  }
  return apply(OpKind::Select, {inside, flat, constant(-1, DType::Int64)});
}

std::span<const std::string_view> expandedOpNames() { return kExpanded; }

bool isExpandedOp(std::string_view name) {
  return std::find(std::begin(kExpanded), std::end(kExpanded), name) != std::end(kExpanded);
}

Node expandOp(std::string_view name, const std::vector<TensorId>& ins, const ExpansionAttrs& attrs,
              ExpansionSink& sink, const std::string& op) {
  Expansion e(sink, op);
  if (ins.size() != 1)
    throw Error("", op, std::string(name) + " takes 1 input, got " + std::to_string(ins.size()));
  const TensorId x0 = ins[0];
  const DType t = e.info(x0).dtype;
  if (name == "ReLU") return e.node(OpKind::Maximum, {x0, e.scalar(0, x0)});
  if (name == "Square") return e.node(OpKind::Mul, {x0, x0});
  if (!isFloat(t)) throw Error("", op, std::string(name) + " takes a float input, got " + std::string(dtypeName(t)));
  const TensorId x = e.inComputeType(x0);
  const DType ct = e.info(x).dtype;
  Node last;  // the node computing the result, in the compute type ct
  if (name == "Sigmoid") {
    TensorId ex = e.apply(OpKind::Exp, {e.apply(OpKind::Neg, {x})});
    last = e.node(OpKind::Reciprocal, {e.apply(OpKind::Add, {e.scalar(1, x), ex})});
  } else if (name == "Softplus") {
    last = e.node(OpKind::Log, {e.apply(OpKind::Add, {e.scalar(1, x), e.apply(OpKind::Exp, {x})})});
  } else if (name == "GeLU") {
    TensorId cube = e.apply(OpKind::Mul, {e.apply(OpKind::Mul, {x, x}), x});
    TensorId inner = e.apply(OpKind::Add, {x, e.apply(OpKind::Mul, {e.scalar(0.044715, x), cube})});
    TensorId th = e.apply(OpKind::Tanh, {e.apply(OpKind::Mul, {e.scalar(std::sqrt(2 / M_PI), x), inner})});
    TensorId half = e.apply(OpKind::Mul, {e.scalar(0.5, x), x});
    last = e.node(OpKind::Mul, {half, e.apply(OpKind::Add, {e.scalar(1, x), th})});
  } else if (name == "ReduceMean") {
    int64_t n = 1;
    for (int64_t a : attrs.axes) n *= e.info(x).shape[static_cast<size_t>(a)];
    TensorId sum = e.reduce(x, BuiltinCombiner::Sum, attrs.axes, attrs.keepDims);
    last = e.node(OpKind::Div, {sum, e.scalar(static_cast<double>(n), x)});
  } else {  // Softmax, LogSoftmax: over `axis` (default the last), shapes kept
    std::vector<int64_t> axes = attrs.axes;
    if (!attrs.axisGiven) axes = {static_cast<int64_t>(e.info(x).shape.size()) - 1};
    TensorId shifted = e.apply(OpKind::Sub, {x, e.reduce(x, BuiltinCombiner::Max, axes, true)});
    TensorId ex = e.apply(OpKind::Exp, {shifted});
    TensorId sum = e.reduce(ex, BuiltinCombiner::Sum, axes, true);
    last = name == "Softmax" ? e.node(OpKind::Div, {ex, sum})
                             : e.node(OpKind::Sub, {shifted, e.apply(OpKind::Log, {sum})});
  }
  if (ct == t) return last;
  // Computed in float32: the last node becomes an intermediate, rounded once by a Cast.
  Shape shape = e.info(last.inputs[0]).shape;
  for (TensorId in : last.inputs) shape = *broadcastShapes(shape, e.info(in).shape);
  return e.node(OpKind::Cast, {sink.add(std::move(last), shape, ct)});
}

Shape expandedShape(const Node& last, const ExpansionSink& sink) {
  Shape shape = sink.tensor(last.inputs[0]).shape;
  if (last.kind == OpKind::Cast) return shape;
  for (TensorId in : last.inputs) shape = *broadcastShapes(shape, sink.tensor(in).shape);
  return shape;
}

}  // namespace polyred
