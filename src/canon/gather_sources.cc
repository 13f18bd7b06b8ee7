#include "canon/gather_sources.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "canon/node_emitter.h"
#include "support/error.h"

namespace polyred {

namespace {

// One Gather's rewrite: params of rank r gathered along axis a by `indices`.
class PushedGather {
 public:
  PushedGather(Graph& out, const Node& gather, const Graph& in)
      : out_(out), in_(in), gather_(gather), e_(out, gather), indices_(gather.inputs.at(1)),
        r_(static_cast<int64_t>(in.tensor(gather.inputs[0]).shape.size())), a_(gather.axes.at(0)) {}

  void run() {
    const Tensor& params = in_.tensor(gather_.inputs[0]);
    const TensorId value = gathered(gather_.inputs[0]);
    const TensorId zero = e_.constant(Scalar::convert(0.0, params.dtype), "zero");
    e_.op(OpKind::Select, {inRange(params.shape[static_cast<size_t>(a_)]), value, zero}, in_.tensor(gather_.output).shape,
          params.dtype, "gathered");
    e_.finish();
  }

 private:
  const Shape& indexShape() const { return in_.tensor(indices_).shape; }

  // Whether the indices fall inside [0, extent), shaped to broadcast over the output:
  // 1s before and after the index's own axes.
  TensorId inRange(int64_t extent) {
    const DType t = in_.tensor(indices_).dtype;
    TensorId ok = e_.op(OpKind::GreaterEqual, {indices_, e_.constant(Scalar::convert(int64_t{0}, t), "first")},
                        indexShape(), DType::Bool, "not_negative");
    if (t != DType::Int32 || extent <= std::numeric_limits<int32_t>::max()) {  // else every int32 index is below
      TensorId below = e_.op(OpKind::Less, {indices_, e_.constant(Scalar::convert(extent, t), "extent")}, indexShape(),
                             DType::Bool, "below_extent");
      ok = e_.op(OpKind::LogicalAnd, {ok, below}, indexShape(), DType::Bool, "in_range");
    }
    Shape s(static_cast<size_t>(a_), 1);
    s.insert(s.end(), indexShape().begin(), indexShape().end());
    s.resize(s.size() + static_cast<size_t>(r_ - a_ - 1), 1);
    return reshaped(ok, s, "in_range");
  }

  TensorId reshaped(TensorId x, const Shape& s, const std::string& what) {
    const Tensor& t = out_.tensor(x);
    return t.shape == s ? x : e_.op(OpKind::Reshape, {x}, s, t.dtype, named(what));
  }

  // A name for the next new tensor (NodeEmitter prefixes the Gather's output name).
  std::string named(const std::string& what) { return what + std::to_string(made_++); }

  // x's shape with the index's axes in place of the gathered one (x right-aligned
  // with the params; its axis a - (r - rank)).
  Shape gatheredShape(const Shape& x, const Shape& put) const {
    const int64_t at = a_ - (r_ - static_cast<int64_t>(x.size()));
    Shape s(x.begin(), x.begin() + at);
    s.insert(s.end(), put.begin(), put.end());
    s.insert(s.end(), x.begin() + at + 1, x.end());
    return s;
  }

  // A tensor equal to Gather(x) wherever the index is in range (elsewhere the caller's
  // Select decides): x is the params or an operand of what computes them, broadcast to
  // them right-aligned.
  TensorId gathered(TensorId x) {
    if (auto done = memo_.find(x); done != memo_.end()) return done->second;
    return memo_[x] = gatheredOnce(x);
  }

  TensorId gatheredOnce(TensorId x) {
    const Tensor& t = in_.tensor(x);
    if (t.role == TensorRole::Constant) return e_.constant(*t.constant, named("constant"));  // the same everywhere
    const int64_t at = a_ - (r_ - static_cast<int64_t>(t.shape.size()));
    if (at < 0 || t.shape[static_cast<size_t>(at)] == 1) {  // broadcast along the axis: over the index's too
      if (at < 0) return x;
      return reshaped(x, gatheredShape(t.shape, Shape(indexShape().size(), 1)), "broadcast");
    }
    const Shape shape = gatheredShape(t.shape, indexShape());
    Node g = gatherOf(x);
    if (in_.tensor(gatherSource(in_, g)).role == TensorRole::Input) {  // the kernels read it (a Reshape chain too)
      g.axes = {at};
      return e_.emit(std::move(g), shape, t.dtype, named("operand"));
    }
    const Node* p = in_.producer(x);
    if (p && p->kind == OpKind::BroadcastTo)
      return e_.op(OpKind::BroadcastTo, {gathered(p->inputs[0])}, shape, t.dtype, named("broadcast"));
    if (!p || !isElementwise(p->kind) || p->kind == OpKind::Assign)
      throw UnsupportedError("", gather_.name,
                             "Gather of params computed by " + (p ? p->name + " (" + std::string(opName(p->kind)) + ")"
                                                                  : std::string("nothing")) +
                                 ": only elementwise ops (and BroadcastTo) of graph inputs are pushed into a gather");
    Node op = *p;
    for (TensorId& operand : op.inputs) operand = gathered(operand);
    return e_.emit(std::move(op), shape, t.dtype, named("operand"));
  }

