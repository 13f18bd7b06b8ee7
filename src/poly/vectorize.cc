#include "poly/vectorize.h"

#include <algorithm>

#include "ir/tuple_reduction.h"
#include "support/isl_support.h"
#include "support/error.h"

namespace polyred {

namespace {
// `offset` with the axis variable a replaced by (width*a + lane - shift), where a now
// counts vectors; `lane` is a number or an isl variable, `shift` empty or an expression
// over i.
std::string substituteLane(const std::string& offset, char axis, int width, const std::string& lane,
                           const std::string& shift) {
  return islSubstitute(offset, axis,
                       std::to_string(width) + "*" + axis + (lane.empty() ? "" : " + " + lane) +
                           (shift.empty() ? "" : " - (" + shift + ")"));
}
}  // namespace

std::string Vectorization::laneOffset(const std::string& offset, int lane) const {
  return substituteLane(offset, axis, width, lane > 0 ? std::to_string(lane) : "", shift);
}

std::string Vectorization::lanePosition() const { return substituteLane(std::string(1, axis), axis, width, "", shift); }

int64_t Vectorization::vectorsAlong(int64_t extent) const {
  // A row shifted by s < V has ceil((extent + s) / V) vectors; unshifted, ceil(extent / V).
  if (!masked()) return extent / width;
  return shift == kUnshifted ? (extent + width - 1) / width : (extent + 2 * width - 2) / width;
}

std::string Vectorization::axisBounds(char var, int64_t extent) const {
  const std::string a(1, var);
  if (var != axis) return "0 <= " + a + " < " + std::to_string(extent);
  if (!masked()) return "0 <= " + a + " < " + std::to_string(extent / width);
  return "0 <= " + a + " and " + std::to_string(width) + "*" + a + " < " + std::to_string(extent) + " + (" + shift + ")";
}

namespace {

// Bounds of the iteration space with the lane axis split: the axis variable counts
// vectors and v is the lane (every lane of every vector, masked ones included).
std::string laneBounds(const KernelPlan& p, const Vectorization& vec) {
  return vec.axisBounds('i', p.M) + " and " + vec.axisBounds('j', p.N) + " and 0 <= v < " + std::to_string(vec.width);
}

// Whether offset(V*a + v - shift) == offset(V*a - shift) + step*v (step 1: contiguous, 0:
// invariant) over every lane, masked ones included (so a partial vector may address its
// valid lanes from lane 0), and, for an aligned access, offset(V*a - shift) is a
// multiple of V.
bool laneStep(isl_ctx* ctx, const KernelPlan& p, const Vectorization& vec, const std::string& offset, int step,
              bool aligned) {
  std::string bounds = laneBounds(p, vec), dom = " : " + bounds + " }";
  std::string lane0 = substituteLane(offset, vec.axis, vec.width, "", vec.shift);
  std::string lhs = "{ [i, j, v] -> [(" + substituteLane(offset, vec.axis, vec.width, "v", vec.shift) + ")]" + dom;
  std::string rhs = "{ [i, j, v] -> [(" + lane0 + " + " + std::to_string(step) + "*v)]" + dom;
  if (!islSameFunction(ctx, lhs, rhs)) return false;
  if (step == 0 || !aligned) return true;
  return islSetIsEmpty(ctx, "{ [i, j, v] : (" + lane0 + ") mod " + std::to_string(vec.width) + " != 0 and " + bounds + " }");
}

// The shift that puts the row start of the first load that moves along j at its place in
// an aligned vector of the flat buffer: offset(i, 0) mod V.
std::string rowShift(const KernelPlan& p, int width) {
  for (const BodyValue& v : p.body) {
    if (v.kind != BodyValue::Kind::Load) continue;
    const std::string rowStart = islSubstitute(v.offset, 'j', "0");
    if (rowStart != v.offset) return "(" + rowStart + ") mod " + std::to_string(width);
  }
  return "";
}

// Classifies every access of the plan for `vec`; false if no load is contiguous (lanes
// would not pay), a contiguous load is wider than a vector, or a reduction's point
// store is not one aligned vector. An elementwise kernel's lanes are set by its stores,
// and a load wider than its stores may take two vectors (policy.elementwiseLoadBytes).
bool classifyAccesses(isl_ctx* ctx, const KernelPlan& p, Vectorization& vec, const LaunchPolicy& policy) {
  bool fits = true, anyContiguous = p.form == CanonicalForm::Elementwise;
  const int loadBytes = p.form == CanonicalForm::Elementwise ? policy.elementwiseLoadBytes : policy.vectorBytes;
  // Whether each body value is the same in every lane (a Gather's index must be, for its
  // load to be one vector: offset + index * stride, with the stride a multiple of V).
  std::vector<bool> uniform(p.body.size(), false);
  for (size_t k = 0; k < p.body.size(); ++k) {
    const BodyValue& v = p.body[k];
    const bool operandsUniform = std::all_of(v.operands.begin(), v.operands.end(),
                                             [&](int o) { return uniform[static_cast<size_t>(o)]; });
    if (!v.hasOffset()) {  // (a scan's running fold differs from lane to lane)
      uniform[k] = (v.kind != BodyValue::Kind::Op && v.kind != BodyValue::Kind::Scanned) || operandsUniform;
      continue;
    }
    const bool load = v.kind == BodyValue::Kind::Load;
    if (v.gathers() && !operandsUniform) {
      vec.accesses.push_back(LaneAccess::Gather);  // one element per lane, each with its own index
      continue;
    }
    if (laneStep(ctx, p, vec, v.offset, 0, load)) {
      uniform[k] = true;
      vec.accesses.push_back(LaneAccess::Invariant);
    } else if ((!v.gathers() || v.gatherStride % vec.width == 0) && laneStep(ctx, p, vec, v.offset, 1, load)) {
      // A coordinate needs no alignment: its lanes are base + v wherever the row starts.
      vec.accesses.push_back(LaneAccess::Contiguous);
      fits = fits && (!load || dtypeBytes(v.dtype) * vec.width <= loadBytes);
      anyContiguous = anyContiguous || load;
    } else {
      vec.accesses.push_back(LaneAccess::Gather);
    }
  }
  if (p.form != CanonicalForm::Elementwise)  // an elementwise kernel stores at i: contiguous
    for (const ElementwiseOutput& s : p.stores)
      if (!laneStep(ctx, p, vec, s.offset, 1, true)) return false;
  return fits && anyContiguous;
}

}  // namespace

// Whether the expression has an op of long latency (a division or a transcendental).
bool hasLongLatencyOp(const ScalarExpr& e) {
  if (e.kind != ScalarExpr::Kind::Op) return false;
  switch (e.op) {
    case OpKind::Div: case OpKind::FloorDiv: case OpKind::FloorMod: case OpKind::Mod: case OpKind::Pow:
      return true;
    default:
      return isFloatMath(e.op) ||
             std::any_of(e.operands.begin(), e.operands.end(), [](const ScalarExprPtr& o) { return hasLongLatencyOp(*o); });
  }
}

// Lanes pay for a tuple where its combine is long (Welford's division, logsumexp's
// Exp): the lane tree takes those combines off the loop's dependence chain. A combine
// of compares and selects is as short as the loop itself, and its lane tree with that
// combine only adds work: argmax f16 [4096, 50257] on the H100 (2026-11-25) took 193.5
// us scalar, 277.0 us with masked lanes (198.8 us with the combine branch-free);
// cross-entropy's logsumexp, 370.5 us scalar, 359.4 us with masked lanes. A tuple with
// a later-combine (argmax) folds whole vectors with it, without the tie and index
// tests, and one 16-byte load replaces V scalar ones (docs/results/notes-2026-11-26.md).
bool tupleLanesPay(const KernelPlan& plan) {
  for (const ReductionOutput& r : plan.reductions) {
    if (!r.reduction.isTuple()) continue;
    const TupleReduction& t = *r.reduction.tuple;
    if (t.hasCombineLater()) continue;
    if (std::none_of(t.fields.begin(), t.fields.end(), [](const TupleField& f) { return hasLongLatencyOp(*f.combine); }))
      return false;
  }
  return true;
}

// The most accumulators one pass of the kernel folds (a tuple counts once; results that
// share another's accumulator do not count).
int maxAccumulatorsPerPass(const KernelPlan& plan) {
  std::vector<int> perPass(static_cast<size_t>(plan.passes()), 0);
  for (size_t r = 0; r < plan.reductions.size(); ++r) {
    const ReductionOutput& ro = plan.reductions[r];
    if (ro.holder(static_cast<int>(r)) == static_cast<int>(r)) ++perPass.at(static_cast<size_t>(ro.stage));
  }
  return perPass.empty() ? 0 : *std::max_element(perPass.begin(), perPass.end());
}

namespace {
// The widest element a kernel loads (0 without loads).
int widestLoadBytes(const KernelPlan& plan) {
  int widest = 0;
  for (const BodyValue& v : plan.body)
    if (v.kind == BodyValue::Kind::Load) widest = std::max(widest, static_cast<int>(dtypeBytes(v.dtype)));
  return widest;
}
}  // namespace

// y-reduce lanes (a thread owning V columns) pay on wide kept axes, where the columns
// are long enough for each thread's vectors to outweigh the epilogue: 16-byte lanes
// from minColumnsForWideLanes columns, narrowColumnLanes from minColumnsForLanes over
// columns of minRowsForNarrowLanes (or, since each column reaches the cross-block
// combine from a thread of its own, from minElementsForNarrowLanes elements, and from
// minColumnsForWordLanes columns of 4-byte data), column pairs of narrow data from
// minColumnsForPairs columns. Reductions whose blocks combine through partials (floats'
// products, user combiners) take pairs where others take 4 lanes.
int laneLimitFor(int maxWidth, const KernelPlan& plan, const LaunchPolicy& p) {
  if (maxWidth != KernelConfig::kAuto) return maxWidth;
  if (plan.form != CanonicalForm::YReduce || plan.M >= p.minColumnsForWideLanes) return 16;
  // (Blocks without an atomic for their combiner combine through partials.)
  const bool partials = plan.hasCompareAndSwapCombine();
  if (plan.N >= p.minRowsForNarrowLanes && plan.M >= p.minColumnsForLanes)
    return partials ? p.columnPairLanes : p.narrowColumnLanes;
  const bool wideEnough = plan.M >= p.minColumnsForLanes ||
                          (plan.M >= p.minColumnsForWordLanes && widestLoadBytes(plan) == p.wordLaneBytes);
  if (!partials && wideEnough && plan.M * plan.N >= p.minElementsForNarrowLanes) return p.narrowColumnLanes;
  if (plan.N < p.minRowsForNarrowLanes) return 1;
  const bool pairs = plan.M >= p.minColumnsForPairs && widestLoadBytes(plan) <= p.maxColumnPairBytes;
  return pairs ? p.columnPairLanes : 1;
}

// Whether a tuple of the kernel folds its lanes with a later-combine (argmax).
bool foldsLanesWithLaterCombine(const KernelPlan& plan) {
  return std::any_of(plan.reductions.begin(), plan.reductions.end(), [](const ReductionOutput& r) {
    return r.reduction.isTuple() && r.reduction.tuple->hasCombineLater();
  });
}

// The pass loops of row-resident kernels with masked lanes run faster not unrolled;
// those over long aligned rows unrolled by longRowUnroll, where each pass folds a single
// accumulator (with more, the unroll's registers cost the block its occupancy). Scalar
// one-pass tuples (short combines take no lanes, chooseVectorization) keep
// scalarTupleUnroll loads in flight; tuples whose lanes fold with a later-combine hold
// V lifted tuples per vector, and unroll less (laterCombineLanesUnroll).
int loopUnrollFor(const KernelPlan& plan, const Vectorization& vec, int requested, const LaunchPolicy& p) {
  if (requested != KernelConfig::kAuto) return requested;
  if (plan.passes() > 1 && vec.masked()) return 1;
  if (plan.passes() > 1 && plan.N >= p.longRowElements) return maxAccumulatorsPerPass(plan) > 1 ? 1 : p.longRowUnroll;
  if (plan.passes() == 1 && plan.hasTupleReduction() && plan.form != CanonicalForm::YReduce) {
    if (vec.width == 1) return p.scalarTupleUnroll;
    if (foldsLanesWithLaterCombine(plan)) return p.laterCombineLanesUnroll;
  }
  return p.defaultUnroll;
}

namespace {

// The lanes of a kernel (the policy in the header).
Vectorization chooseLanes(const KernelPlan& plan, int maxWidth, const LaunchPolicy& policy) {
  maxWidth = laneLimitFor(maxWidth, plan, policy);
  Vectorization none;
  bool elementwise = plan.form == CanonicalForm::Elementwise;
  bool alongJ = plan.form == CanonicalForm::XReduce || plan.form == CanonicalForm::AllReduce;
  // Lanes run along the contiguous axis: i of elementwise and y-reduce kernels, j of
  // x- and all-reduce kernels.
  bool alongI = !alongJ;
  if (elementwise && plan.stores.empty()) return none;
  if (plan.hasScatterStore()) return none;  // each element adds at its own row: one atomic per element
  // Reductions that store points (the last pass of a row-resident kernel: softmax) take
  // lanes along j only, their stores contiguous and aligned like the loads.
  if (!elementwise && !alongJ && (!plan.stores.empty() || plan.passes() > 1)) return none;
  // Tuples fold their lanes as a tree (codegen's tupleLaneTree), which reorders the
  // elements of a thread: commutative tuples with a long combine only, and lanes along j
  // only (a thread owning V columns would hold V tuple accumulators: not done).
  if (plan.hasTupleReduction() && (alongI || plan.hasOrderedReduction() || !tupleLanesPay(plan))) return none;
  if (plan.hasComplexValue()) return none;    // complex64: scalar code only (not done)
  if (plan.M * plan.N < policy.minElements) return none;  // launch-bound: lanes only add latency
  // The widest element stored bounds V (16 bytes per access); loads are checked by
  // classifyAccesses (16 bytes, or 32 in two accesses in an elementwise kernel).
  int widest = 1;
  for (const ElementwiseOutput& s : plan.stores) widest = std::max(widest, dtypeBytes(plan.body[static_cast<size_t>(s.value)].dtype));
  IslContext ctx;
  for (int width = std::min({8, policy.vectorBytes / widest, maxWidth}); width >= 2; width /= 2) {
    Vectorization r;
    r.width = width;
    r.axis = alongI ? 'i' : 'j';
    r.accumulatorLanes = alongI && !elementwise ? width : 1;
    if ((alongI ? plan.M : plan.N) % width == 0) {
      if (classifyAccesses(ctx.get(), plan, r, policy)) return r;
      r.accesses.clear();
    }
    // Rows off the vector boundary: masked lanes over the flat buffer's vectors.
    if (alongJ && !(r.shift = rowShift(plan, width)).empty() && classifyAccesses(ctx.get(), plan, r, policy)) return r;
    // An elementwise output whose flat size V does not divide: every vector whole but
    // the last. (Neither attempt above ran: M % V != 0, and lanes run along i.)
    if (elementwise && plan.M % width != 0) {
      r.shift = Vectorization::kUnshifted;
      if (classifyAccesses(ctx.get(), plan, r, policy)) return r;
    }
  }
  return none;
}

// A scan's loads when its lanes are not contiguous: all read one element per lane, so
// that codegen guards them with the lane's bounds like masked lanes (the scan's
// domain is padded to whole tiles, schedule.h).
Vectorization gatheredScan(const KernelPlan& plan, int width, char axis) {
  Vectorization v;
  v.width = width;
  v.axis = axis;
  v.strided = width > 1;
  for (const BodyValue& b : plan.body)
    if (b.hasOffset()) v.accesses.push_back(LaneAccess::Gather);
  return v;
}

// Points of a column per thread in a y-reduce scan: the block scan and its barriers run
// once per V points instead of once per point.

int columnScanLanes(const KernelPlan& plan, int maxWidth, const LaunchPolicy& p) {
  const int most = maxWidth == KernelConfig::kAuto ? p.columnScanLanes : std::min(maxWidth, p.columnScanLanes);
  for (int width = most; width >= 2; width /= 2)
    if (plan.N % width == 0 && plan.N >= 2 * width) return width;
  return 1;
}

}  // namespace

Vectorization chooseVectorization(const KernelPlan& plan, const LaunchPolicy& policy, int maxWidth) {
  if (plan.hasScan() && plan.form == CanonicalForm::YReduce) {
    const int width = plan.hasComplexValue() ? 1 : columnScanLanes(plan, maxWidth, policy);  // complex64: scalar code
    return gatheredScan(plan, width, width > 1 ? 'j' : 'i');
  }
  Vectorization v = chooseLanes(plan, maxWidth, policy);
  return plan.hasScan() && v.width == 1 ? gatheredScan(plan, 1, 'j') : v;
}

}  // namespace polyred
