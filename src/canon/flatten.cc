#include "canon/flatten.h"

#include <algorithm>
#include <map>

#include "canon/canonical_form.h"
#include "canon/scatter_fallback.h"
#include "ir/tuple_reduction.h"
#include "support/isl_support.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

using IndexExprs = std::vector<std::string>;  // one quasi-affine expression per tensor axis

std::string mulExpr(int64_t c, const std::string& e) {
  if (c == 0 || e == "0") return "0";
  if (c == 1) return e;
  return std::to_string(c) + "*(" + e + ")";
}

std::string addExprs(const std::vector<std::string>& terms) {
  std::string s;
  for (const auto& t : terms) {
    if (t == "0") continue;
    s += (s.empty() ? "" : " + ") + t;
  }
  return s.empty() ? "0" : s;
}

// Formula (1): the index of each axis in `extents` (outer to inner) recovered from a
// row-major coalesced index `var`. `var` is below the product of the extents, so the
// outermost axis of more than one element needs no `mod` (nor do the unit axes before
// it): a symbolic kernel's offsets then stay free of its size (an Iota along [1, S]
// reads `i`, not `i mod S`).
IndexExprs recoverIndices(const std::string& var, const std::vector<int64_t>& extents) {
  IndexExprs out(extents.size());
  size_t outermost = 0;
  while (outermost + 1 < extents.size() && extents[outermost] == 1) ++outermost;
  int64_t inner = 1;
  for (size_t k = extents.size(); k-- > 0;) {
    std::string q = inner == 1 ? var : "floor((" + var + ")/" + std::to_string(inner) + ")";
    if (k < outermost) q = "0";  // a unit axis before every larger one
    out[k] = k <= outermost ? q : "(" + q + ") mod " + std::to_string(extents[k]);
    inner *= extents[k];
  }
  return out;
}

// Row-major linear offset of a multi-index in `shape` (size-1 axes contribute 0).
std::string linearize(const IndexExprs& idx, const Shape& shape) {
  std::vector<std::string> terms;
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1) terms.push_back(mulExpr(stride, idx[k]));
    stride *= shape[k];
  }
  std::reverse(terms.begin(), terms.end());
  return addExprs(terms);
}

// The index of an operand of shape `in` broadcast (numpy rules) to `out`.
IndexExprs broadcastIndex(const IndexExprs& idx, const Shape& out, const Shape& in) {
  IndexExprs r(in.size());
  size_t lead = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k) r[k] = in[k] == 1 ? "0" : idx[lead + k];
  return r;
}

// Whether `offset` equals the row i at every point.
bool isIdentityOnRows(const std::string& offset, int64_t M, int64_t N) { return isSamePoint(offset, "i", M, N); }

// Lowers graph tensors into values at a given multi-index, memoized so that a value
// used twice at the same index is computed once. Reaching one of the kernel's own
// reductions (`reduced`: those lowered so far) yields its total, which is only possible
// where the index into the reduction result is the row i itself: in the epilogue, or
// in the body of a row-resident kernel (a later pass).
class BodyLowering {
 public:
  BodyLowering(const Graph& g, std::vector<BodyValue>& values, const Materialized& materialized,
               const std::map<int, int>& reduced, int64_t rows, int64_t cols)
      : g_(g), values_(values), materialized_(materialized), reduced_(reduced), rows_(rows), cols_(cols) {}

  // The Graph output being lowered (named in NeedsMaterialization), or -1 while a
  // reduction's input is.
  void setOutput(int output) { output_ = output; }
  // A scan kernel's own Scan node: read at the point itself, its result is the running
  // fold (Kind::Scanned), whose anchor point offset is `at`.
  void setScan(int node, std::string at) {
    scanNode_ = node;
    scanPoint_ = std::move(at);
  }

  int lower(TensorId t, const IndexExprs& idx) {
    std::string key = std::to_string(t);
    for (const auto& e : idx) key += "|" + e;
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    int v = lowerUncached(t, idx);
    memo_[key] = v;
    return v;
  }

