#include "interp/compare.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

namespace polyred {

namespace {

// The rtol column of the table in compare.h.
double relativeTolerance(DType t) {
  switch (t) {
    case DType::Float64: return 1e-12;
    case DType::Float32: return 1e-5;
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    default: return 0;
  }
}

bool isExactCombiner(const Reduction& r) {
  BuiltinCombiner b = r.builtin();
  return b == BuiltinCombiner::Max || b == BuiltinCombiner::Min || b == BuiltinCombiner::And ||
         b == BuiltinCombiner::Or;
}

// How many input elements one output element of a Reduce node combines.
int64_t elementsPerOutput(const Graph& g, const Node& n) {
  const Shape& in = g.tensor(n.inputs[0]).shape;
  int64_t count = 1;
  for (int64_t a : n.axes) count *= in[static_cast<size_t>(a)];
  return count;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// The error of one element and whether it is within tolerance.
struct ElementError {
  bool ok;
  double abs;  // +inf when NaN or an infinity does not match
};

ElementError floatError(double got, double expected, Tolerance tol) {
  if (std::isnan(got) || std::isnan(expected))
    return std::isnan(got) && std::isnan(expected) ? ElementError{true, 0} : ElementError{false, kInf};
  if (std::isinf(expected)) return got == expected ? ElementError{true, 0} : ElementError{false, kInf};
  double diff = std::fabs(got - expected);
  return {diff <= tol.atol + tol.rtol * std::fabs(expected), diff};
}

ElementError elementError(const Scalar& got, const Scalar& expected, Tolerance tol) {
  if (isComplex(expected.type)) {  // each part as a float32 value
    ElementError re = floatError(got.f, expected.f, tol), im = floatError(got.im, expected.im, tol);
    return {re.ok && im.ok, std::max(re.abs, im.abs)};
  }
  if (isFloat(expected.type)) return floatError(got.f, expected.f, tol);
  return {got.i == expected.i, std::fabs(static_cast<double>(got.i) - static_cast<double>(expected.i))};
}

std::string coordinates(const Shape& s, int64_t flat) {
  Shape index(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    index[d] = flat % s[d];
    flat /= s[d];
  }
  return toString(index);
}

CompareResult layoutMismatch(const HostTensor& got, const HostTensor& expected) {
  CompareResult r;
  r.mismatches = expected.size();
  r.maxAbsError = r.maxRelError = kInf;
  r.message = "got " + std::string(dtypeName(got.dtype)) + toString(got.shape) + ", expected " +
              std::string(dtypeName(expected.dtype)) + toString(expected.shape);
  return r;
}

std::string describe(const CompareResult& r, const HostTensor& got, const HostTensor& expected, Tolerance tol) {
  std::ostringstream os;
  os.precision(9);
  if (r.ok) os << "all " << expected.size() << " elements match";
  else os << r.mismatches << " of " << expected.size() << " elements differ";
  os << " (rtol " << tol.rtol << ", atol " << tol.atol << ")";
  if (!r.ok)
    os << "; first at index " << r.firstBadIndex << " " << coordinates(expected.shape, r.firstBadIndex)
       << ": got " << got.get(r.firstBadIndex).toString() << ", expected "
       << expected.get(r.firstBadIndex).toString();
  os << "; max abs error " << r.maxAbsError << ", max rel error " << r.maxRelError;
  return os.str();
}

}  // namespace

Tolerance toleranceFor(DType outputType, int64_t accumulationLength, int64_t productLength) {
  if (isComplex(outputType)) outputType = complexPartType(outputType);  // parts compare as float32
  if (!isFloat(outputType)) return {0, 0};
  const DType acc = defaultAccType(outputType);
  const double unitRoundoff = acc == DType::Float64 ? 0x1p-53 : 0x1p-24;
  const double product = 4 * std::sqrt(static_cast<double>(std::max<int64_t>(productLength, 1))) * unitRoundoff;
  const double rounding = relativeTolerance(outputType);
  const double accumulation = relativeTolerance(acc) *
                              std::sqrt(static_cast<double>(std::max<int64_t>(accumulationLength, 1)));
  const double overflowAt = acc == DType::Float64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  return {std::max(rounding, product), 4 * std::max(rounding, accumulation), std::max<int64_t>(accumulationLength, 1),
          overflowAt};
}

namespace {

// Calls `visit` on every node upstream of t (t's own producer included), once each.
void forEachUpstream(const Graph& g, TensorId t, const std::function<void(const Node&)>& visit) {
  std::vector<bool> seen(g.tensors.size(), false);
  std::vector<TensorId> pending{t};
  while (!pending.empty()) {
    TensorId id = pending.back();
    pending.pop_back();
    if (seen[static_cast<size_t>(id)]) continue;
    seen[static_cast<size_t>(id)] = true;
    const Node* n = g.producer(id);
    if (!n) continue;
    visit(*n);
    pending.insert(pending.end(), n->inputs.begin(), n->inputs.end());
  }
}

// The largest elementsPerOutput over the Reduce nodes upstream of t that `counts`.
int64_t longestUpstream(const Graph& g, TensorId t, const std::function<bool(const Reduction&)>& counts) {
  int64_t longest = 1;
  forEachUpstream(g, t, [&](const Node& n) {
    if (n.kind == OpKind::Reduce && counts(*n.reduction)) longest = std::max(longest, elementsPerOutput(g, n));
  });
  return longest;
}

}  // namespace

int64_t accumulationLength(const Graph& g, TensorId t) {
  return longestUpstream(g, t, [](const Reduction& r) { return !isExactCombiner(r); });
}

std::optional<DType> inexactlyRoundedUpstream(const Graph& g, TensorId t) {
  std::optional<DType> narrowest;
  forEachUpstream(g, t, [&](const Node& n) {
    const bool inexact = isFloatMath(n.kind) || n.kind == OpKind::Div || n.kind == OpKind::Pow ||
                         n.kind == OpKind::PhiloxNormal;
    const DType d = g.tensor(n.output).dtype;
    if (!inexact || (d != DType::Float16 && d != DType::BFloat16)) return;
    if (!narrowest || relativeTolerance(d) > relativeTolerance(*narrowest)) narrowest = d;
  });
  return narrowest;
}

int64_t productLength(const Graph& g, TensorId t) {
  return longestUpstream(g, t, [](const Reduction& r) { return r.builtin() == BuiltinCombiner::Prod; });
}

Tolerance toleranceOf(const Graph& g, TensorId t) {
  Tolerance tol = toleranceFor(g.tensor(t).dtype, accumulationLength(g, t), productLength(g, t));
  if (tol.rtol == 0) return tol;  // integers and bool: exact
  if (const std::optional<DType> narrow = inexactlyRoundedUpstream(g, t)) {
    const double rounding = relativeTolerance(*narrow);
    tol.rtol = std::max(tol.rtol, rounding);
    tol.atol = std::max(tol.atol, 4 * rounding);
  }
  return tol;
}

CompareResult compareTensors(const HostTensor& got, const HostTensor& expected, Tolerance tol,
                             const MagnitudeAt& magnitude, const std::vector<bool>* only) {
  if (got.dtype != expected.dtype || got.shape != expected.shape || got.size() != expected.size())
    return layoutMismatch(got, expected);
  CompareResult r;
  for (int64_t k = 0; k < expected.size(); ++k) {
    if (only && !(*only)[static_cast<size_t>(k)]) continue;
    Scalar e = expected.get(k);
    Scalar g = got.get(k);
    ElementError err = elementError(g, e, tol);
    if (!err.ok && magnitude && (isFloat(e.type) || isComplex(e.type))) {
      const double m = magnitude(k);
      Tolerance scaled = tol;
      scaled.atol *= std::max(1.0, m / static_cast<double>(tol.length));
      err = elementError(g, e, scaled);
      if (!err.ok && tol.overflowAt > 0 && m >= tol.overflowAt && !(std::isfinite(g.f) && std::isfinite(g.im)))
        err = {true, 0};
    }
    r.maxAbsError = std::max(r.maxAbsError, err.abs);
    double magnitude = isComplex(e.type) ? std::hypot(e.f, e.im) : std::fabs(e.asDouble());
    if (magnitude > 0 && !std::isinf(magnitude)) r.maxRelError = std::max(r.maxRelError, err.abs / magnitude);
    if (err.ok) continue;
    if (r.mismatches++ == 0) r.firstBadIndex = k;
  }
  r.ok = r.mismatches == 0;
  r.message = describe(r, got, expected, tol);
  return r;
}

}  // namespace polyred
