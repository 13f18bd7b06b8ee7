// The reference interpreter. Each tensor is evaluated into Values: float elements
// widened to double and integer/bool elements to int64, exactly as Scalar carries
// them, so the generic path hands elements straight to evalElementwise() and the
// float fast paths are plain loops over doubles. Index arithmetic walks innermost
// rows with precomputed strides; nothing is allocated per element.
#include "interp/reference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <span>

#include "interp/float_formulas.h"
#include "interp/reference_values.h"
#include "interp/scan_fold.h"
#include "ir/tuple_program.h"
#include "ir/tuple_reduction.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

using reference_values::broadcastStrides;
using reference_values::fromHost;
using reference_values::StridedWalk;
using reference_values::toHost;
using reference_values::Values;

// ---- Elementwise ----------------------------------------------------------------

// The result of an elementwise op over `operands`: a splat when every operand is one.
Values elementwiseResult(const std::vector<const Values*>& operands, DType t, const Shape& s) {
  bool allSplat = true;
  for (const Values* v : operands) allSplat = allSplat && v->splat;
  return Values::make(t, s, allSplat);
}

// Walks `out` (dense or splat) together with its operands broadcast to it. Operand k
// of the walk is out itself for k == 0 and operands[k - 1] after that.
StridedWalk elementwiseWalk(const Values& out, const std::vector<const Values*>& operands) {
  Shape space = out.splat ? Shape{} : out.shape;
  std::vector<std::vector<int64_t>> strides{broadcastStrides(out, space)};
  for (const Values* v : operands) strides.push_back(broadcastStrides(*v, space));
  return StridedWalk(space, strides);
}

// Applies scalarFn(std::span<const Scalar>) -> Scalar element by element.
template <class ScalarFn>
Values mapScalars(const std::vector<const Values*>& operands, DType t, const Shape& s, ScalarFn scalarFn) {
  Values out = elementwiseResult(operands, t, s);
  StridedWalk walk = elementwiseWalk(out, operands);
  std::vector<Scalar> args(operands.size());
  walk.forEachRow([&](const int64_t* offset, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      for (size_t a = 0; a < operands.size(); ++a)
        args[a] = operands[a]->at(offset[a + 1] + j * walk.inner(a + 1));
      out.put(offset[0] + j * walk.inner(0), scalarFn(std::span<const Scalar>(args)));
    }
  });
  return out;
}

// Unary ops keep the shape, so dense elements map one to one.
template <class Formula>
Values mapFloatUnary(const Values& x, DType t, Formula formula) {
  Values out = Values::make(t, x.shape, x.splat);
  withRounding(t, [&](auto round) {
    for (size_t k = 0; k < x.f.size(); ++k) out.f[k] = round(formula(x.f[k]));
  });
  return out;
}

template <class Formula>
Values mapFloatBinary(const Values& a, const Values& b, DType t, const Shape& s, Formula formula) {
  std::vector<const Values*> operands{&a, &b};
  Values out = elementwiseResult(operands, t, s);
  StridedWalk walk = elementwiseWalk(out, operands);
  int64_t so = walk.inner(0), sa = walk.inner(1), sb = walk.inner(2);
  withRounding(t, [&](auto round) {
    walk.forEachRow([&](const int64_t* offset, int64_t n) {
      double* o = out.f.data() + offset[0];
      const double* pa = a.f.data() + offset[1];
      const double* pb = b.f.data() + offset[2];
      for (int64_t j = 0; j < n; ++j) o[j * so] = round(formula(pa[j * sa], pb[j * sb]));
    });
  });
  return out;
}

// A unary, binary or Select op (the ones evalElementwise defines).
Values elementwise(OpKind k, const std::vector<const Values*>& operands, DType t, const Shape& s) {
  std::optional<Values> out;
  if (isFloat(t) && operands[0]->dtype == t) {
    if (operands.size() == 1)
      withUnaryFormula(k, t, [&](auto formula) { out = mapFloatUnary(*operands[0], t, formula); });
    if (operands.size() == 2)
      withBinaryFormula(k, [&](auto formula) { out = mapFloatBinary(*operands[0], *operands[1], t, s, formula); });
  }
  if (out) return std::move(*out);
  return mapScalars(operands, t, s, [k, t](std::span<const Scalar> args) { return evalElementwise(k, args, t); });
}