 private:
  int lowerUncached(TensorId t, const IndexExprs& idx) {
    const Tensor& x = g_.tensor(t);
    if (x.role == TensorRole::Constant) return add(constantValue(x));
    if (x.role == TensorRole::Input) return add(loadValue(t, idx));
    const Node& n = *g_.producer(t);
    auto operand = [&](size_t k) {
      TensorId in = n.inputs[k];
      return lower(in, broadcastIndex(idx, x.shape, g_.tensor(in).shape));
    };
    switch (n.kind) {
      case OpKind::Assign: return operand(1);
      case OpKind::BroadcastTo: return operand(0);
      case OpKind::Transpose: {
        IndexExprs in(idx.size());
        for (size_t k = 0; k < idx.size(); ++k) in[static_cast<size_t>(n.perm[k])] = idx[k];
        return lower(n.inputs[0], in);
      }
      case OpKind::Reshape: {
        const Shape& inShape = g_.tensor(n.inputs[0]).shape;
        return lower(n.inputs[0], recoverIndices(linearize(idx, x.shape), inShape));
      }
      case OpKind::Window: {
        const Shape& inShape = g_.tensor(n.inputs[0]).shape;
        IndexExprs in(idx.size());
        for (size_t k = 0; k < idx.size(); ++k) {
          const int64_t step = n.steps.empty() ? 1 : n.steps[k], last = n.begin[k] + step * (x.shape[k] - 1);
          const bool inside = std::min(n.begin[k], last) >= 0 && std::max(n.begin[k], last) < inShape[k];  // no wrap
          const std::string at = step == 1 ? idx[k] : std::to_string(step) + "*(" + idx[k] + ")";
          in[k] = inside ? addExprs({at, std::to_string(n.begin[k])})
                         : "(" + addExprs({at, std::to_string(n.begin[k])}) + ") mod " + std::to_string(inShape[k]);
        }
        return lower(n.inputs[0], in);
      }
      case OpKind::Gather: {
        // params at [a.., 0, b..] plus the index (the indices at the gathered digits)
        // times params' stride along the axis: params are a graph input or a Reshape
        // chain of one (ir/graph.h, gatherSource).
        const Tensor& params = g_.tensor(n.inputs[0]);
        const auto ax = static_cast<std::ptrdiff_t>(n.axes.at(0));
        const auto r = static_cast<std::ptrdiff_t>(g_.tensor(n.inputs[1]).shape.size());
        const int index = lower(n.inputs[1], IndexExprs(idx.begin() + ax, idx.begin() + ax + r));
        IndexExprs at(idx.begin(), idx.begin() + ax);
        at.push_back("0");
        at.insert(at.end(), idx.begin() + ax + r, idx.end());
        // Params reshaped from a graph input or a materialized reduction or scan
        // result: the same row-major memory, so the load is addressed in the source's
        // shape and the stride stays the reshaped one.
        const TensorId source = gatherSource(g_, n);
        for (TensorId t = n.inputs[0]; t != source;) {
          const TensorId from = g_.producer(t)->inputs.at(0);
          at = recoverIndices(linearize(at, g_.tensor(t).shape), g_.tensor(from).shape);
          t = from;
        }
        BodyValue v = g_.tensor(source).role == TensorRole::Input ? loadValue(source, at) : temporaryGathered(source, at);
        v.operands = {index};
        v.gatherStride = rowMajorStrides(params.shape)[static_cast<size_t>(ax)];
        v.gatherExtent = params.shape[static_cast<size_t>(ax)];
        return add(std::move(v));
      }
      case OpKind::Iota: {
        BodyValue v;
        v.kind = BodyValue::Kind::Index;
        v.dtype = x.dtype;
        v.label = x.name;
        v.offset = idx[static_cast<size_t>(n.axes.at(0))];
        return add(std::move(v));
      }
      case OpKind::Reduce: return reducedValue(n, x, idx);
      case OpKind::Scan: return scannedValue(n, x, idx);
      case OpKind::ScatterAdd: return scatteredValue(n, x, idx);
      case OpKind::AddN: {
        int acc = operand(0);
        for (size_t k = 1; k < n.inputs.size(); ++k) acc = add(opValue(OpKind::Add, x, {acc, operand(k)}));
        return acc;
      }
      default: {
        POLYRED_CHECK(isElementwise(n.kind), "unexpected op in a kernel body: " << opName(n.kind));
        std::vector<int> ops;
        for (size_t k = 0; k < n.inputs.size(); ++k) ops.push_back(operand(k));
        return add(opValue(n.kind, x, std::move(ops)));
      }
    }
  }

