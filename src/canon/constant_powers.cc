#include "canon/constant_powers.h"

#include <optional>

#include "canon/node_emitter.h"

namespace polyred {

namespace {

// The exponent of a Pow node when it is a scalar constant of a special-cased value.
std::optional<double> specialExponent(const Graph& g, const Node& n) {
  if (n.kind != OpKind::Pow || n.inputs.size() != 2) return std::nullopt;
  const Tensor& base = g.tensor(n.inputs[0]);
  const Tensor& e = g.tensor(n.inputs[1]);
  if (e.role != TensorRole::Constant || !e.constant || g.tensor(n.output).shape != base.shape) return std::nullopt;
  if (!isFloat(base.dtype) && !isInteger(base.dtype)) return std::nullopt;
  const double c = e.constant->castTo(base.dtype).asDouble();
  const bool integral = c == 0 || c == 1 || c == 2 || c == 3;
  const bool floatOnly = c == -1 || c == -2 || c == 0.5 || c == -0.5;
  if (integral || (floatOnly && isFloat(base.dtype))) return c;
  return std::nullopt;
}

void expand(Graph& out, const Node& n, double c) {
  const TensorId x = n.inputs[0];
  const Tensor& base = out.tensor(x);
  const Shape shape = base.shape;
  const DType t = base.dtype;
  NodeEmitter e(out, n);
  auto square = [&] { return e.op(OpKind::Mul, {x, x}, shape, t, "square"); };
  if (c == 0) {
    const Scalar one = isFloat(t) ? Scalar::ofFloat(t, 1) : Scalar::ofInt(t, 1);
    e.op(OpKind::BroadcastTo, {e.constant(one, "one")}, shape, t, "ones");
  } else if (c == 1) {
    e.op(OpKind::Reshape, {x}, shape, t, "copy");
  } else if (c == 2) {
    square();
  } else if (c == 3) {
    e.op(OpKind::Mul, {square(), x}, shape, t, "cube");
  } else if (c == -1) {
    e.op(OpKind::Reciprocal, {x}, shape, t, "reciprocal");
  } else if (c == -2) {
    e.op(OpKind::Reciprocal, {square()}, shape, t, "reciprocal_square");
  } else if (c == 0.5) {
    e.op(OpKind::Sqrt, {x}, shape, t, "sqrt");
  } else {
    e.op(OpKind::Rsqrt, {x}, shape, t, "rsqrt");
  }
  e.finish();
}

}  // namespace

Graph strengthReduceConstantPowers(const Graph& g) {
  Graph out = g;
  out.nodes.clear();
  bool changed = false;
  for (const Node& n : g.nodes) {
    if (const std::optional<double> c = specialExponent(g, n)) {
      expand(out, n, *c);
      changed = true;
      continue;
    }
    out.nodes.push_back(n);
  }
  if (!changed) return g;
  renumberProducers(out);
  return out;
}

}  // namespace polyred