Values cast(const Values& x, DType t) {
  if (x.floating && isFloat(t)) return mapFloatUnary(x, t, [](double v) { return v; });
  return mapScalars({&x}, t, x.shape, [t](std::span<const Scalar> args) { return args[0].castTo(t); });
}

// AddN: a left fold of Adds, each rounded to the dtype (as chained Add nodes would be).
Values addN(const std::vector<const Values*>& operands, DType t) {
  Values sum = *operands[0];
  for (size_t k = 1; k < operands.size(); ++k) {
    std::optional<Shape> s = broadcastShapes(sum.shape, operands[k]->shape);
    POLYRED_CHECK(s, "AddN operands do not broadcast (unverified graph?)");
    sum = elementwise(OpKind::Add, {&sum, operands[k]}, t, *s);
  }
  return sum;
}

// ---- Data movement -------------------------------------------------------------

Values reshape(const Values& x, const Shape& s) {
  Values out = x;
  out.shape = s;
  return out;
}

// The elements of `x` read with `strides` (one per dim of `s`) into a dense tensor of shape s.
Values gather(const Values& x, const std::vector<int64_t>& strides, const Shape& s) {
  if (x.splat) return reshape(x, s);
  Values out = Values::make(x.dtype, s, false);
  StridedWalk walk(s, {rowMajorStrides(s), strides});
  auto copy = [&walk](auto& dst, const auto& src) {
    int64_t so = walk.inner(0), sx = walk.inner(1);
    walk.forEachRow([&](const int64_t* offset, int64_t n) {
      for (int64_t j = 0; j < n; ++j) dst[offset[0] + j * so] = src[offset[1] + j * sx];
    });
  };
  if (x.floating || x.complex) copy(out.f, x.f);
  else copy(out.i, x.i);
  if (x.complex) copy(out.im, x.im);
  return out;
}

Values transpose(const Values& x, const std::vector<int64_t>& perm, const Shape& s) {
  std::vector<int64_t> own = rowMajorStrides(x.shape), strides;
  for (int64_t p : perm) strides.push_back(own[static_cast<size_t>(p)]);
  return gather(x, strides, s);
}

// out[idx] = x[(begin[d] + steps[d] * idx[d]) mod x.shape[d]] (the modulo is
// non-negative; no steps: 1).
Values window(const Values& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& steps, const Shape& s) {
  if (x.splat) return reshape(x, s);
  Values out = Values::make(x.dtype, s, false);
  const std::vector<int64_t> own = rowMajorStrides(x.shape);
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t k = 0, n = numElements(s); k < n; ++k) {
    int64_t from = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t w = ((steps.empty() ? 1 : steps[d]) * idx[d] + begin[d]) % x.shape[d];
      from += (w < 0 ? w + x.shape[d] : w) * own[d];
    }
    out.put(k, x.at(from));
    for (size_t d = s.size(); d-- > 0;)  // next row-major index
      if (++idx[d] < s[d]) break;
      else idx[d] = 0;
  }
  return out;
}

// out[a.., i.., b..] = params[a.., indices[i..], b..]; 0 where the index is outside
// [0, params.shape[axis]).
Values gatherAlong(const Values& params, const Values& indices, int64_t axis, const Shape& s) {
  Values out = Values::make(params.dtype, s, false);
  const auto ax = static_cast<size_t>(axis);
  const int64_t extent = params.shape[ax], count = numElements(indices.shape);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < params.shape.size(); ++d) (d < ax ? outer : inner) *= d == ax ? 1 : params.shape[d];
  const Scalar zero = Scalar::convert(0.0, params.dtype);
  for (int64_t o = 0, k = 0; o < outer; ++o)
    for (int64_t c = 0; c < count; ++c) {
      const int64_t at = indices.i[static_cast<size_t>(indices.splat ? 0 : c)];
      for (int64_t r = 0; r < inner; ++r, ++k)
        out.put(k, at < 0 || at >= extent ? zero : params.at(params.splat ? 0 : (o * extent + at) * inner + r));
    }
  return out;
}