  // A reduction result: its total in this kernel when the index is the row itself, a
  // load of the temporary an earlier kernel wrote, or a request to materialize it.
  int reducedValue(const Node& n, const Tensor& x, const IndexExprs& idx) {
    int node = g_.tensor(n.output).producer;
    bool inThisKernel = reduced_.count(node) > 0;
    std::string offset = linearize(idx, x.shape);
    if (inThisKernel && isIdentityOnRows(offset, rows_, cols_)) {
      BodyValue v;
      v.kind = BodyValue::Kind::Reduced;
      v.dtype = x.dtype;
      v.label = x.name;
      v.reduction = reduced_.at(node);
      return add(std::move(v));
    }
    if (!inThisKernel && materialized_.count(node)) return add(temporaryLoad(x, materialized_.at(node), offset));
    throw NeedsMaterialization{node, output_, inThisKernel,
                               quotedName(n.name) + " is read " +
                                   (inThisKernel ? "at other rows than its own" : "by another kernel's reduction")};
  }

  // Gathered params that are computed (canon/gather_sources leaves reduction and scan
  // results, Windows, gathers along other axes, ...): the load of the temporary an
  // earlier kernel wrote, else a request to materialize them. A gathered point is any
  // point, so a reduction or scan is never read in its own kernel, and other params get
  // a kernel of their own (flattenMaterialized).
  BodyValue temporaryGathered(TensorId params, const IndexExprs& at) {
    const Node& p = *g_.producer(params);
    const int node = g_.tensor(params).producer;
    const bool reduction = p.kind == OpKind::Reduce;
    const bool inThisKernel = reduction ? reduced_.count(node) > 0 : node == scanNode_;
    const auto m = materialized_.find(node);
    if (inThisKernel || m == materialized_.end())
      throw NeedsMaterialization{node, output_, inThisKernel && reduction,
                                 quotedName(p.name) + " is gathered (read at points its indices pick)"};
    return temporaryLoad(g_.tensor(params), m->second, linearize(at, g_.tensor(params).shape));
  }

  // A scan result: the running fold in the scan's own kernel at the point itself, else
  // a load of the temporary its scan kernel wrote, or a request to materialize it.
  int scannedValue(const Node& n, const Tensor& x, const IndexExprs& idx) {
    const int node = g_.tensor(n.output).producer;
    const std::string offset = linearize(idx, x.shape);
    if (node == scanNode_ && isSamePoint(offset, scanPoint_, rows_, cols_)) {
      BodyValue v;
      v.kind = BodyValue::Kind::Scanned;
      v.dtype = x.dtype;
      v.label = x.name;
      v.reduction = 0;
      return add(std::move(v));
    }
    // (Its own kernel writes the temporary: an output there reads it at other points.)
    if (auto m = materialized_.find(node); m != materialized_.end() && node != scanNode_)
      return add(temporaryLoad(x, m->second, offset));
    throw NeedsMaterialization{node, output_, false,
                               quotedName(n.name) + " (a scan) is read by another kernel or at other points"};
  }

  // A scatter result another op reads (canon/scatter_fallback): a load of the
  // temporary its scatter kernel wrote, or a request to materialize it.
  int scatteredValue(const Node& n, const Tensor& x, const IndexExprs& idx) {
    const int node = g_.tensor(n.output).producer;
    const auto m = materialized_.find(node);
    if (m == materialized_.end())
      throw NeedsMaterialization{node, output_, false, quotedName(n.name) + " (a scatter) is read by another op"};
    return add(temporaryLoad(x, m->second, linearize(idx, x.shape)));
  }

  // The load of tensor x, materialized by an earlier kernel in `temporary`, at `offset`.
  static BodyValue temporaryLoad(const Tensor& x, int temporary, std::string offset) {
    BodyValue v;
    v.kind = BodyValue::Kind::Load;
    v.dtype = x.dtype;
    v.label = x.name;
    v.temporary = temporary;
    v.offset = std::move(offset);
    return v;
  }

