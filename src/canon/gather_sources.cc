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

// The shape of Gather(params, index) along `axis`: params' axes with the index's in
// place of the gathered one.
Shape gatheredShapeOf(const Shape& params, int64_t axis, const Shape& index) {
  Shape s(params.begin(), params.begin() + axis);
  s.insert(s.end(), index.begin(), index.end());
  s.insert(s.end(), params.begin() + axis + 1, params.end());
  return s;
}

// Whether a gather along axis `at` of an inner gather's result picks among that
// gather's own indices (an axis its index brought in).
bool composes(const Graph& g, const Node& inner, int64_t at) {
  const int64_t from = inner.axes.at(0), r = static_cast<int64_t>(g.tensor(inner.inputs[1]).shape.size());
  return at >= from && at < from + r;
}

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
    return gatheredShapeOf(x, a_ - (r_ - static_cast<int64_t>(x.size())), put);
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
    const Node* p = in_.producer(x);
    if (p && p->kind == OpKind::Gather && composes(in_, *p, at)) return composed(*p, at, shape, t.dtype);
    if (p && p->kind == OpKind::BroadcastTo)
      return e_.op(OpKind::BroadcastTo, {gathered(p->inputs[0])}, shape, t.dtype, named("broadcast"));
    if (p && isElementwise(p->kind) && p->kind != OpKind::Assign) {
      Node op = *p;
      for (TensorId& operand : op.inputs) operand = gathered(operand);
      return e_.emit(std::move(op), shape, t.dtype, named("operand"));
    }
    // Anything else keeps a gather of its own: the next round moves it below a
    // Transpose or a Window or sinks its Reshape, else a kernel loads x (materialized
    // if computed).
    Node g = gatherOf(x);
    g.axes = {at};
    return e_.emit(std::move(g), shape, t.dtype, named("operand"));
  }

  // Gather(Gather(src, i1, a1), i2, a1 + c) == Gather(src, Gather(i1, i2, c), a1) where
  // i2 is in range (run() masks the rest): the indices are gathered instead. An i1
  // value outside src's axis still gives 0.
  TensorId composed(const Node& inner, int64_t at, const Shape& shape, DType t) {
    const Tensor& innerIndex = in_.tensor(inner.inputs[1]);
    const int64_t c = at - inner.axes.at(0);
    Node pick = gather_;
    pick.inputs = {inner.inputs[1], indices_};
    pick.axes = {c};
    const TensorId indices =
        e_.emit(std::move(pick), gatheredShapeOf(innerIndex.shape, c, indexShape()), innerIndex.dtype, named("indices"));
    Node g = inner;
    g.inputs = {inner.inputs[0], indices};
    return e_.emit(std::move(g), shape, t, named("composed"));
  }

  // A Gather node reading x by the same indices (the caller sets its axis in x's frame).
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

// Gather(Transpose(src, perm), ids, a) as Transpose(Gather(src, ids, perm[a]), order):
// the gather moves to the source's axis, and the Transpose puts the gathered tensor's
// axes (src's before and after perm[a], with the index's axes between) back in the
// order of the Transpose's own, the index's axes where axis a was.
void gatherBelowTranspose(Graph& out, const Node& gather, const Graph& in) {
  const Node& transpose = *in.producer(gather.inputs[0]);
  const Tensor& src = in.tensor(transpose.inputs[0]);
  const Tensor& result = in.tensor(gather.output);
  const int64_t a = gather.axes.at(0), b = transpose.perm.at(static_cast<size_t>(a));
  const auto r = static_cast<int64_t>(in.tensor(gather.inputs[1]).shape.size());
  // Where src's axis d (d != b) lands in Gather(src, ids, b).
  auto landed = [&](int64_t d) { return d < b ? d : d + r - 1; };
  const auto rank = static_cast<int64_t>(transpose.perm.size());
  std::vector<int64_t> order;
  for (int64_t k = 0; k < rank; ++k) {
    if (k != a) {
      order.push_back(landed(transpose.perm[static_cast<size_t>(k)]));
      continue;
    }
    for (int64_t q = 0; q < r; ++q) order.push_back(b + q);
  }
  NodeEmitter e(out, gather);
  Node g = gather;
  g.inputs = {transpose.inputs[0], gather.inputs[1]};
  g.axes = {b};
  const TensorId moved =
      e.emit(std::move(g), gatheredShapeOf(src.shape, b, in.tensor(gather.inputs[1]).shape), src.dtype, "below_transpose");
  Node t = transpose;
  t.inputs = {moved};
  t.perm = order;
  e.emit(std::move(t), result.shape, result.dtype, "transposed");
  e.finish();
}