// out = base (or 0); out[indices[c], r] += values[c, r] over the rows of ScatterRows,
// dropping indices outside them. Floats add in double and round once; integers add
// exactly and wrap to the dtype.
Values scatterAdd(const Values& values, const Values& indices, const Values* base, const ScatterRows& rows,
                  const Shape& s) {
  Values out = Values::make(values.dtype, s, false);
  if (base)
    for (int64_t k = 0, n = numElements(s); k < n; ++k) out.put(k, base->at(base->splat ? 0 : k));
  const int64_t extent = rows.rows, inner = rows.rowSize, count = numElements(indices.shape);
  for (int64_t c = 0; c < count; ++c) {
    const int64_t at = indices.i[static_cast<size_t>(indices.splat ? 0 : c)];
    if (at < 0 || at >= extent) continue;
    for (int64_t r = 0; r < inner; ++r) {
      const auto from = static_cast<size_t>(values.splat ? 0 : c * inner + r), to = static_cast<size_t>(at * inner + r);
      if (out.floating) out.f[to] += values.f[from];
      else out.i[to] = static_cast<int64_t>(static_cast<uint64_t>(out.i[to]) + static_cast<uint64_t>(values.i[from]));
    }
  }
  for (int64_t k = 0, n = numElements(s); k < n; ++k) out.put(k, out.at(k).castTo(values.dtype));
  return out;
}

// out[idx] = idx[axis].
Values iota(DType t, int64_t axis, const Shape& s) {
  Values out = Values::make(t, s, false);
  const int64_t stride = rowMajorStrides(s)[static_cast<size_t>(axis)], extent = s[static_cast<size_t>(axis)];
  for (int64_t k = 0, n = numElements(s); k < n; ++k) out.i[static_cast<size_t>(k)] = k / stride % extent;
  return out;
}

// ---- Reduce --------------------------------------------------------------------

// Walks the input of a reduction; operand 0 is the input element, operand 1 the
// accumulator (a dense index over the kept dims) it folds into.
// The accumulator's stride along each input dim (0 along the reduced ones).
std::vector<int64_t> accumulatorStrides(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<int64_t> accStrides(shape.size(), 0);
  int64_t step = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (reduced) continue;
    accStrides[d] = step;
    step *= shape[d];
  }
  return accStrides;
}

StridedWalk reductionWalk(const Values& in, const std::vector<int64_t>& axes) {
  return StridedWalk(in.shape, {broadcastStrides(in, in.shape), accumulatorStrides(in.shape, axes)});
}

// One accumulator per output element, each folded over its input elements with
// acc = op(acc, x) in row-major order.
template <class T, class Op>
std::vector<T> foldValues(const StridedWalk& walk, const std::vector<T>& x, size_t outCount, T identity, Op op) {
  std::vector<T> acc(outCount, identity);
  int64_t sx = walk.inner(0), sa = walk.inner(1);
  walk.forEachRow([&](const int64_t* offset, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      T& a = acc[offset[1] + j * sa];
      a = op(a, x[offset[0] + j * sx]);
    }
  });
  return acc;
}

// Float sums and products accumulate in double whatever the float accType (a more
// exact oracle); max and min return an operand, so they are exact in any type.
std::optional<std::vector<double>> foldFloats(BuiltinCombiner kind, const StridedWalk& walk, const Values& x,
                                              size_t outCount, double identity) {
  switch (kind) {
    case BuiltinCombiner::Sum: return foldValues(walk, x.f, outCount, identity, std::plus<double>());
    case BuiltinCombiner::Prod: return foldValues(walk, x.f, outCount, identity, std::multiplies<double>());
    case BuiltinCombiner::Max: return foldValues(walk, x.f, outCount, identity, floatMaximum);
    case BuiltinCombiner::Min: return foldValues(walk, x.f, outCount, identity, floatMinimum);
    default: return std::nullopt;
  }
}