  BodyValue constantValue(const Tensor& x) {
    BodyValue v;
    v.kind = BodyValue::Kind::Constant;
    v.dtype = x.dtype;
    v.value = x.constant->castTo(x.dtype);
    v.label = x.name;
    return v;
  }

  BodyValue loadValue(TensorId t, const IndexExprs& idx) {
    const Tensor& x = g_.tensor(t);
    BodyValue v;
    v.kind = BodyValue::Kind::Load;
    v.dtype = x.dtype;
    v.label = x.name;
    v.input = g_.inputIndex(t);
    v.offset = linearize(idx, x.shape);
    return v;
  }

  static BodyValue opValue(OpKind k, const Tensor& x, std::vector<int> operands) {
    BodyValue v;
    v.kind = BodyValue::Kind::Op;
    v.op = k;
    v.dtype = x.dtype;
    v.label = x.name;
    v.operands = std::move(operands);
    return v;
  }

  int add(BodyValue v) {
    values_.push_back(std::move(v));
    return static_cast<int>(values_.size() - 1);
  }

  const Graph& g_;
  std::vector<BodyValue>& values_;
  const Materialized& materialized_;
  const std::map<int, int>& reduced_;
  int64_t rows_, cols_;
  int output_ = -1;
  int scanNode_ = -1;
  std::string scanPoint_;
  std::map<std::string, int> memo_;
};

// The pass of every reduction and store: a value needs the pass after the latest stage
// of the totals it reads (0 if it reads none). Values precede their users, and a
// reduction's value precedes every Reduced value naming it.
void assignPasses(KernelPlan& plan) {
  std::vector<int> pass(plan.body.size(), 0);
  for (size_t v = 0; v < plan.body.size(); ++v) {
    const BodyValue& b = plan.body[v];
    if (b.kind == BodyValue::Kind::Reduced) {
      const ReductionOutput& r = plan.reductions[static_cast<size_t>(b.reduction)];
      for (int x : r.values.empty() ? std::vector<int>{r.value} : r.values) {
        POLYRED_CHECK(static_cast<size_t>(x) < v, "a total is read before its reduction is lowered");
        pass[v] = std::max(pass[v], pass[static_cast<size_t>(x)] + 1);
      }
    }
    for (int o : b.operands) pass[v] = std::max(pass[v], pass[static_cast<size_t>(o)]);
  }
  for (ReductionOutput& r : plan.reductions)
    for (int x : r.values.empty() ? std::vector<int>{r.value} : r.values) r.stage = std::max(r.stage, pass[static_cast<size_t>(x)]);
  for (ElementwiseOutput& s : plan.stores) s.pass = pass[static_cast<size_t>(s.value)];
}

// The multi-index of the anchor shape in terms of i (kept) and j (reduced).
IndexExprs anchorIndex(const Shape& shape, const AxisSplit& s) {
  IndexExprs idx(shape.size(), "0");
  IndexExprs kept = recoverIndices("i", s.keptExtents);
  IndexExprs red = recoverIndices("j", s.reducedExtents);
  for (size_t k = 0; k < s.keptAxes.size(); ++k) idx[s.keptAxes[k]] = kept[k];
  for (size_t k = 0; k < s.reducedAxes.size(); ++k) idx[s.reducedAxes[k]] = red[k];
  return idx;
}

}  // namespace

TensorId valueTensor(const Graph& g, TensorId t) {
  while (const Node* n = g.producer(t)) {
    if (n->kind != OpKind::Assign) break;
    t = n->inputs[1];
  }
  return t;
}

// The multi-index of an output of `shape` from its row-major flat index i.
bool sameSqueezedShape(const Shape& a, const Shape& b) {
  Shape sa, sb;
  for (int64_t d : a)
    if (d != 1) sa.push_back(d);
  for (int64_t d : b)
    if (d != 1) sb.push_back(d);
  return sa == sb;
}

