#include "interp/point_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "interp/scan_fold.h"
#include "ir/tuple_program.h"
#include "ir/tuple_reduction.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

struct Element {
  Scalar value;
  double magnitude = 0;
};

double finiteOrZero(double v) { return std::isfinite(v) ? std::fabs(v) : 0.0; }
double magnitudeOfValue(const Scalar& v) {
  return isComplex(v.type) ? finiteOrZero(v.f) + finiteOrZero(v.im) : finiteOrZero(v.asDouble());
}
// Values whose rounding errors the magnitude bound follows (float and complex parts).
bool tracksMagnitude(DType t) { return isFloat(t) || isComplex(t); }

// How an operand's flat index follows from its consumer's: the consumer's flat index
// k has digits k / outStride[d] % extent[d]; the operand index is the sum of the
// digits times `strides` (0 along broadcast dims). `identity` skips all that.
// A Window also takes each digit times step[d] plus begin[d] and wraps it modulo
// wrap[d] (the input's extent) first.
struct IndexMap {
  bool identity = true;
  Shape extents;
  std::vector<int64_t> outStrides, strides;
  std::vector<int64_t> begin, step, wrap;  // Window only

  int64_t operator()(int64_t k) const {
    if (identity) return k;
    int64_t r = 0;
    for (size_t d = 0; d < extents.size(); ++d) {
      if (!strides[d]) continue;
      int64_t digit = k / outStrides[d] % extents[d];
      if (!wrap.empty()) {
        digit = (digit * step[d] + begin[d]) % wrap[d];
        if (digit < 0) digit += wrap[d];
      }
      r += digit * strides[d];
    }
    return r;
  }
};

IndexMap makeMap(const Shape& out, std::vector<int64_t> strides) {
  IndexMap m;
  m.extents = out;
  m.outStrides = rowMajorStrides(out);
  m.identity = strides == m.outStrides;
  m.strides = std::move(strides);
  return m;
}

// numpy broadcasting, right-aligned.
IndexMap broadcastMap(const Shape& in, const Shape& out) {
  std::vector<int64_t> own = rowMajorStrides(in), strides(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != 1) strides[lead + d] = own[d];
  return makeMap(out, std::move(strides));
}

IndexMap windowMap(const Shape& in, const std::vector<int64_t>& begin, const std::vector<int64_t>& steps,
                   const Shape& out) {
  IndexMap m = makeMap(out, rowMajorStrides(in));
  m.identity = false;
  m.begin = begin;
  m.step = steps.empty() ? std::vector<int64_t>(in.size(), 1) : steps;
  m.wrap = in;
  return m;
}

// Gather (params, indices; axis): the indices' element of an output index is its digits
// along the gathered axes; params' is the rest of the digits (plus, at run time, the
// index times params' stride along `axis`: Impl::gather).
std::vector<IndexMap> gatherMaps(const Shape& params, const Shape& indices, int64_t axis, const Shape& out) {
  const auto ax = static_cast<size_t>(axis), r = indices.size();
  const std::vector<int64_t> ps = rowMajorStrides(params), is = rowMajorStrides(indices);
  std::vector<int64_t> toParams(out.size(), 0), toIndices(out.size(), 0);
  for (size_t d = 0; d < out.size(); ++d) {
    if (d < ax) toParams[d] = ps[d];
    else if (d < ax + r) toIndices[d] = is[d - ax];
    else toParams[d] = ps[d - r + 1];
  }
  return {makeMap(out, std::move(toParams)), makeMap(out, std::move(toIndices))};
}

IndexMap transposeMap(const Shape& in, const std::vector<int64_t>& perm, const Shape& out) {
  std::vector<int64_t> own = rowMajorStrides(in), strides;
  for (int64_t p : perm) strides.push_back(own[static_cast<size_t>(p)]);
  return makeMap(out, std::move(strides));
}

// A reduction's input elements for one output element: the kept digits of the output
// index give a base offset; the reduced dims are walked in row-major order from it.
struct ReduceWalk {
  Shape keptExtents, reducedExtents;
  std::vector<int64_t> keptStrides, reducedStrides;  // strides in the input
  int64_t length = 1;                                // elements per output

  int64_t base(int64_t k) const {
    int64_t b = 0;
    for (size_t d = keptExtents.size(); d-- > 0;) {
      b += (k % keptExtents[d]) * keptStrides[d];
      k /= keptExtents[d];
    }
    return b;
  }
};