// Integer sums and products wrap as uint64; wrapping the result to accType afterwards
// equals wrapping after every step.
std::optional<std::vector<int64_t>> foldIntegers(BuiltinCombiner kind, const StridedWalk& walk, const Values& x,
                                                 size_t outCount, int64_t identity) {
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  switch (kind) {
    case BuiltinCombiner::Sum:
      return foldValues(walk, x.i, outCount, identity, [u](int64_t a, int64_t b) { return static_cast<int64_t>(u(a) + u(b)); });
    case BuiltinCombiner::Prod:
      return foldValues(walk, x.i, outCount, identity, [u](int64_t a, int64_t b) { return static_cast<int64_t>(u(a) * u(b)); });
    case BuiltinCombiner::Max: return foldValues(walk, x.i, outCount, identity, [](int64_t a, int64_t b) { return std::max(a, b); });
    case BuiltinCombiner::Min: return foldValues(walk, x.i, outCount, identity, [](int64_t a, int64_t b) { return std::min(a, b); });
    case BuiltinCombiner::And: return foldValues(walk, x.i, outCount, identity, [](int64_t a, int64_t b) { return int64_t{a != 0 && b != 0}; });
    case BuiltinCombiner::Or: return foldValues(walk, x.i, outCount, identity, [](int64_t a, int64_t b) { return int64_t{a != 0 || b != 0}; });
    default: return std::nullopt;
  }
}

// Any other reduction (user combiners, bool or float and/or): Reduction::combine.
std::vector<Scalar> foldWithCombiner(const StridedWalk& walk, const Values& x, size_t outCount, const Reduction& r) {
  std::vector<Scalar> acc(outCount, r.identity.castTo(r.accType));
  int64_t sx = walk.inner(0), sa = walk.inner(1);
  walk.forEachRow([&](const int64_t* offset, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      Scalar& a = acc[offset[1] + j * sa];
      a = r.combine(a, x.at(offset[0] + j * sx));
    }
  });
  return acc;
}

// Complex sums and products accumulate in double parts (a more exact oracle than the
// kernels' float32 parts), with the textbook product (ac - bd, ad + bc).
std::vector<Scalar> foldComplex(BuiltinCombiner kind, const StridedWalk& walk, const Values& x, size_t outCount,
                                const Scalar& identity) {
  POLYRED_CHECK(kind == BuiltinCombiner::Sum || kind == BuiltinCombiner::Prod,
                "complex reduction other than sum/prod (the verifier refuses it)");
  std::vector<double> re(outCount, identity.f), im(outCount, identity.im);
  const int64_t sx = walk.inner(0), sa = walk.inner(1);
  walk.forEachRow([&](const int64_t* offset, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      const size_t a = static_cast<size_t>(offset[1] + j * sa), e = static_cast<size_t>(offset[0] + j * sx);
      const double c = x.f[x.splat ? 0 : e], d = x.im[x.splat ? 0 : e];
      if (kind == BuiltinCombiner::Sum) {
        re[a] += c;
        im[a] += d;
      } else {
        const double r = re[a] * c - im[a] * d;
        im[a] = re[a] * d + im[a] * c;
        re[a] = r;
      }
    }
  });
  std::vector<Scalar> acc;
  for (size_t k = 0; k < outCount; ++k) acc.push_back(Scalar::ofComplex(DType::Complex64, re[k], im[k]));
  return acc;
}

// The accumulators of a reduction over x (already converted to accType); built-in
// combiners take the typed folds above, which give what Reduction::combine gives.
std::vector<Scalar> accumulate(const Reduction& r, const StridedWalk& walk, const Values& x, size_t outCount) {
  Scalar identity = r.identity.castTo(r.accType);
  if (isComplex(r.accType)) return foldComplex(r.builtin(), walk, x, outCount, identity);
  std::vector<Scalar> acc;
  if (isFloat(r.accType))
    if (auto f = foldFloats(r.builtin(), walk, x, outCount, identity.f))
      for (double v : *f) acc.push_back(Scalar::ofFloat(DType::Float64, v));
  if (isInteger(r.accType))
    if (auto i = foldIntegers(r.builtin(), walk, x, outCount, identity.i))
      for (int64_t v : *i) acc.push_back(Scalar::convert(v, r.accType));
  return acc.empty() ? foldWithCombiner(walk, x, outCount, r) : acc;
}