// The index of a tensor of shape `to` at the anchor point `idx` over `from`, where
// both shapes are equal once size-1 axes are dropped.
static IndexExprs squeezedIndex(const IndexExprs& idx, const Shape& from, const Shape& to) {
  std::vector<std::string> nonTrivial;
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1) nonTrivial.push_back(idx[d]);
  IndexExprs r(to.size(), "0");
  for (size_t d = 0, k = 0; d < to.size(); ++d)
    if (to[d] != 1) r[d] = nonTrivial[k++];
  return r;
}

static IndexExprs rowIndex(const Shape& shape) {
  std::vector<int64_t> extents;
  for (int64_t d : shape)
    if (d != 1) extents.push_back(d);
  IndexExprs flat = recoverIndices("i", extents);
  IndexExprs idx(shape.size(), "0");
  for (size_t d = 0, k = 0; d < shape.size(); ++d)
    if (shape[d] != 1) idx[d] = flat[k++];
  return idx;
}

KernelPlan flattenReductions(const Graph& g, const ReductionGroup& group, const Materialized& materialized) {
  POLYRED_CHECK(!group.nodes.empty(), "flattenReductions without reductions");
  const Node& first = g.nodes[static_cast<size_t>(group.nodes[0])];
  const Shape& shape = g.tensor(first.inputs[0]).shape;
  AxisSplit split = splitAxes(shape, first.axes);

  KernelPlan plan;
  plan.form = chooseForm(split);
  plan.M = numElements(split.keptExtents);
  plan.N = numElements(split.reducedExtents);
  plan.why = describeSplit(shape, first.axes, split, plan.form);

  std::map<int, int> slotOf;  // Reduce node -> index in plan.reductions, as lowered
  BodyLowering body(g, plan.body, materialized, slotOf, plan.M, plan.N);
  IndexExprs idx = anchorIndex(shape, split);
  for (int node : group.nodes) {  // in dependence order: a reduction's inputs come first
    const Node& n = g.nodes[static_cast<size_t>(node)];
    POLYRED_CHECK(g.tensor(n.inputs[0]).shape == shape && n.axes == first.axes,
                  "reductions of one kernel must share input shape and axes");
    ReductionOutput r;
    r.reduction = *n.reduction;
    r.value = body.lower(n.inputs[0], idx);
    r.values = {r.value};
    for (size_t k = 1; k < n.inputs.size(); ++k) r.values.push_back(body.lower(n.inputs[k], idx));
    r.outType = g.tensor(n.output).dtype;
    if (auto m = materialized.find(node); m != materialized.end()) r.temporary = m->second;
    for (size_t q = 0; q < plan.reductions.size() && r.reduction.isTuple(); ++q) {
      const ReductionOutput& o = plan.reductions[q];
      if (o.sharesAccumulatorOf < 0 && o.reduction.tuple == r.reduction.tuple && o.values == r.values) {
        r.sharesAccumulatorOf = static_cast<int>(q);
        break;
      }
    }
    slotOf[node] = static_cast<int>(plan.reductions.size());
    plan.reductions.push_back(std::move(r));
  }
  std::vector<int> epilogueOutputs = group.epilogue;
  for (auto [node, output] : group.direct) {
    ReductionOutput& r = plan.reductions[static_cast<size_t>(slotOf.at(node))];
    if (r.output < 0) r.output = output;
    else epilogueOutputs.push_back(output);  // the same result stored a second time
  }
  BodyLowering epilogue(g, plan.epilogue, materialized, slotOf, plan.M, 1);
  for (int o : epilogueOutputs) {
    TensorId t = valueTensor(g, g.outputs[static_cast<size_t>(o)].tensor);
    epilogue.setOutput(o);
    if (numElements(g.tensor(t).shape) != plan.M) {
      int node = g.tensor(first.output).producer;
      throw NeedsMaterialization{node, o, true, "output " + quotedName(g.tensor(t).name) + " has another element count than the result"};
    }
    plan.epilogueStores.push_back({epilogue.lower(t, rowIndex(g.tensor(t).shape)), o});
  }
  for (int o : group.pointOutputs) {
    TensorId t = valueTensor(g, g.outputs[static_cast<size_t>(o)].tensor);
    IndexExprs outIdx = squeezedIndex(idx, shape, g.tensor(t).shape);
    body.setOutput(o);
    plan.stores.push_back({body.lower(t, outIdx), o, linearize(outIdx, g.tensor(t).shape)});
  }
  assignPasses(plan);
  chooseFormFromLayout(plan, split);
  if (!group.pointOutputs.empty())
    plan.why += "; " + std::to_string(group.pointOutputs.size()) +
                " elementwise output(s) over the anchor shape stored from the same kernel";
  if (plan.passes() > 1)
    plan.why += "; row-resident: each row is reduced inside one block, so dependent reductions and the outputs "
                "that read their totals run as " + std::to_string(plan.passes()) + " passes over the row in this kernel";
  if (!plan.epilogue.empty()) plan.why += "; epilogue of " + std::to_string(plan.epilogueStores.size()) +
                                          " output(s) applied where the final values are produced";
  return plan;
}

