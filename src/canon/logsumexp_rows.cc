#include "canon/logsumexp_rows.h"

#include <algorithm>

#include "canon/flatten.h"
#include "canon/node_emitter.h"
#include "ir/tuple_reduction.h"

namespace polyred {

bool isLogSumExp(const Node& n) {
  return n.kind == OpKind::Reduce && n.reduction && n.reduction->isTuple() && n.inputs.size() == 1 &&
         isLogSumExpTuple(*n.reduction->tuple);
}

namespace {

void expand(Graph& out, const Node& n, const Graph& in) {
  const Tensor& x = in.tensor(n.inputs[0]);
  const Tensor& result = in.tensor(n.output);
  const DType f = x.dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  Shape kept = x.shape;  // the reduced axes kept as 1: broadcasts against x
  for (int64_t a : n.axes) kept[static_cast<size_t>(a)] = 1;
  NodeEmitter e(out, n);
  TensorId xf = n.inputs[0];
  if (x.dtype != f) xf = e.op(OpKind::Cast, {xf}, x.shape, f, "in_f32");
  TensorId m = e.reduce(xf, Reduction::max(f), n.axes, true, kept, "max");
  // An infinite max shifts by 0: x - inf would give NaN for a row of -inf (its
  // logsumexp is -inf) and for a row holding +inf (its logsumexp is +inf).
  TensorId infinite = e.op(OpKind::IsInf, {m}, kept, DType::Bool, "max_is_inf");
  TensorId z = e.op(OpKind::Select, {infinite, e.constant(Scalar::ofFloat(f, 0), "zero"), m}, kept, f, "shift");
  TensorId d = e.op(OpKind::Sub, {xf, z}, x.shape, f, "shifted");
  TensorId ex = e.op(OpKind::Exp, {d}, x.shape, f, "exp");
  TensorId s = e.reduce(ex, Reduction::sum(f), n.axes, true, kept, "sum");
  TensorId l = e.op(OpKind::Log, {s}, kept, f, "log");
  TensorId r = e.op(OpKind::Add, {l, z}, kept, f, "lse");
  if (result.dtype != f) r = e.op(OpKind::Cast, {r}, kept, result.dtype, "cast");
  if (result.shape != kept) e.op(OpKind::Reshape, {r}, result.shape, result.dtype, "reshape");
  e.finish();
}

// Whether node n's result, through the ops that read it, reaches an op with more
// elements than the result: a broadcast back over the reduced axes (exp(x - lse)), a
// pass over the rows the reduction read.
bool feedsRowPass(const Graph& g, const Node& n) {
  const int64_t reduced = numElements(g.tensor(n.output).shape);
  std::vector<bool> reached(g.tensors.size(), false);
  reached[static_cast<size_t>(n.output)] = true;
  for (const Node& m : g.nodes) {  // topological order: producers before their readers
    if (std::none_of(m.inputs.begin(), m.inputs.end(), [&](TensorId t) { return reached[static_cast<size_t>(t)]; }))
      continue;
    if (numElements(g.tensor(m.output).shape) > reduced) return true;
    reached[static_cast<size_t>(m.output)] = true;
  }
  return false;
}

bool splits(const Graph& g, const Node& n, const CanonicalSpace& space, SplitLogSumExpRows which) {
  switch (which) {
    case SplitLogSumExpRows::Always: return true;
    case SplitLogSumExpRows::Never: return false;
    case SplitLogSumExpRows::Policy: return space.N <= kLongestSplitLogSumExpRow || feedsRowPass(g, n);
  }
  return true;
}

}  // namespace

Graph splitLogSumExpRows(const Graph& g, const RowsFitOneBlock& rowsFitOneBlock, SplitLogSumExpRows which) {
  Graph out = g;
  out.nodes.clear();
  bool changed = false;
  for (const Node& n : g.nodes) {
    if (isLogSumExp(n)) {
      const CanonicalSpace space = canonicalSpace(g.tensor(n.inputs[0]).shape, n.axes);
      if (space.form == CanonicalForm::XReduce && rowsFitOneBlock(space) && splits(g, n, space, which)) {
        expand(out, n, g);
        changed = true;
        continue;
      }
    }
    out.nodes.push_back(n);
  }
  if (!changed) return g;
  renumberProducers(out);
  return out;
}

}  // namespace polyred
