#include "canon/logsumexp_rows.h"

#include "canon/flatten.h"
#include "canon/node_emitter.h"
#include "ir/tuple_reduction.h"

namespace polyred {

namespace {

// A tuple reduction's meaning without its names: input and field types, identities,
// lifts, combines and finalizes.
std::string structureOf(const TupleReduction& t) {
  std::string s = t.commutative ? "commutative" : "ordered";
  for (DType d : t.inputs) s += " " + std::string(dtypeName(d));
  for (const TupleField& f : t.fields)
    s += "; " + std::string(dtypeName(f.dtype)) + " " + f.identity.toString() + " " + toString(*f.lift) + " " +
         toString(*f.combine);
  for (const TupleResult& r : t.results) s += "; " + toString(*r.finalize);
  return s;
}

// Whether node n is a logsumexp reduction: the tuple logSumExpTuple builds (or a
// composite file's declaration of it), compared by structure, not by name (a user's
// tuple may be called logsumexp and mean something else).
bool isLogSumExp(const Node& n) {
  if (n.kind != OpKind::Reduce || !n.reduction || !n.reduction->isTuple() || n.inputs.size() != 1) return false;
  const TupleReduction& t = *n.reduction->tuple;
  return t.inputs.size() == 1 && isFloat(t.inputs[0]) && structureOf(t) == structureOf(*logSumExpTuple(t.inputs[0]));
}

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

}  // namespace

Graph splitLogSumExpRows(const Graph& g, const RowsFitOneBlock& rowsFitOneBlock) {
  Graph out = g;
  out.nodes.clear();
  bool changed = false;
  for (const Node& n : g.nodes) {
    if (isLogSumExp(n)) {
      const CanonicalSpace space = canonicalSpace(g.tensor(n.inputs[0]).shape, n.axes);
      if (space.form == CanonicalForm::XReduce && rowsFitOneBlock(space)) {
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