// Gather(Window(src), ids, a) as Window'(Gather(src, picked, a)): along axis a the
// window takes src's element (begin + step * k) mod extent at its own k, so the gather
// picks that element where 0 <= ids < the window's extent and -1 (Gather's 0) elsewhere;
// Window' is the same window on the other axes and takes the index's axes whole.
void gatherBelowWindow(Graph& out, const Node& gather, const Graph& in) {
  const Node& window = *in.producer(gather.inputs[0]);
  const Tensor& src = in.tensor(window.inputs[0]);
  const Tensor& ids = in.tensor(gather.inputs[1]);
  const Tensor& result = in.tensor(gather.output);
  const auto a = static_cast<size_t>(gather.axes.at(0));
  const int64_t step = window.steps.empty() ? 1 : window.steps[a];
  NodeEmitter e(out, gather);
  auto constant = [&](int64_t v, const std::string& what) { return e.constant(Scalar::convert(v, ids.dtype), what); };
  const TensorId at = e.op(OpKind::Add, {e.op(OpKind::Mul, {gather.inputs[1], constant(step, "step")}, ids.shape, ids.dtype, "strided"),
                                         constant(window.begin[a], "begin")},
                           ids.shape, ids.dtype, "shifted");
  const TensorId wrapped = e.op(OpKind::FloorMod, {at, constant(src.shape[a], "extent")}, ids.shape, ids.dtype, "wrapped");
  const TensorId inside = e.op(
      OpKind::LogicalAnd,
      {e.op(OpKind::GreaterEqual, {gather.inputs[1], constant(0, "first")}, ids.shape, DType::Bool, "not_negative"),
       e.op(OpKind::Less, {gather.inputs[1], constant(in.tensor(gather.inputs[0]).shape[a], "window_extent")}, ids.shape,
            DType::Bool, "below_extent")},
      ids.shape, DType::Bool, "in_window");
  const TensorId picked = e.op(OpKind::Select, {inside, wrapped, constant(-1, "outside")}, ids.shape, ids.dtype, "picked");
  Node g = gather;
  g.inputs = {window.inputs[0], picked};
  const TensorId moved =
      e.emit(std::move(g), gatheredShapeOf(src.shape, static_cast<int64_t>(a), ids.shape), src.dtype, "below_window");
  Node w = window;
  w.inputs = {moved};
  w.begin.clear();
  w.steps.clear();
  for (size_t d = 0; d < src.shape.size(); ++d) {
    if (d != a) {
      w.begin.push_back(window.begin[d]);
      w.steps.push_back(window.steps.empty() ? 1 : window.steps[d]);
      continue;
    }
    w.begin.insert(w.begin.end(), ids.shape.size(), 0);
    w.steps.insert(w.steps.end(), ids.shape.size(), 1);
  }
  e.emit(std::move(w), result.shape, result.dtype, "windowed");
  e.finish();
}

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

// Whether a round moves Gather node `n` towards the graph inputs: its params are
// computed by an elementwise op, a BroadcastTo, a Transpose, a gather along the inner
// index's axes, a Window, or a Reshape chain that sinks below an elementwise op. Other
// params -- graph inputs, reduction and scan results, gathers along other axes -- the
// gather's kernel loads (canon/flatten, temporaryGathered: computed ones from a
// temporary an earlier kernel writes).
bool movable(const Graph& g, const Node& n) {
  if (n.kind != OpKind::Gather) return false;
  const Node* p = g.producer(n.inputs[0]);
  if (!p) return false;
  if (p->kind == OpKind::Reshape) {
    while (const Node* below = g.producer(p->inputs[0])) {
      if (below->kind != OpKind::Reshape) break;
      p = below;
    }
    return sinks(g, *p);
  }
  if (p->kind == OpKind::Gather) return composes(g, *p, n.axes.at(0));
  return p->kind == OpKind::Transpose || p->kind == OpKind::Window || p->kind == OpKind::BroadcastTo ||
         (isElementwise(p->kind) && p->kind != OpKind::Assign);
}

// The Reshapes on the way from Gathers' params to the graph inputs (through elementwise
// ops, BroadcastTo and other Reshapes) that can sink (GatherNd reads its params through
// a Reshape that merges axes).
std::vector<bool> reshapesToSink(const Graph& g) {
  std::vector<bool> sink(g.nodes.size(), false), seen(g.tensors.size(), false);
  std::vector<TensorId> todo;
  for (const Node& n : g.nodes)
    if (movable(g, n)) todo.push_back(n.inputs[0]);
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

bool anyMovable(const Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return movable(g, n); });
}

// A gather of what no kernel can read as a value: an in-place Assign's result. (A
// ScatterAdd's result is materialized into a temporary, canon/scatter_fallback.)
void refuseUnreadable(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.kind != OpKind::Gather) continue;
    const Node* p = g.producer(gatherSource(g, n));
    if (p && p->kind == OpKind::Assign)
      throw UnsupportedError(g.sourceFile, n.name,
                             "Gather of params computed by " + p->name + " (" + std::string(opName(p->kind)) +
                                 "): a gather cannot read an in-place write's result");
  }
}

// One round: the Reshapes on the way sink, then every movable gather moves below its
// Transpose or Window or into the ops computing its params (an operand those ops do not
// let it into keeps a gather of its own, for the next round).
Graph pushOneLevel(const Graph& source) {
  Graph g = source;
  for (std::vector<bool> sink = reshapesToSink(g); std::find(sink.begin(), sink.end(), true) != sink.end();
       sink = reshapesToSink(g))
    g = sinkReshapes(g, sink);
  Graph out = g;
  out.nodes.clear();
  for (const Node& n : g.nodes) {
    if (!movable(g, n)) out.nodes.push_back(n);
    else if (const Node* p = g.producer(n.inputs[0]); p && p->kind == OpKind::Transpose) gatherBelowTranspose(out, n, g);
    else if (p && p->kind == OpKind::Window) gatherBelowWindow(out, n, g);
    else PushedGather(out, n, g).run();
  }
  dropUnread(out);
  renumberProducers(out);
  return out;
}

}  // namespace

Graph gathersFromInputs(const Graph& source) {
  Graph g = source;
  // Each round moves every such gather at least one op closer to the graph inputs.
  for (size_t round = 0; anyMovable(g); ++round) {
    POLYRED_CHECK(round <= source.nodes.size(), source.name << ": gathers of computed params did not settle");
    g = pushOneLevel(g);
  }
  refuseUnreadable(g);
  return g;
}

}  // namespace polyred
