#include "frontend/builder.h"

#include <algorithm>

#include "frontend/row_major_position.h"
#include "ir/philox.h"
#include "ir/symbolic_dims.h"
#include "support/printable.h"
#include "support/error.h"

namespace polyred {

GraphBuilder::GraphBuilder(std::string name) { g_.name = std::move(name); }

std::string GraphBuilder::freshName(const std::string& base) { return base + "_" + std::to_string(counter_++); }

Value GraphBuilder::input(const std::string& name, DType t, Shape shape) {
  Tensor x;
  x.name = name;
  x.shape = std::move(shape);
  x.dtype = t;
  x.role = TensorRole::Input;
  g_.tensors.push_back(x);
  TensorId id = static_cast<TensorId>(g_.tensors.size() - 1);
  g_.inputs.push_back(id);
  return {id};
}

int GraphBuilder::symbolIndex(const std::string& name) {
  if (!isSymbolName(name)) throw Error("", "input", "size symbol " + quotedName(name) + " is not an identifier");
  auto it = std::find(g_.symbols.begin(), g_.symbols.end(), name);
  if (it != g_.symbols.end()) return static_cast<int>(it - g_.symbols.begin());
  if (g_.symbols.size() >= static_cast<size_t>(kMaxSymbols))
    throw Error("", "input", "at most " + std::to_string(kMaxSymbols) + " size symbols are supported");
  g_.symbols.push_back(name);
  return static_cast<int>(g_.symbols.size() - 1);
}

int64_t GraphBuilder::symbolSize(const std::string& name) { return symbolProbe(symbolIndex(name)); }

Value GraphBuilder::symbolicInput(const std::string& name, DType t, const std::vector<InputDim>& dims) {
  Shape shape;
  std::vector<SymbolicDim> symbolic;
  for (const InputDim& d : dims) {
    if (d.symbol.empty()) {
      shape.push_back(d.value);
      symbolic.push_back({});
      continue;
    }
    const int s = symbolIndex(d.symbol);
    shape.push_back(symbolProbe(s));
    symbolic.push_back({s, 1});
  }
  const Value v = input(name, t, std::move(shape));
  g_.tensor(v.id).symbolic = std::move(symbolic);
  return v;
}

Value GraphBuilder::constant(Scalar v, Shape shape) {
  Tensor x;
  x.name = freshName("const");
  x.shape = std::move(shape);
  x.dtype = v.type;
  x.role = TensorRole::Constant;
  x.constant = v;
  g_.tensors.push_back(x);
  return {static_cast<TensorId>(g_.tensors.size() - 1)};
}

Value GraphBuilder::addNode(Node n, Shape shape, DType t) {
  Tensor out;
  out.name = freshName(std::string(opName(n.kind)));
  out.shape = std::move(shape);
  out.dtype = t;
  out.producer = static_cast<int32_t>(g_.nodes.size());
  g_.tensors.push_back(out);
  n.output = static_cast<TensorId>(g_.tensors.size() - 1);
  if (n.name.empty()) n.name = g_.tensors.back().name;
  g_.nodes.push_back(std::move(n));
  return {g_.nodes.back().output};
}

Value GraphBuilder::unary(OpKind k, Value x) {
  Node n;
  n.kind = k;
  n.inputs = {x.id};
  DType t = isPredicate(k) || isLogical(k) ? DType::Bool : info(x).dtype;
  if (isComplexPart(k) || (k == OpKind::Abs && isComplex(t))) t = DType::Float32;  // a part, the magnitude
  return addNode(std::move(n), info(x).shape, t);
}

Value GraphBuilder::binary(OpKind k, Value a, Value b) {
  Node n;
  n.kind = k;
  n.inputs = {a.id, b.id};
  auto s = broadcastShapes(info(a).shape, info(b).shape);
  if (!s) throw Error("", std::string(opName(k)), "shapes " + toString(info(a).shape) + " and " + toString(info(b).shape) + " do not broadcast");
  DType t = isComparison(k) || isLogical(k) ? DType::Bool : info(a).dtype;
  if (k == OpKind::Complex) t = DType::Complex64;
  if (k == OpKind::PhiloxNormal) t = DType::Float32;
  return addNode(std::move(n), *s, t);
}

Value GraphBuilder::select(Value c, Value a, Value b) {
  Node n;
  n.kind = OpKind::Select;
  n.inputs = {c.id, a.id, b.id};
  auto s = broadcastShapes(info(c).shape, info(a).shape);
  if (s) s = broadcastShapes(*s, info(b).shape);
  if (!s) throw Error("", "Select", "operand shapes do not broadcast");
  return addNode(std::move(n), *s, info(a).dtype);
}

Value GraphBuilder::cast(Value x, DType t) {
  Node n;
  n.kind = OpKind::Cast;
  n.inputs = {x.id};
  return addNode(std::move(n), info(x).shape, t);
}

Value GraphBuilder::addN(const std::vector<Value>& xs) {
  if (xs.empty()) throw Error("", "AddN", "needs at least one input");
  Node n;
  n.kind = OpKind::AddN;
  Shape s = info(xs[0]).shape;
  for (Value v : xs) {
    n.inputs.push_back(v.id);
    auto b = broadcastShapes(s, info(v).shape);
    if (!b) throw Error("", "AddN", "operand shapes do not broadcast");
    s = *b;
  }
  return addNode(std::move(n), s, info(xs[0]).dtype);
}

Value GraphBuilder::broadcastTo(Value x, Shape shape) {
  Node n;
  n.kind = OpKind::BroadcastTo;
  n.inputs = {x.id};
  return addNode(std::move(n), std::move(shape), info(x).dtype);
}

Value GraphBuilder::reshape(Value x, Shape shape) {
  Node n;
  n.kind = OpKind::Reshape;
  n.inputs = {x.id};
  return addNode(std::move(n), std::move(shape), info(x).dtype);
}

Value GraphBuilder::window(Value x, Shape shape, std::vector<int64_t> begin, std::vector<int64_t> steps) {
  Node n;
  n.kind = OpKind::Window;
  n.inputs = {x.id};
  n.begin = std::move(begin);
  n.steps = std::move(steps);
  return addNode(std::move(n), std::move(shape), info(x).dtype);
}

Value GraphBuilder::gather(Value params, Value indices, int64_t axis) {
  const Tensor p = info(params), i = info(indices);  // copies: addNode may move the graph's tensors
  Node n;
  n.kind = OpKind::Gather;
  n.inputs = {params.id, indices.id};
  n.axes = {axis};
  Shape shape;
  for (size_t d = 0; d < p.shape.size(); ++d) {
    if (static_cast<int64_t>(d) == axis) shape.insert(shape.end(), i.shape.begin(), i.shape.end());
    else shape.push_back(p.shape[d]);
  }
  return addNode(std::move(n), std::move(shape), p.dtype);
}

Value GraphBuilder::scatterAdd(Value values, Value indices, int64_t rows) {
  const Tensor v = info(values), i = info(indices);  // copies: addNode may move the graph's tensors
  Node n;
  n.kind = OpKind::ScatterAdd;
  n.inputs = {values.id, indices.id};
  Shape shape = {rows};
  if (i.shape.size() <= v.shape.size()) shape.insert(shape.end(), v.shape.begin() + static_cast<std::ptrdiff_t>(i.shape.size()), v.shape.end());
  return addNode(std::move(n), std::move(shape), v.dtype);  // build() verifies the shapes
}

Value GraphBuilder::scatterAdd(Value base, Value values, Value indices, int64_t indexedAxes) {
  const Tensor b = info(base);
  Node n;
  n.kind = OpKind::ScatterAdd;
  n.inputs = {values.id, indices.id, base.id};
  n.axes = {indexedAxes};
  return addNode(std::move(n), b.shape, b.dtype);  // build() verifies the shapes
}

Value GraphBuilder::iota(Shape shape, int64_t axis, DType t) {
  Node n;
  n.kind = OpKind::Iota;
  n.axes = {axis};
  return addNode(std::move(n), std::move(shape), t);
}

Value GraphBuilder::standardNormal(Shape shape, int64_t seed, int64_t seed2, DType t) {
  auto int64 = [&](int64_t v) { return constant(Scalar::ofInt(DType::Int64, v)); };
  const Value position = rowMajorPosition<Value>(
      shape, [&](int64_t axis) { return iota(shape, axis); }, [&](Value v, int64_t s) { return mul(v, int64(s)); },
      [&](Value a, Value b) { return add(a, b); }, [&] { return broadcastTo(int64(0), shape); });
  Node n;
  n.kind = OpKind::PhiloxNormal;
  n.inputs = {position.id, int64(philoxKey(seed, seed2)).id};
  return addNode(std::move(n), std::move(shape), t);
}

Value GraphBuilder::transpose(Value x, std::vector<int64_t> perm) {
  Node n;
  n.kind = OpKind::Transpose;
  n.inputs = {x.id};
  Shape s;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(info(x).shape.size())) throw Error("", "Transpose", "perm entry out of range");
    s.push_back(info(x).shape[static_cast<size_t>(p)]);
  }
  n.perm = std::move(perm);
  return addNode(std::move(n), s, info(x).dtype);
}

