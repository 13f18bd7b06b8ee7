#include "canon/scatter_fallback.h"

#include <algorithm>

#include "canon/flatten.h"
#include "canon/node_emitter.h"
#include "ir/reduction.h"
#include "support/error.h"
#include "support/int_math.h"

namespace polyred {

namespace {

bool reads(const Node& n, TensorId t) { return std::find(n.inputs.begin(), n.inputs.end(), t) != n.inputs.end(); }

bool readByAnotherNode(const Graph& g, TensorId t) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return reads(n, t); });
}

// Whether ScatterAdd `n` can add straight into its base's buffer (no copy, no
// temporary): its base is a graph input that the graph overwrites with the result
// (Assign, an in-place output), and nothing else reads the base, the result or the
// Assign's output -- so nothing observes the buffer while the adds land.
bool addsInPlace(const Graph& g, const Node& n) {
  if (n.inputs.size() < 3 || g.tensor(n.inputs[2]).role != TensorRole::Input) return false;
  const TensorId base = n.inputs[2];
  if (n.inputs[0] == base || n.inputs[1] == base) return false;
  std::vector<TensorId> assigned;
  for (const Node& m : g.nodes) {
    if (&m == &n || (!reads(m, base) && !reads(m, n.output))) continue;
    if (m.kind != OpKind::Assign || m.inputs[0] != base || m.inputs[1] != n.output) return false;
    assigned.push_back(m.output);
  }
  for (TensorId a : assigned)
    if (readByAnotherNode(g, a)) return false;
  bool written = false;
  for (const Output& o : g.outputs) {
    if (o.tensor == base && o.aliasOfInput != base) return false;  // the input itself, as it was
    if (valueTensor(g, o.tensor) != n.output) continue;
    if (o.aliasOfInput != base) return false;  // the result wanted in a buffer of its own too
    written = true;
  }
  return written;
}

// out[s, rest] = base[s, rest] + sum over c.. of (indices[c..] == s ? values[c.., rest] : 0),
// s running over the indexed axes merged.
void expandMaskedSum(Graph& out, const Node& n, const Graph& in, const std::string& why) {
  const Tensor values = in.tensor(n.inputs[0]), indices = in.tensor(n.inputs[1]), result = in.tensor(n.output);
  const ScatterRows rows = scatterRows(in, n);
  Shape merged = {rows.rows};
  merged.insert(merged.end(), result.shape.begin() + rows.indexedAxes, result.shape.end());
  Shape wide = {rows.rows}, spreadIndices = {1}, spreadValues = {1};
  wide.insert(wide.end(), values.shape.begin(), values.shape.end());
  spreadIndices.insert(spreadIndices.end(), indices.shape.begin(), indices.shape.end());
  spreadIndices.resize(wide.size(), 1);
  spreadValues.insert(spreadValues.end(), values.shape.begin(), values.shape.end());
  if (productUpTo(wide, kMaxMaskedScatterWork) > kMaxMaskedScatterWork)
    throw Error(in.sourceFile, n.name,
                "ScatterAdd into " + toString(result.shape) + " cannot add atomically (" + why +
                    ") and as a masked sum it takes more than " + std::to_string(kMaxMaskedScatterWork) +
                    " operations (mask " + toString(wide) + ")");
  NodeEmitter e(out, n);
  TensorId at = e.op(OpKind::Reshape, {n.inputs[1]}, spreadIndices, indices.dtype, "index");
  if (indices.dtype != DType::Int64) at = e.op(OpKind::Cast, {at}, spreadIndices, DType::Int64, "index64");
  TensorId mask = e.op(OpKind::Equal, {at, e.iota(wide, 0, DType::Int64, "row")}, wide, DType::Bool, "mask");
  TensorId spread = e.op(OpKind::Reshape, {n.inputs[0]}, spreadValues, values.dtype, "values");
  TensorId zero = e.constant(Scalar::convert(0.0, values.dtype), "zero");
  TensorId kept = e.op(OpKind::Select, {mask, spread, zero}, wide, values.dtype, "masked");
  std::vector<int64_t> axes;
  for (size_t a = 1; a <= indices.shape.size(); ++a) axes.push_back(static_cast<int64_t>(a));
  TensorId sum = axes.empty() ? kept  // one index: nothing to sum
                              : e.reduce(kept, Reduction::sum(values.dtype), axes, false, merged, "sum");
  if (n.inputs.size() > 2)
    sum = e.op(OpKind::Add, {e.op(OpKind::Reshape, {n.inputs[2]}, merged, values.dtype, "base"), sum}, merged,
               values.dtype, "plus_base");
  e.op(OpKind::Reshape, {sum}, result.shape, values.dtype, "result");
  e.finish();
}