  // A Gather node reading x by the same indices (gatherSource walks up its params'
  // Reshape chain; the operand gathers are emitted from it).
  Node gatherOf(TensorId x) const {
    Node g = gather_;
    g.inputs = {x, indices_};
    return g;
  }

  Graph& out_;
  const Graph& in_;
  const Node& gather_;
  NodeEmitter e_;
  const TensorId indices_;
  const int64_t r_, a_;
  std::map<TensorId, TensorId> memo_;
  int made_ = 0;
};

// Drops the nodes whose results nothing reads any more (what computed the params).
void dropUnread(Graph& g) {
  std::vector<bool> live(g.tensors.size(), false);
  for (const Output& o : g.outputs) live[static_cast<size_t>(o.tensor)] = true;
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t k = g.nodes.size(); k-- > 0;) {
    if (!live[static_cast<size_t>(g.nodes[k].output)]) continue;
    keep[k] = true;
    for (TensorId in : g.nodes[k].inputs) live[static_cast<size_t>(in)] = true;
  }
  std::vector<Node> kept;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (keep[k]) kept.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(kept);
}

bool readsComputedParams(const Graph& g, const Node& n) {
  return n.kind == OpKind::Gather && g.tensor(gatherSource(g, n)).role != TensorRole::Input;
}

// Whether Reshape node `r` can sink below the elementwise op computing its input:
// every operand of that op has the op's shape or is a constant, so that
// Reshape(f(a, b)) == f(Reshape(a), Reshape(b)).
bool sinks(const Graph& g, const Node& r) {
  const Node* p = g.producer(r.inputs[0]);
  if (r.kind != OpKind::Reshape || !p || !isElementwise(p->kind) || p->kind == OpKind::Assign) return false;
  for (TensorId operand : p->inputs)
    if (g.tensor(operand).role != TensorRole::Constant && g.tensor(operand).shape != g.tensor(p->output).shape)
      return false;
  return true;
}

// The Reshapes on the way from Gathers' params to the graph inputs (through elementwise
// ops, BroadcastTo and other Reshapes) that can sink (GatherNd reads its params through
// a Reshape that merges axes).
std::vector<bool> reshapesToSink(const Graph& g) {
  std::vector<bool> sink(g.nodes.size(), false), seen(g.tensors.size(), false);
  std::vector<TensorId> todo;
  for (const Node& n : g.nodes)
    if (readsComputedParams(g, n)) todo.push_back(n.inputs[0]);
  while (!todo.empty()) {
    const TensorId t = todo.back();
    todo.pop_back();
    if (seen[static_cast<size_t>(t)]) continue;
    seen[static_cast<size_t>(t)] = true;
    const Node* p = g.producer(t);
    if (!p) continue;
    if (p->kind == OpKind::Reshape && sinks(g, *p)) sink[static_cast<size_t>(g.tensor(t).producer)] = true;
    if (p->kind == OpKind::Reshape || p->kind == OpKind::BroadcastTo || (isElementwise(p->kind) && p->kind != OpKind::Assign))
      todo.insert(todo.end(), p->inputs.begin(), p->inputs.end());
  }
  return sink;
}

// One level of sinking: each marked Reshape becomes the elementwise op over its
// operands reshaped (constants kept); the new Reshapes may sink in the next round.
Graph sinkReshapes(const Graph& g, const std::vector<bool>& sink) {
  Graph out = g;
  out.nodes.clear();
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& r = g.nodes[k];
    if (!sink[k]) {
      out.nodes.push_back(r);
      continue;
    }
    const Tensor& result = g.tensor(r.output);
    Node op = *g.producer(r.inputs[0]);
    NodeEmitter e(out, r);
    int made = 0;
    for (TensorId& operand : op.inputs)
      if (g.tensor(operand).role != TensorRole::Constant)
        operand = e.op(OpKind::Reshape, {operand}, result.shape, g.tensor(operand).dtype, "sunk" + std::to_string(made++));
    e.emit(std::move(op), result.shape, result.dtype, "sunk_op");
    e.finish();
  }
  renumberProducers(out);
  return out;
}

}  // namespace

Graph gathersFromInputs(const Graph& source) {
  bool any = false;
  for (const Node& n : source.nodes) any = any || readsComputedParams(source, n);
  if (!any) return source;
  Graph g = source;
  for (std::vector<bool> sink = reshapesToSink(g); std::find(sink.begin(), sink.end(), true) != sink.end();
       sink = reshapesToSink(g))
    g = sinkReshapes(g, sink);
  Graph out = g;
  out.nodes.clear();
  for (const Node& n : g.nodes) {
    if (readsComputedParams(g, n)) PushedGather(out, n, g).run();
    else out.nodes.push_back(n);
  }
  dropUnread(out);
  renumberProducers(out);
  return out;
}

}  // namespace polyred