std::vector<int64_t> normalizeAxes(std::vector<int64_t> axes, size_t rank, const std::string& op) {
  auto r = static_cast<int64_t>(rank);
  if (axes.empty())
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  for (int64_t& a : axes) {
    if (a < -r || a >= r)
      throw Error("", op, "axis " + std::to_string(a) + " out of range for rank " + std::to_string(rank));
    if (a < 0) a += r;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

Value GraphBuilder::reduce(Value x, Reduction r, std::vector<int64_t> axes, bool keepDims,
                           std::optional<DType> outType) {
  Node n;
  n.kind = OpKind::Reduce;
  n.inputs = {x.id};
  n.axes = normalizeAxes(std::move(axes), info(x).shape.size(), "Reduce." + r.name);
  n.keepDims = keepDims;
  Shape s;
  for (size_t d = 0; d < info(x).shape.size(); ++d) {
    bool red = std::find(n.axes.begin(), n.axes.end(), static_cast<int64_t>(d)) != n.axes.end();
    if (!red) s.push_back(info(x).shape[d]);
    else if (keepDims) s.push_back(1);
  }
  DType t = outType.value_or(info(x).dtype);
  n.reduction = std::move(r);
  return addNode(std::move(n), s, t);
}

Value GraphBuilder::scan(Value x, Reduction r, int64_t axis, bool exclusive, bool reverse,
                         std::optional<DType> outType) {
  Node n;
  n.kind = OpKind::Scan;
  n.inputs = {x.id};
  n.axes = normalizeAxes({axis}, info(x).shape.size(), "Scan." + r.name);
  n.exclusive = exclusive;
  n.reverse = reverse;
  n.reduction = std::move(r);
  const Tensor in = info(x);  // a copy: addNode may move the graph's tensors
  return addNode(std::move(n), in.shape, outType.value_or(in.dtype));
}

Value GraphBuilder::reduceSum(Value x, std::vector<int64_t> axes, bool keepDims) {
  return reduce(x, Reduction::sum(info(x).dtype), std::move(axes), keepDims);
}
Value GraphBuilder::reduceMax(Value x, std::vector<int64_t> axes, bool keepDims) {
  return reduce(x, Reduction::max(info(x).dtype), std::move(axes), keepDims);
}

Value GraphBuilder::reduceTuple(std::vector<Value> ins, std::shared_ptr<const TupleReduction> t, int result,
                                std::vector<int64_t> axes, bool keepDims, DType outType) {
  Reduction r;
  r.name = t->name;
  r.tuple = std::move(t);
  r.result = result;
  r.accType = tupleResultType(*r.tuple, result);
  Value v = reduce(ins.at(0), std::move(r), std::move(axes), keepDims, outType);
  Node& n = g_.nodes.at(static_cast<size_t>(g_.tensor(v.id).producer));
  n.inputs.clear();
  for (Value in : ins) n.inputs.push_back(in.id);
  return v;
}

namespace {
int64_t oneAxis(int64_t axis, size_t rank, const std::string& op) {
  if (rank == 0) throw Error("", op, "needs an input of rank 1 or more");
  return normalizeAxes({axis}, rank, op).at(0);
}
}  // namespace

std::vector<Value> GraphBuilder::argExtremum(bool max, bool withValue, const std::string& op, Value x, int64_t axis,
                                             DType index, bool keepDims) {
  const Shape shape = info(x).shape;  // copies: adding nodes may move the tensors
  const DType xt = info(x).dtype;
  const int64_t a = oneAxis(axis, shape.size(), op);
  auto t = argExtremumTuple(max, xt, index, shape[static_cast<size_t>(a)]);
  const Value j = iota(shape, a, t->inputs[1]);
  std::vector<Value> results = {reduceTuple({x, j}, t, 0, {a}, keepDims, index)};
  if (withValue) results.push_back(reduceTuple({x, j}, t, 1, {a}, keepDims, xt));
  return results;
}

std::pair<Value, Value> GraphBuilder::argmaxWithValue(Value x, int64_t axis, DType index, bool keepDims) {
  std::vector<Value> r = argExtremum(true, true, "ArgMaxWithValue", x, axis, index, keepDims);
  return {r[0], r[1]};
}

std::pair<Value, Value> GraphBuilder::argminWithValue(Value x, int64_t axis, DType index, bool keepDims) {
  std::vector<Value> r = argExtremum(false, true, "ArgMinWithValue", x, axis, index, keepDims);
  return {r[0], r[1]};
}

Value GraphBuilder::argmax(Value x, int64_t axis, DType index, bool keepDims) {
  return argExtremum(true, false, "Argmax", x, axis, index, keepDims)[0];
}

Value GraphBuilder::argmin(Value x, int64_t axis, DType index, bool keepDims) {
  return argExtremum(false, false, "Argmin", x, axis, index, keepDims)[0];
}

std::pair<Value, Value> GraphBuilder::varMean(Value x, std::vector<int64_t> axes, int64_t correction, bool keepDims) {
  DType xt = info(x).dtype;
  if (!isFloat(xt)) throw Error("", "VarMean", "takes a float input, got " + std::string(dtypeName(xt)));
  auto t = welfordTuple(xt, correction);
  return {reduceTuple({x}, t, 0, axes, keepDims, xt), reduceTuple({x}, t, 1, axes, keepDims, xt)};
}

Value GraphBuilder::logSumExp(Value x, std::vector<int64_t> axes, bool keepDims) {
  DType xt = info(x).dtype;
  if (!isFloat(xt)) throw Error("", "LogSumExp", "takes a float input, got " + std::string(dtypeName(xt)));
  return reduceTuple({x}, logSumExpTuple(xt), 0, std::move(axes), keepDims, xt);
}

void GraphBuilder::output(Value v) { g_.outputs.push_back({v.id, std::nullopt}); }
void GraphBuilder::outputInto(Value v, Value in) { g_.outputs.push_back({v.id, in.id}); }

Graph GraphBuilder::build() const {
  Graph g = g_;
  inferSymbolicDims(g);
  g.verify();
  return g;
}

}  // namespace polyred