KernelPlan flattenScan(const Graph& g, const ScanGroup& group, const Materialized& materialized) {
  const Node& n = g.nodes[static_cast<size_t>(group.node)];
  const Shape& shape = g.tensor(n.inputs[0]).shape;
  const AxisSplit split = splitAxes(shape, n.axes);
  KernelPlan plan;
  plan.form = chooseForm(split);
  if (plan.form == CanonicalForm::AllReduce) plan.form = CanonicalForm::XReduce;  // one row
  plan.M = numElements(split.keptExtents);
  plan.N = numElements(split.reducedExtents);
  plan.why = describeSplit(shape, n.axes, split, plan.form) + "; scan: each row tile after tile, in order" +
             (n.reverse ? ", from the end (j runs backwards along the axis)" : "");
  IndexExprs idx = anchorIndex(shape, split);
  if (n.reverse && plan.N > 1) idx[static_cast<size_t>(n.axes[0])] = std::to_string(plan.N - 1) + " - j";
  const std::string point = linearize(idx, shape);
  const std::map<int, int> noReductions;
  BodyLowering body(g, plan.body, materialized, noReductions, plan.M, plan.N);
  ReductionOutput r;
  r.reduction = *n.reduction;
  r.value = body.lower(n.inputs[0], idx);  // the values up to here come before the scan step
  r.values = {r.value};
  r.outType = g.tensor(n.output).dtype;
  r.scan = true;
  r.exclusive = n.exclusive;
  plan.reductions.push_back(std::move(r));
  // The outputs, computed after the scan step from the running fold at their point.
  body.setScan(group.node, point);
  for (int o : group.outputs) {
    const TensorId t = valueTensor(g, g.outputs[static_cast<size_t>(o)].tensor);
    const IndexExprs at = squeezedIndex(idx, shape, g.tensor(t).shape);
    body.setOutput(o);
    plan.stores.push_back({body.lower(t, at), o, linearize(at, g.tensor(t).shape)});
  }
  if (auto m = materialized.find(group.node); m != materialized.end()) {
    ElementwiseOutput st{body.lower(n.output, idx), -1, point};
    st.temporary = m->second;
    plan.stores.push_back(std::move(st));
  }
  if (plan.stores.size() > group.outputs.size() || group.outputs.size() > 1)
    plan.why += "; " + std::to_string(plan.stores.size()) + " store(s) of values of the running fold";
  return plan;
}

Shape iterationShape(const Graph& g, int output) {
  const TensorId t = valueTensor(g, g.outputs.at(static_cast<size_t>(output)).tensor);
  const Node* scatter = outputScatter(g, t);
  return scatter ? g.tensor(scatter->inputs[0]).shape : g.tensor(t).shape;
}