// The dtype a scatter of `t` adds in: ReduceSum's accumulator for the 8- and 16-bit
// types (the device library adds atomically in 32- and 64-bit words), else `t`.
DType atomicAddType(DType t) {
  return t == DType::Int8 || t == DType::UInt8 || t == DType::UInt16 || t == DType::Float16 || t == DType::BFloat16
             ? accumulatorType(BuiltinCombiner::Sum, t, t)
             : t;
}

// out = Cast(base + ScatterAdd(Cast(values, W), indices), T), each step only where it
// is needed: the scatter a baseless atomic one of W that the partition materializes
// (its readers are the Add, the Cast or the ops that read the original result).
void throughTemporary(Graph& out, const Node& n, const Graph& in) {
  const Tensor values = in.tensor(n.inputs[0]), result = in.tensor(n.output);
  const DType wide = atomicAddType(values.dtype);
  NodeEmitter e(out, n);
  Node scatter = n;
  scatter.inputs = {n.inputs[0], n.inputs[1]};
  if (wide != values.dtype) scatter.inputs[0] = e.op(OpKind::Cast, {n.inputs[0]}, values.shape, wide, "values_wide");
  TensorId sum = e.emit(scatter, result.shape, wide, "scattered");
  if (n.inputs.size() > 2) {
    TensorId base = n.inputs[2];
    if (wide != values.dtype) base = e.op(OpKind::Cast, {base}, result.shape, wide, "base_wide");
    sum = e.op(OpKind::Add, {base, sum}, result.shape, wide, "plus_base");
  }
  if (wide != values.dtype) e.op(OpKind::Cast, {sum}, result.shape, values.dtype, "result");
  e.finish();
}

}  // namespace

std::string whyNotAtomicScatter(const Graph& g, const Node& n, bool deterministic) {
  const DType t = g.tensor(n.inputs[0]).dtype;
  if (deterministic && isFloat(t)) return "deterministic mode: float atomic adds land in varying order";
  if (atomicAddType(t) != t) return std::string(dtypeName(t)) + " has no atomic add in the device library";
  if (addsInPlace(g, n)) return "";
  if (readByAnotherNode(g, n.output)) return "another op reads its result";
  if (n.inputs.size() > 2) {
    const TensorId base = n.inputs[2];
    if (g.tensor(base).role != TensorRole::Input) return "its base is computed in the graph, not a graph input";
    for (const Output& o : g.outputs)
      if (o.aliasOfInput == base) return "the graph also writes its base in place";
  }
  return "";
}

const Node* outputScatter(const Graph& g, TensorId t) {
  const Node* producer = g.producer(t);
  if (!producer || producer->kind != OpKind::ScatterAdd) return nullptr;
  return !readByAnotherNode(g, t) || addsInPlace(g, *producer) ? producer : nullptr;
}

Graph lowerUnstorableScatters(const Graph& g, bool deterministic) {
  Graph out = g;
  out.nodes.clear();
  bool changed = false;
  for (const Node& n : g.nodes) {
    const std::string why = n.kind == OpKind::ScatterAdd ? whyNotAtomicScatter(g, n, deterministic) : "";
    if (why.empty()) {
      out.nodes.push_back(n);
      continue;
    }
    const DType t = g.tensor(n.inputs[0]).dtype;
    const bool masked = deterministic && isFloat(t);
    if (!masked && n.inputs.size() == 2 && atomicAddType(t) == t) {  // read by others: the partition materializes it
      out.nodes.push_back(n);
      continue;
    }
    if (masked) expandMaskedSum(out, n, g, why);
    else throughTemporary(out, n, g);
    changed = true;
  }
  if (!changed) return g;
  renumberProducers(out);
  return out;
}

}  // namespace polyred
