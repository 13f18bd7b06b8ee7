#include "canon/node_emitter.h"

namespace polyred {

TensorId NodeEmitter::emit(Node n, const Shape& shape, DType t, const std::string& what) {
  Tensor out;
  out.name = g_.tensors.at(static_cast<size_t>(target_)).name + "_" + what;
  out.shape = shape;
  out.dtype = t;
  g_.tensors.push_back(out);
  n.output = static_cast<TensorId>(g_.tensors.size() - 1);
  n.name = name_ + " (" + what + ")";
  g_.nodes.push_back(std::move(n));
  return g_.nodes.back().output;
}

TensorId NodeEmitter::op(OpKind k, std::vector<TensorId> inputs, const Shape& shape, DType t, const std::string& what) {
  Node n;
  n.kind = k;
  n.inputs = std::move(inputs);
  return emit(std::move(n), shape, t, what);
}

TensorId NodeEmitter::reduce(TensorId x, Reduction r, std::vector<int64_t> axes, bool keepDims, const Shape& shape,
                             const std::string& what) {
  Node n;
  n.kind = OpKind::Reduce;
  n.inputs = {x};
  n.axes = std::move(axes);
  n.keepDims = keepDims;
  const DType t = g_.tensor(x).dtype;
  n.reduction = std::move(r);
  return emit(std::move(n), shape, t, what);
}

TensorId NodeEmitter::iota(const Shape& shape, int64_t axis, DType t, const std::string& what) {
  Node n;
  n.kind = OpKind::Iota;
  n.axes = {axis};
  return emit(std::move(n), shape, t, what);
}

TensorId NodeEmitter::constant(Scalar v, const std::string& what) {
  Tensor c;
  c.name = g_.tensors.at(static_cast<size_t>(target_)).name + "_" + what;
  c.dtype = v.type;
  c.role = TensorRole::Constant;
  c.constant = v;
  g_.tensors.push_back(c);
  return static_cast<TensorId>(g_.tensors.size() - 1);
}

void NodeEmitter::finish() {
  Node& last = g_.nodes.back();
  g_.tensors.pop_back();
  last.output = target_;
}

void renumberProducers(Graph& g) {
  for (Tensor& t : g.tensors) t.producer = -1;
  for (size_t k = 0; k < g.nodes.size(); ++k) g.tensor(g.nodes[k].output).producer = static_cast<int32_t>(k);
  g.verify();
}

}  // namespace polyred