ReduceWalk makeReduceWalk(const Shape& in, const std::vector<int64_t>& axes) {
  ReduceWalk w;
  std::vector<int64_t> own = rowMajorStrides(in);
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    (reduced ? w.reducedExtents : w.keptExtents).push_back(in[d]);
    (reduced ? w.reducedStrides : w.keptStrides).push_back(own[d]);
    if (reduced) w.length *= in[d];
  }
  return w;
}

// Scan steps between the fold states kept of a scan's run, and the states kept at most
// (about 100 MiB; then all are dropped).
constexpr int64_t kScanCheckpoint = 64;
constexpr size_t kMaxScanCheckpoints = size_t{1} << 21;

// A scan's fold before an element of its run, and the magnitude so far.
struct ScanState {
  ScanFold fold;
  double magnitude = 0;
};

}  // namespace

struct PointReference::Impl {
  Impl(const Graph& graph, const std::vector<HostTensor>& in, const Deadline* d, size_t memoBound)
      : g(graph), inputs(in), deadline(d), maxMemoEntries(memoBound), inputPosition(graph.tensors.size(), -1),
        maps(graph.nodes.size()),
        walks(graph.nodes.size()), gatherStrides(graph.nodes.size(), 0), memo(graph.tensors.size()),
        memoized(graph.tensors.size(), false), scanCheckpoints(graph.nodes.size()) {
    g.verify();
    checkInputs();
    for (size_t k = 0; k < g.inputs.size(); ++k) inputPosition[static_cast<size_t>(g.inputs[k])] = static_cast<int>(k);
    std::vector<int> readers(g.tensors.size(), 0);
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      const Shape& out = g.tensor(node.output).shape;
      if (node.kind == OpKind::Gather) {
        for (TensorId in : node.inputs) ++readers[static_cast<size_t>(in)];
        const Shape& params = g.tensor(node.inputs[0]).shape;
        maps[n] = gatherMaps(params, g.tensor(node.inputs[1]).shape, node.axes.at(0), out);
        gatherStrides[n] = rowMajorStrides(params)[static_cast<size_t>(node.axes.at(0))];
        continue;
      }
      if (node.kind == OpKind::ScatterAdd) {  // walks its operands itself (scatterAdd)
        for (TensorId in : node.inputs) ++readers[static_cast<size_t>(in)];
        continue;
      }
      for (TensorId in : node.inputs) {
        ++readers[static_cast<size_t>(in)];
        const Shape& s = g.tensor(in).shape;
        switch (node.kind) {
          case OpKind::Reshape: maps[n].push_back(IndexMap{}); break;
          case OpKind::Transpose: maps[n].push_back(transposeMap(s, node.perm, out)); break;
          case OpKind::Window: maps[n].push_back(windowMap(s, node.begin, node.steps, out)); break;
          case OpKind::Reduce:
          case OpKind::Scan: maps[n].push_back(IndexMap{}); break;
          default: maps[n].push_back(broadcastMap(s, out)); break;
        }
      }
      if (node.kind == OpKind::Reduce) walks[n] = makeReduceWalk(g.tensor(node.inputs[0]).shape, node.axes);
    }
    // Reductions are memoized (their elements are read many times by broadcasts); so
    // is every computed tensor with several readers, so that a DAG with shared
    // subexpressions costs its size per element, not the number of its paths.
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      int32_t p = g.tensors[t].producer;
      const OpKind kind = p >= 0 ? g.nodes[static_cast<size_t>(p)].kind : OpKind::Add;
      memoized[t] = p >= 0 && (kind == OpKind::Reduce || kind == OpKind::Scan || readers[t] > 1);
    }
  }

  void checkInputs() const {
    if (inputs.size() != g.inputs.size())
      throw Error(g.sourceFile, "", "the graph has " + std::to_string(g.inputs.size()) + " inputs, " +
                                        std::to_string(inputs.size()) + " were given");
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Tensor& want = g.tensor(g.inputs[k]);
      if (inputs[k].dtype != want.dtype || inputs[k].shape != want.shape ||
          inputs[k].byteSize() != numElements(want.shape) * dtypeBytes(want.dtype))
        throw Error(g.sourceFile, "", "input " + quotedName(want.name) + " does not match its declaration");
    }
  }

  Element at(TensorId t, int64_t k) {
    const Tensor& x = g.tensor(t);
    if (x.role == TensorRole::Constant) {
      Scalar v = x.constant->castTo(x.dtype);
      return {v, magnitudeOfValue(v)};
    }
    if (int pos = inputPosition[static_cast<size_t>(t)]; pos >= 0) {
      Scalar v = inputs[static_cast<size_t>(pos)].get(k);
      return {v, magnitudeOfValue(v)};
    }
    if (!memoized[static_cast<size_t>(t)]) return compute(static_cast<size_t>(x.producer), k);
    auto& m = memo[static_cast<size_t>(t)];
    if (auto it = m.find(k); it != m.end()) return it->second;
    Element e = compute(static_cast<size_t>(x.producer), k);
    if (++memoEntries > maxMemoEntries) {
      for (auto& each : memo) each.clear();
      memoEntries = 1;
    }
    memo[static_cast<size_t>(t)].emplace(k, e);
    return e;
  }

  Element operand(size_t n, size_t o, int64_t k) { return at(g.nodes[n].inputs[o], maps[n][o](k)); }

  Element compute(size_t n, int64_t k) {
    const Node& node = g.nodes[n];
    const DType t = g.tensor(node.output).dtype;
    switch (node.kind) {
      case OpKind::Reshape:
      case OpKind::Transpose:
      case OpKind::Window:
      case OpKind::BroadcastTo: return operand(n, 0, k);
      case OpKind::Iota: {
        const Shape& s = g.tensor(node.output).shape;
        const size_t axis = static_cast<size_t>(node.axes.at(0));
        Scalar v = Scalar::ofInt(t, k / rowMajorStrides(s)[axis] % s[axis]);
        return {v, magnitudeOfValue(v)};
      }
      case OpKind::Assign: return operand(n, 1, k);
      case OpKind::Gather: return gather(n, k);
      case OpKind::ScatterAdd: return scatterAdd(n, k);
      case OpKind::Reduce: return reduce(n, k);
      case OpKind::Scan: return scan(n, k);
      case OpKind::Cast: {
        Element x = operand(n, 0, k);
        Scalar v = x.value.castTo(t);
        return {v, isFloat(t) && isFloat(x.value.type) ? x.magnitude : magnitudeOfValue(v)};
      }
      case OpKind::AddN: {
        Element sum = operand(n, 0, k);
        for (size_t o = 1; o < node.inputs.size(); ++o) {
          Element x = operand(n, o, k);
          Scalar args[2] = {sum.value, x.value};
          sum = {evalElementwise(OpKind::Add, args, t), sum.magnitude + x.magnitude};
        }
        return sum;
      }
      default: return elementwise(n, k);
    }
  }

  // out[s, r]: the base there (or 0) plus the sum of values[c, r] over every c whose
  // index is s (floats in double, integers wrapping: the order of interp/reference.cc).
  Element scatterAdd(size_t n, int64_t k) {
    const Node& node = g.nodes[n];
    const Tensor& out = g.tensor(node.output);
    const int64_t inner = scatterRows(g, node).rowSize, segment = k / inner, r = k % inner;
    const int64_t count = numElements(g.tensor(node.inputs[1]).shape);
    double f = 0, mag = 0;
    uint64_t i = 0;
    if (node.inputs.size() > 2) {
      const Element base = at(node.inputs[2], k);
      f = base.value.f;
      i = static_cast<uint64_t>(base.value.i);
      mag = base.magnitude;
    }
    for (int64_t c = 0; c < count; ++c) {
      if (deadline && (c & 4095) == 4095) deadline->check();
      if (at(node.inputs[1], c).value.i != segment) continue;
      Element e = at(node.inputs[0], c * inner + r);
      f += e.value.f;
      i += static_cast<uint64_t>(e.value.i);
      mag += e.magnitude;
    }
    Scalar v = isFloat(out.dtype) ? Scalar::convert(f, out.dtype) : Scalar::convert(static_cast<int64_t>(i), out.dtype);
    return {v, isFloat(out.dtype) ? mag : magnitudeOfValue(v)};
  }

  Element gather(size_t n, int64_t k) {
    const Node& node = g.nodes[n];
    const Tensor& params = g.tensor(node.inputs[0]);
    const auto axis = static_cast<size_t>(node.axes.at(0));
    const int64_t at = operand(n, 1, k).value.i;
    if (at < 0 || at >= params.shape[axis]) {
      Scalar zero = Scalar::convert(0.0, params.dtype);
      return {zero, 0.0};
    }
    return this->at(node.inputs[0], maps[n][0](k) + at * gatherStrides[n]);
  }

  Element elementwise(size_t n, int64_t k) {
    const Node& node = g.nodes[n];
    Scalar args[3];
    double mags[3] = {0, 0, 0};
    for (size_t o = 0; o < node.inputs.size(); ++o) {
      Element e = operand(n, o, k);
      args[o] = e.value;
      mags[o] = e.magnitude;
    }
    Scalar v = evalElementwise(node.kind, std::span<const Scalar>(args, node.inputs.size()), g.tensor(node.output).dtype);
    return {v, magnitudeOf(node.kind, args, mags, v)};
  }

  static double magnitudeOf(OpKind kind, const Scalar* args, const double* mags, const Scalar& v) {
    if (!tracksMagnitude(v.type)) return magnitudeOfValue(v);
    if (isComplex(args[0].type) && !isComplex(v.type)) return std::max(mags[0], magnitudeOfValue(v));  // CReal, CImag, Abs
    switch (kind) {
      case OpKind::Add:
      case OpKind::Sub: return mags[0] + mags[1];
      case OpKind::Mul: return finiteOrZero(mags[0] * mags[1]);
      case OpKind::Div: {
        double b = std::fabs(args[1].asDouble());
        return b > 0 ? std::max(finiteOrZero(mags[0] / b), magnitudeOfValue(v)) : magnitudeOfValue(v);
      }
      case OpKind::Neg:
      case OpKind::Abs: return mags[0];
      case OpKind::Maximum:
      case OpKind::Minimum: return std::max(mags[0], mags[1]);
      case OpKind::Select: return std::max(mags[1], mags[2]);
      default: return magnitudeOfValue(v);
    }
  }

  // A tuple reduction: the element inputs share one shape, so one walk serves them
  // all; folded in row-major order with float32 fields in float64 (reference.cc).
  Element reduceTuple(size_t n, int64_t k) {
    const Node& node = g.nodes[n];
    const TupleReduction& t = *node.reduction->tuple;
    const ReduceWalk& w = walks[n];
    const int64_t base = w.base(k);
    TupleValue acc = tupleIdentity(t, true);
    TupleProgram fold(t, TupleProgram::Kind::Fold, /*widen=*/true);  // combineTuples(acc, liftTuple(element))
    std::vector<Scalar> element(node.inputs.size());
    std::vector<int64_t> digit(w.reducedExtents.size(), 0);
    for (int64_t step = 0; step < w.length; ++step) {
      if (deadline && (step & 4095) == 4095) deadline->check();
      int64_t offset = base;
      for (size_t d = 0; d < digit.size(); ++d) offset += digit[d] * w.reducedStrides[d];
      for (size_t m = 0; m < element.size(); ++m) element[m] = at(node.inputs[m], offset).value;
      fold.run(acc, element);
      for (size_t d = digit.size(); d-- > 0;) {
        if (++digit[d] < w.reducedExtents[d]) break;
        digit[d] = 0;
      }
    }
    Scalar v = finalizeTuple(t, acc, node.reduction->result, true).castTo(g.tensor(node.output).dtype);
    return {v, magnitudeOfValue(v)};
  }

  // Element k of a scan: the fold of its run up to k (ScanFold, the order of
  // interp/reference.cc); its magnitude as a reduction's over the same elements. A run
  // is folded whole the first time one of its elements is asked for: every element is
  // memoized on the way (element by element, a row max over a scan of n elements would
  // fold n^2 of them) and every kScanCheckpoint-th state of the fold is kept. Once the
  // memo's bound has dropped them -- a check asks for the elements of a scan down the
  // columns of a large tensor in row-major order, one of every run in turn -- an element
  // is folded again from the checkpoint before it, never from the start of its run.
  Element scan(size_t n, int64_t k) {
    const Node& node = g.nodes[n];
    const ScanLayout l = scanLayout(g.tensor(node.output).shape, node.axes.at(0));
    const int64_t position = k / l.stride % l.extent, base = k - position * l.stride;
    const int64_t step = node.reverse ? l.extent - 1 - position : position;  // k's place in scan order
    auto& runs = scanCheckpoints[n];
    auto run = runs.find(base);
    if (run == runs.end()) {
      if (scanCheckpointCount > kMaxScanCheckpoints) {
        for (auto& each : scanCheckpoints) each.clear();
        scanCheckpointCount = 0;
      }
      run = runs.emplace(base, std::vector<ScanState>{}).first;
      Element wanted;
      foldRun(n, l, base, 0, l.extent, ScanState{ScanFold(*node.reduction), startMagnitude(node)}, k, wanted,
              &run->second);
      scanCheckpointCount += run->second.size();
      return wanted;
    }
    Element wanted;
    const int64_t from = step / kScanCheckpoint * kScanCheckpoint;
    foldRun(n, l, base, from, step + 1, run->second.at(static_cast<size_t>(step / kScanCheckpoint)), k, wanted, nullptr);
    return wanted;
  }

  static double startMagnitude(const Node& node) { return node.reduction->builtin() == BuiltinCombiner::Prod ? 1 : 0; }

  // Folds the scan's run at `base` from scan step `from` (where the fold's state is
  // `state`) to `to`, memoizing every element and keeping element k in `wanted`; with
  // `checkpoints`, the state before every kScanCheckpoint-th step.
  void foldRun(size_t n, const ScanLayout& l, int64_t base, int64_t from, int64_t to, ScanState state, int64_t k,
               Element& wanted, std::vector<ScanState>* checkpoints) {
    const Node& node = g.nodes[n];
    const TensorId out = node.output;
    const int64_t first = node.reverse ? l.extent - 1 : 0, direction = node.reverse ? -1 : 1;
    const BuiltinCombiner kind = node.reduction->builtin();
    const bool tracked = kind == BuiltinCombiner::Sum || kind == BuiltinCombiner::Prod ||
                         kind == BuiltinCombiner::Max || kind == BuiltinCombiner::Min;
    auto running = [&] {
      Scalar v = state.fold.value(g.tensor(out).dtype);
      const double m = std::isinf(state.magnitude) ? std::numeric_limits<double>::max() : state.magnitude;
      return Element{v, tracked && tracksMagnitude(v.type) ? std::max(m, magnitudeOfValue(v)) : magnitudeOfValue(v)};
    };
    for (int64_t e = from; e < to; ++e) {
      if (deadline && (e & 4095) == 4095) deadline->check();
      if (checkpoints && e % kScanCheckpoint == 0) checkpoints->push_back(state);
      ++scanSteps;
      const int64_t place = base + (first + direction * e) * l.stride;
      if (node.exclusive) remember(out, place, running(), k, wanted);
      Element x = at(node.inputs[0], place);
      state.fold.add(x.value);
      double& mag = state.magnitude;
      if (kind == BuiltinCombiner::Prod) mag *= std::max(1.0, x.magnitude);
      else mag = kind == BuiltinCombiner::Sum ? mag + x.magnitude : std::max(mag, x.magnitude);
      if (!node.exclusive) remember(out, place, running(), k, wanted);
    }
  }

  // Memoizes element `at` of tensor t (bounded as at() does); keeps it in `wanted` if it
  // is element k.
  void remember(TensorId t, int64_t place, const Element& e, int64_t k, Element& wanted) {
    if (place == k) wanted = e;
    if (memo[static_cast<size_t>(t)].emplace(place, e).second && ++memoEntries > maxMemoEntries) {
      for (auto& each : memo) each.clear();
      memoEntries = 0;
    }
  }

  Element reduce(size_t n, int64_t k) {
    const Node& node = g.nodes[n];
    if (node.reduction->isTuple()) return reduceTuple(n, k);
    const Reduction& r = *node.reduction;
    const ReduceWalk& w = walks[n];
    const TensorId in = node.inputs[0];
    const int64_t base = w.base(k);
    const BuiltinCombiner kind = r.builtin();
    const Scalar identity = r.identity.castTo(r.accType);
    const bool floatFold = isFloat(r.accType) && (kind == BuiltinCombiner::Sum || kind == BuiltinCombiner::Prod ||
                                                  kind == BuiltinCombiner::Max || kind == BuiltinCombiner::Min);
    const bool intFold = isInteger(r.accType) && kind != BuiltinCombiner::None;
    const bool complexFold = isComplex(r.accType);  // sum / prod in double parts
    double f = identity.f, fi = identity.im, mag = kind == BuiltinCombiner::Prod ? 1 : 0;
    uint64_t i = static_cast<uint64_t>(identity.i);
    Scalar acc = identity;
    // Row-major walk over the reduced dims (the order of interp/reference.cc).
    std::vector<int64_t> digit(w.reducedExtents.size(), 0);
    for (int64_t step = 0; step < w.length; ++step) {
      if (deadline && (step & 4095) == 4095) deadline->check();
      int64_t offset = base;
      for (size_t d = 0; d < digit.size(); ++d) offset += digit[d] * w.reducedStrides[d];
      Element e = at(in, offset);
      Scalar x = e.value.type == r.accType ? e.value : e.value.castTo(r.accType);
      if (complexFold) {
        if (kind == BuiltinCombiner::Sum) {
          f += x.f;
          fi += x.im;
        } else {
          const double re = f * x.f - fi * x.im;
          fi = f * x.im + fi * x.f;
          f = re;
        }
      } else if (floatFold) {
        switch (kind) {
          case BuiltinCombiner::Sum: f += x.f; break;
          case BuiltinCombiner::Prod: f *= x.f; break;
          case BuiltinCombiner::Max: f = floatMaximum(f, x.f); break;
          default: f = floatMinimum(f, x.f); break;
        }
      } else if (intFold) {
        switch (kind) {
          case BuiltinCombiner::Sum: i += static_cast<uint64_t>(x.i); break;
          case BuiltinCombiner::Prod: i *= static_cast<uint64_t>(x.i); break;
          case BuiltinCombiner::Max: i = static_cast<uint64_t>(std::max(static_cast<int64_t>(i), x.i)); break;
          case BuiltinCombiner::Min: i = static_cast<uint64_t>(std::min(static_cast<int64_t>(i), x.i)); break;
          case BuiltinCombiner::And: i = i != 0 && x.i != 0; break;
          default: i = i != 0 || x.i != 0; break;
        }
      } else {
        acc = r.combine(acc, x);
      }
      switch (kind) {
        case BuiltinCombiner::Sum: mag += e.magnitude; break;
        case BuiltinCombiner::Prod: mag *= std::max(1.0, e.magnitude); break;
        case BuiltinCombiner::Max:
        case BuiltinCombiner::Min: mag = std::max(mag, e.magnitude); break;
        default: break;
      }
      for (size_t d = digit.size(); d-- > 0;) {  // next reduced index, row-major
        if (++digit[d] < w.reducedExtents[d]) break;
        digit[d] = 0;
      }
    }
    if (complexFold) acc = Scalar::ofComplex(DType::Complex64, f, fi);
    else if (floatFold) acc = Scalar::ofFloat(DType::Float64, f);
    else if (intFold) acc = Scalar::convert(static_cast<int64_t>(i), r.accType);
    Scalar v = acc.castTo(g.tensor(node.output).dtype);
    bool tracked = kind == BuiltinCombiner::Sum || kind == BuiltinCombiner::Prod || kind == BuiltinCombiner::Max ||
                   kind == BuiltinCombiner::Min;
    // An overflowing magnitude stays as large as a double allows: it still says "may
    // have overflowed" to compare.h.
    if (std::isinf(mag)) mag = std::numeric_limits<double>::max();
    return {v, tracked && tracksMagnitude(v.type) ? std::max(mag, magnitudeOfValue(v)) : magnitudeOfValue(v)};
  }

  const Graph& g;
  const std::vector<HostTensor>& inputs;
  const Deadline* deadline;
  size_t maxMemoEntries;
  std::vector<int> inputPosition;            // by TensorId: index into inputs, or -1
  std::vector<std::vector<IndexMap>> maps;   // by node, by operand
  std::vector<ReduceWalk> walks;             // by node (reductions only)
  std::vector<int64_t> gatherStrides;        // by node (Gather only): params' stride along the axis
  std::vector<std::unordered_map<int64_t, Element>> memo;  // by TensorId
  std::vector<bool> memoized;                // by TensorId
  size_t memoEntries = 0;
  std::vector<std::unordered_map<int64_t, std::vector<ScanState>>> scanCheckpoints;  // by node, by run base
  size_t scanCheckpointCount = 0;
  int64_t scanSteps = 0;  // scan elements folded
};

PointReference::PointReference(const Graph& g, const std::vector<HostTensor>& inputs, const Deadline* deadline,
                               size_t memoEntries)
    : impl_(std::make_unique<Impl>(g, inputs, deadline, memoEntries)) {}
PointReference::~PointReference() = default;

Scalar PointReference::value(TensorId t, int64_t k) { return impl_->at(t, k).value; }
double PointReference::magnitude(TensorId t, int64_t k) { return impl_->at(t, k).magnitude; }
int64_t PointReference::scanStepsFolded() const { return impl_->scanSteps; }

}  // namespace polyred