namespace {

// values[c.., rest] added at out[indices[c..], rest] (`idx`: the point of the values):
// the store's offset is the output row 0 at `rest` (the indexed axes merged into one of
// `rows`), plus the index times the row size. Its target (an output, a temporary) and
// base are the caller's.
ElementwiseOutput scatterStore(const Graph& g, const Node& scatter, BodyLowering& lowering, const IndexExprs& idx) {
  const Shape& out = g.tensor(scatter.output).shape;
  const ScatterRows rows = scatterRows(g, scatter);
  Shape merged = {rows.rows};
  merged.insert(merged.end(), out.begin() + rows.indexedAxes, out.end());
  const auto r = static_cast<std::ptrdiff_t>(g.tensor(scatter.inputs[1]).shape.size());
  IndexExprs at = {"0"};
  at.insert(at.end(), idx.begin() + r, idx.end());
  ElementwiseOutput store{lowering.lower(scatter.inputs[0], idx), -1, linearize(at, merged)};
  store.scatterIndex = lowering.lower(scatter.inputs[1], IndexExprs(idx.begin(), idx.begin() + r));
  store.scatterStride = rows.rowSize;
  store.scatterExtent = rows.rows;
  return store;
}

}  // namespace

KernelPlan flattenElementwise(const Graph& g, const std::vector<int>& outputs, const Materialized& materialized) {
  POLYRED_CHECK(!outputs.empty(), "flattenElementwise without outputs");
  const Shape shape = iterationShape(g, outputs[0]);
  std::vector<int64_t> extents;
  for (int64_t d : shape)
    if (d != 1) extents.push_back(d);

  KernelPlan plan;
  plan.form = CanonicalForm::Elementwise;
  plan.M = numElements(extents);
  plan.pointShape = extents;
  plan.why = "elementwise over " + toString(shape) + " coalesced into i < " + std::to_string(plan.M);

  IndexExprs idx = rowIndex(shape);
  const std::map<int, int> noReductions;
  BodyLowering lowering(g, plan.body, materialized, noReductions, plan.M, 1);
  for (int o : outputs) {
    TensorId t = valueTensor(g, g.outputs[static_cast<size_t>(o)].tensor);
    POLYRED_CHECK(iterationShape(g, o) == shape, "elementwise outputs of one kernel must share a shape");
    const Node* scatter = outputScatter(g, t);
    if (!scatter) {
      plan.stores.push_back({lowering.lower(t, idx), o, "i"});
      continue;
    }
    ElementwiseOutput store = scatterStore(g, *scatter, lowering, idx);
    store.output = o;
    store.scatterBase = scatter->inputs.size() > 2 ? g.inputIndex(scatter->inputs[2]) : -1;
    if (store.scatterBase >= 0 && g.outputs[static_cast<size_t>(o)].aliasOfInput == scatter->inputs[2])
      plan.why += "; in place: the adds land in the base input's own buffer";
    POLYRED_CHECK(scatter->inputs.size() == 2 || store.scatterBase >= 0,
                  "a ScatterAdd's base must be a graph input here (canon/scatter_fallback)");
    plan.stores.push_back(std::move(store));
  }
  if (plan.hasScatterStore())
    plan.why += "; ScatterAdd: atomic adds into outputs set (zero, or a copy of the base) before the launch";
  return plan;
}

KernelPlan flattenMaterialized(const Graph& g, int node, const Materialized& materialized) {
  const Node& n = g.nodes.at(static_cast<size_t>(node));
  const bool scatter = n.kind == OpKind::ScatterAdd;
  const Shape& shape = g.tensor(scatter ? n.inputs[0] : n.output).shape;  // a scatter runs over its values
  KernelPlan plan;
  plan.form = CanonicalForm::Elementwise;
  plan.M = numElements(shape);
  for (int64_t d : shape)
    if (d != 1) plan.pointShape.push_back(d);
  plan.why = "elementwise over " + toString(shape) + " coalesced into i < " + std::to_string(plan.M) + ": " +
             quotedName(n.name) +
             (scatter ? " scattered atomically into a temporary that other ops read"
                      : " materialized for the gathers that read it");
  const std::map<int, int> noReductions;
  BodyLowering lowering(g, plan.body, materialized, noReductions, plan.M, 1);
  ElementwiseOutput store = scatter ? scatterStore(g, n, lowering, rowIndex(shape))
                                    : ElementwiseOutput{lowering.lower(n.output, rowIndex(shape)), -1, "i"};
  store.temporary = materialized.at(node);
  plan.stores.push_back(std::move(store));
  return plan;
}

}  // namespace polyred