Values reduce(const Node& n, const Values& in, DType t, const Shape& s) {
  const Reduction& r = *n.reduction;
  std::optional<Values> converted;
  if (in.dtype != r.accType) converted = cast(in, r.accType);
  const Values& x = converted ? *converted : in;
  StridedWalk walk = reductionWalk(x, n.axes);
  size_t outCount = static_cast<size_t>(numElements(s));
  std::vector<Scalar> acc = accumulate(r, walk, x, outCount);
  Values out = Values::make(t, s, false);
  for (size_t k = 0; k < outCount; ++k) out.put(static_cast<int64_t>(k), acc[k].castTo(t));
  return out;
}

// A tuple reduction (ir/tuple_reduction.h): every accumulator starts at the identity and
// folds the lifted elements in row-major order, float32 fields computed in float64
// (widen: the oracle is more exact than a kernel); finalize result `result`, cast.
Values reduceTuple(const Node& n, const std::vector<const Values*>& ins, DType t, const Shape& s) {
  const TupleReduction& tuple = *n.reduction->tuple;
  std::vector<std::vector<int64_t>> strides;
  for (const Values* in : ins) strides.push_back(broadcastStrides(*in, in->shape));
  strides.push_back(accumulatorStrides(ins[0]->shape, n.axes));
  StridedWalk walk(ins[0]->shape, strides);
  const size_t outCount = static_cast<size_t>(numElements(s)), m = ins.size();
  std::vector<TupleValue> acc(outCount, tupleIdentity(tuple, true));
  std::vector<Scalar> element(m);
  TupleProgram fold(tuple, TupleProgram::Kind::Fold, /*widen=*/true);  // combineTuples(a, liftTuple(element))
  walk.forEachRow([&](const int64_t* offset, int64_t len) {
    for (int64_t j = 0; j < len; ++j) {
      for (size_t k = 0; k < m; ++k) element[k] = ins[k]->at(offset[k] + j * walk.inner(k));
      fold.run(acc[static_cast<size_t>(offset[m] + j * walk.inner(m))], element);
    }
  });
  Values out = Values::make(t, s, false);
  for (size_t k = 0; k < outCount; ++k)
    out.put(static_cast<int64_t>(k), finalizeTuple(tuple, acc[k], n.reduction->result, true).castTo(t));
  return out;
}

// ---- Graph evaluation ------------------------------------------------------------

class Evaluator {
 public:
  // keepAll: keep every tensor (for evaluateAllTensors); otherwise an intermediate is
  // freed after its last use, so peak memory stays near the live set.
  Evaluator(const Graph& g, const std::vector<HostTensor>& inputs, bool keepAll)
      : g_(g), values_(g.tensors.size()) {
    g.verify();  // the walks below index by the shapes the verifier checks
    checkInputs(inputs);
    for (size_t k = 0; k < inputs.size(); ++k) values_[static_cast<size_t>(g.inputs[k])] = fromHost(inputs[k]);
    for (size_t id = 0; id < g.tensors.size(); ++id)
      if (g.tensors[id].role == TensorRole::Constant) values_[id] = constantValues(g.tensors[id]);
    run(keepAll);
  }

  HostTensor tensor(TensorId id) const {
    const std::optional<Values>& v = values_[static_cast<size_t>(id)];
    if (!v) return HostTensor{g_.tensor(id).dtype, g_.tensor(id).shape, {}};
    return toHost(*v);
  }

 private:
  void checkInputs(const std::vector<HostTensor>& inputs) const {
    if (inputs.size() != g_.inputs.size())
      throw Error(g_.sourceFile, "", "the graph has " + std::to_string(g_.inputs.size()) + " inputs, " +
                                         std::to_string(inputs.size()) + " were given");
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Tensor& want = g_.tensor(g_.inputs[k]);
      const HostTensor& got = inputs[k];
      bool fits = got.dtype == want.dtype && got.shape == want.shape &&
                  got.byteSize() == numElements(want.shape) * dtypeBytes(want.dtype);
      if (!fits)
        throw Error(g_.sourceFile, "", "input " + quotedName(want.name) + " should be " + std::string(dtypeName(want.dtype)) +
                                           toString(want.shape) + ", got " + std::string(dtypeName(got.dtype)) +
                                           toString(got.shape) + " with " + std::to_string(got.byteSize()) + " bytes");
    }
  }

  void run(bool keepAll) {
    std::vector<int32_t> lastUse = lastUses();
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      const Node& node = g_.nodes[n];
      values_[static_cast<size_t>(node.output)] = evaluate(node);
      if (keepAll) continue;
      for (TensorId in : node.inputs)
        if (lastUse[static_cast<size_t>(in)] == static_cast<int32_t>(n)) values_[static_cast<size_t>(in)].reset();
    }
  }

  static Values constantValues(const Tensor& t) {
    Values v = Values::make(t.dtype, t.shape, true);
    v.put(0, t.constant->castTo(t.dtype));
    return v;
  }

  // For each tensor, the last node reading it; outputs are never freed (-1 is
  // "never", since no node has that index).
  std::vector<int32_t> lastUses() const {
    std::vector<int32_t> last(g_.tensors.size(), -1);
    for (size_t n = 0; n < g_.nodes.size(); ++n)
      for (TensorId in : g_.nodes[n].inputs) last[static_cast<size_t>(in)] = static_cast<int32_t>(n);
    for (const Output& o : g_.outputs) last[static_cast<size_t>(o.tensor)] = -1;
    return last;
  }

  const Values& value(TensorId id) const {
    const std::optional<Values>& v = values_[static_cast<size_t>(id)];
    POLYRED_CHECK(v, "tensor '" << g_.tensor(id).name << "' read before it is computed");
    return *v;
  }

  Values evaluate(const Node& n) const {
    const Tensor& out = g_.tensor(n.output);
    std::vector<const Values*> operands;
    for (TensorId in : n.inputs) operands.push_back(&value(in));
    switch (n.kind) {
      case OpKind::Cast: return cast(*operands[0], out.dtype);
      case OpKind::Assign: return *operands[1];
      case OpKind::AddN: return addN(operands, out.dtype);
      case OpKind::Reshape: return reshape(*operands[0], out.shape);
      case OpKind::BroadcastTo: return gather(*operands[0], broadcastStrides(*operands[0], out.shape), out.shape);
      case OpKind::Transpose: return transpose(*operands[0], n.perm, out.shape);
      case OpKind::Window: return window(*operands[0], n.begin, n.steps, out.shape);
      case OpKind::Iota: return iota(out.dtype, n.axes.at(0), out.shape);
      case OpKind::Gather: return gatherAlong(*operands[0], *operands[1], n.axes.at(0), out.shape);
      case OpKind::ScatterAdd:
        return scatterAdd(*operands[0], *operands[1], operands.size() > 2 ? operands[2] : nullptr, scatterRows(g_, n),
                          out.shape);
      case OpKind::Scan: return fromHost(referenceScan(n, toHost(*operands[0]), out.dtype));
      case OpKind::Reduce:
        if (n.reduction->isTuple()) return reduceTuple(n, operands, out.dtype, out.shape);
        return reduce(n, *operands[0], out.dtype, out.shape);
      default: return elementwise(n.kind, operands, out.dtype, out.shape);
    }
  }

  const Graph& g_;
  std::vector<std::optional<Values>> values_;
};

}  // namespace

std::vector<HostTensor> evaluateReference(const Graph& g, const std::vector<HostTensor>& inputs) {
  Evaluator e(g, inputs, false);
  std::vector<HostTensor> outputs;
  for (const Output& o : g.outputs) outputs.push_back(e.tensor(o.tensor));
  return outputs;
}

std::vector<HostTensor> evaluateAllTensors(const Graph& g, const std::vector<HostTensor>& inputs) {
  Evaluator e(g, inputs, true);
  std::vector<HostTensor> all;
  for (size_t id = 0; id < g.tensors.size(); ++id) all.push_back(e.tensor(static_cast<TensorId>(id)));
  return all;
}

}  // namespace polyred
