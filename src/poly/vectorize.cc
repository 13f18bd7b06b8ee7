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

constexpr int kVectorBytes = 16;
// An elementwise kernel's lanes are set by its stores (16 bytes of the widest), and a
// load wider than its stores may take two 16-byte accesses a vector. H200, 2026-11-30
// (a hand-written f32 -> f16 cast, blocks of 256, docs/results/notes-2026-11-30.md): 102.8 M
// elements 150.0 us at 4 lanes (16-byte loads, 8-byte stores) against 146.7 at 8 (two
// 16-byte loads, one 16-byte store), 16.8 M 29.8 against 29.3, 4.2 M 10.9 against 10.7.
constexpr int kElementwiseLoadBytes = 2 * kVectorBytes;
// Smaller kernels are launch-bound: lanes only added latency there (H100, 2026-11-21:
// Table 2 sg05, 1280 elements, 4.70 us scalar vs 5.92 us with 4 lanes).
constexpr int64_t kMinElements = int64_t{1} << 16;

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
// store is not one aligned vector.
bool classifyAccesses(isl_ctx* ctx, const KernelPlan& p, Vectorization& vec) {
  bool fits = true, anyContiguous = p.form == CanonicalForm::Elementwise;
  const int loadBytes = p.form == CanonicalForm::Elementwise ? kElementwiseLoadBytes : kVectorBytes;
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

// y-reduce lanes (a thread owning V columns) lost to scalar code on the H100 wherever
// the kept axis is narrow (2026-11-23, polyred tune: [8192,768] and [21128,768] columns
// 1.2-4x slower) while each lane took a block reduction of its own; with many columns
// they won (sg02, 21128 columns: 61.5 -> 52.5 us). Since 2026-11-27 the lanes reduce
// together (block_reduce_y_lanes: deep_fm's [8000,39,80] sums 50.5 -> 44.5 us, an
// embedding bag f16 [30522,768] 13.2 -> 11.7, a global average pool 12.5 -> 11.0), and
// kept axes from 1024 columns take 4 lanes. Measured on the H100 (2026-11-27,
// docs/results/notes-2026-11-27.md), scalar -> 4 lanes: and_bool [131072,1024] over its rows
// 85.8 -> 60.5 us, sum f16 117.2 -> 104.6, wide_deep's [16000,1024] sum 25.9 -> 23.5, a
// transposed [2048,8192] row sum 38.1 -> 32.6 (max f32 [131072,1024] 192.4 -> 198.1 the
// one loss); but every narrower axis lost, and shorter columns too -- the epilogue
// outweighing a thread's few vectors: [16000,512] 15.9 -> 22.7, [8192,768] columns 13.4
// -> 16.1 (f16) and 19.9 -> 33.2 (max f32), [21128,768] 34.3 -> 36.5 (f32), Table 2's
// sg10 13.5 -> 16.4, [4096,1024] (a parallel file's part) 15.3 -> 16.5.
constexpr int64_t kMinColumnsForLanes = 1024;
constexpr int64_t kMinRowsForNarrowLanes = 8192;
// Kept axes of 512 to 1023 columns of 8- and 16-bit data, in columns of at least 8192
// rows, take column pairs (2- or 4-byte loads) (`--config=vector=2,evict=off`, H100,
// 2026-11-27, docs/results/notes-2026-11-27.md; with the cache hints of every single-pass
// kernel since 2026-11-28: sum f16 [21128,768] 17.38 -> 15.86 us on the H200), scalar
// -> pairs: sum f16 [21128,768] over its rows 25.60 -> 21.38 us, and_bool 18.35 ->
// 16.38, sum f16 [8192,768] 13.44 -> 12.50, Table 2's sg10 13.39 -> 12.45, wide_deep's
// f16 [16000,512] 15.92 -> 14.83; wider data lost (max f32 [8192,768] 19.94 -> 24.10,
// sum f32 [21128,768] 34.10 -> 34.66, bert's f32 [2048,768] 8.64 -> 8.86). Narrower
// axes were not measured.
// Maxima of floats, whose blocks combined through partials until 2026-11-30 (now:
// products and user combiners), lost with lanes while the
// partials lay row by row; stored block by block (codegen/cross_block.h), they gain
// from pairs (H100, 2026-11-28, docs/results/notes-2026-11-28.md; scalar -> pairs -> 4 lanes):
// max f16 [21128,768] over its rows 26.77 -> 23.73 -> 32.10 us, [8192,768] 14.69 ->
// 14.93 -> 22.72 (kept: within 2%), f16 [131072,1024] 111.84 (4 lanes, the rule above)
// -> 105.54 with pairs, f32 [131072,1024] 199.15 -> 191.26; so such reductions take
// pairs over kept axes from 1024 columns too, and 32-bit data over narrower ones keeps
// scalar code (max f32 [21128,768] 35.22 -> 37.28, [8192,768] 18.78 -> 20.22).
constexpr int64_t kMinColumnsForPairs = 512;
constexpr int kColumnPairLanes = 2;
constexpr int kMaxColumnPairBytes = 2;
constexpr int64_t kMinColumnsForWideLanes = 8192;
constexpr int kNarrowColumnLanes = 4;
// Since each column's total reaches the cross-block combine from a thread of its own
// (contribute_y_lanes: a warp's atomics over consecutive columns, where each thread's V
// lanes had put every warp-wide atomic over V cache lines), 4 lanes pay on shorter
// columns too, and on 768 columns of 4-byte data, once the tensor holds 6 Mi elements
// (H200, 2026-11-30, docs/results/notes-2026-11-30.md, `polyred tune --candidates=vector=N`,
// scalar -> 4 lanes): sums f16 [8000,1024] 13.23 -> 12.11 us, [8000,1536] 17.82 ->
// 13.79, [4096,1536] 11.14 -> 10.50; f32 [8000,1024] 16.24 -> 15.65, [8000,1536] 21.65
// -> 19.73, [16384,768] 21.86 -> 20.08, [21128,768] 26.32 -> 23.42, [8192,768] 13.89 ->
// 13.78, Table 2's sg07 ([8192,768], two loads) 22.96 -> 19.68. Below 6 Mi elements they
// lost (f32 [4096,1024] 11.14 -> 11.49, [4096,768] 9.89 -> 10.56, every [2048,N]) or
// tied (f32 [8000,768] 13.58 -> 13.66); so did narrower axes (f32 [16384,512] 16.42 ->
// 16.74) and maxima of floats ([8192,768] 14.42 -> 16.13), which keep the rules above.
// 16-bit data over 512 to 1023 columns keeps its pairs ([16384,768] 13.15 us, 4 lanes
// 14.64).
constexpr int64_t kMinColumnsForWordLanes = 768;
constexpr int kWordLaneBytes = 4;  // (64-bit data over 768-1023 columns was not measured)
constexpr int64_t kMinElementsForNarrowLanes = int64_t{6} << 20;

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

// Rows at least this long count as long for the unroll policy below.
constexpr int64_t kLongRowElements = 16384;
// How far the scalar loops of tuple x-/all-reduces are unrolled (loopUnrollFor).
constexpr int kScalarTupleUnroll = 16;

namespace {
// The widest element a kernel loads (0 without loads).
int widestLoadBytes(const KernelPlan& plan) {
  int widest = 0;
  for (const BodyValue& v : plan.body)
    if (v.kind == BodyValue::Kind::Load) widest = std::max(widest, static_cast<int>(dtypeBytes(v.dtype)));
  return widest;
}
}  // namespace

int laneLimitFor(int maxWidth, const KernelPlan& plan) {
  if (maxWidth != KernelConfig::kAuto) return maxWidth;
  if (plan.form != CanonicalForm::YReduce || plan.M >= kMinColumnsForWideLanes) return 16;
  // (Blocks without an atomic for their combiner combine through partials.)
  const bool partials = plan.hasCompareAndSwapCombine();
  if (plan.N >= kMinRowsForNarrowLanes && plan.M >= kMinColumnsForLanes)
    return partials ? kColumnPairLanes : kNarrowColumnLanes;
  const bool wideEnough = plan.M >= kMinColumnsForLanes ||
                          (plan.M >= kMinColumnsForWordLanes && widestLoadBytes(plan) == kWordLaneBytes);
  if (!partials && wideEnough && plan.M * plan.N >= kMinElementsForNarrowLanes) return kNarrowColumnLanes;
  if (plan.N < kMinRowsForNarrowLanes) return 1;
  const bool pairs = plan.M >= kMinColumnsForPairs && widestLoadBytes(plan) <= kMaxColumnPairBytes;
  return pairs ? kColumnPairLanes : 1;
}

// A row-resident kernel with masked lanes ran faster without unrolling its pass loops
// (H100, 2026-11-25, `polyred run --config=...`): softmax f16 [4096,50257] 645.4 us
// unrolled by 4, 640.7 by 2, 488.7 not unrolled (scalar code: 579.8); softmax via
// logsumexp 574.3 / 570.6 / 470.1 (scalar 514.6). Each thread there walks about six
// vectors of its row per pass. Aligned rows kept the default: softmax f32 [8192,512],
// 15.9 us unrolled by 4, 17.7 not. Long aligned rows (each thread walks about eight
// vectors per pass) ran faster unrolled by 2 (H100, `--config=unroll=N`): cross-entropy
// f16 [8192,32000] 341.8 us by 4, 279.4 by 2, 341.0 by 8 (2026-11-25);
// logsumexp f16 [8192,32000] 272.2 by 4, 265.3 by 2, 287.2 by 8 (2026-11-25).
// Since Exps of max-shifted rows take the fast unit (codegen/exp_range.h), by 1 / by 2
// (H100, 2026-11-25): logsumexp f16 [8192,32000] 219.4 / 208.5 us,
// [8192,16384] 117.2 / 113.8, softmax f16 [4096,32768] 341.3 / 281.9, but cross-entropy
// f16 [8192,32000] 237.3 / 311.2 and [8192,16384] 121.2 / 119.9. Cross-entropy's first
// pass folds two reductions (the max and the target logit's sum): unrolled by 2, NVRTC
// gave it 41 registers, one 1024-thread block per SM, 49% occupancy (ncu; by 1: 29
// registers, 96%). Capping the registers instead (__launch_bounds__ with 2 blocks per
// SM) took it to 288 us but softmax [4096,32768] from 281.9 to 319.9 (spills), so the
// rule unrolls by 2 only where each pass folds a single accumulator.
//
// Tuples whose combine is short and who have no later-combine take no lanes
// (chooseVectorization), so each thread of their one-pass x-/all-reduces loads one
// element per iteration: unrolled by 16 it keeps 16 loads in flight. argmax f16
// [4096,50257] (H100, 2026-11-25, before argmax had lanes): 193.1 us by 4,
// 191.3 by 8, 183.4 by 16.
// Tuples whose lanes fold with a later-combine (argmax) hold V lifted tuples per
// vector: unrolled by 4, NVRTC gave argmax f16 [4096,50257] 37 registers (6 blocks of
// 256 per SM, 69% occupancy) and 167.4 us; by 2, 32 registers and 157.9 us; by 1, 158.4
// (H100, 2026-11-26).
constexpr int kLaterCombineLanesUnroll = 2;

bool foldsLanesWithLaterCombine(const KernelPlan& plan) {
  return std::any_of(plan.reductions.begin(), plan.reductions.end(), [](const ReductionOutput& r) {
    return r.reduction.isTuple() && r.reduction.tuple->hasCombineLater();
  });
}

int loopUnrollFor(const KernelPlan& plan, const Vectorization& vec, int requested) {
  if (requested != KernelConfig::kAuto) return requested;
  if (plan.passes() > 1 && vec.masked()) return 1;
  if (plan.passes() > 1 && plan.N >= kLongRowElements) return maxAccumulatorsPerPass(plan) > 1 ? 1 : 2;
  if (plan.passes() == 1 && plan.hasTupleReduction() && plan.form != CanonicalForm::YReduce) {
    if (vec.width == 1) return kScalarTupleUnroll;
    if (foldsLanesWithLaterCombine(plan)) return kLaterCombineLanesUnroll;
  }
  return KernelConfig::kDefaultUnroll;
}

namespace {

// The lanes of a kernel (the policy in the header).
Vectorization chooseLanes(const KernelPlan& plan, int maxWidth) {
  maxWidth = laneLimitFor(maxWidth, plan);
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
  if (plan.M * plan.N < kMinElements) return none;
  // The widest element stored bounds V (16 bytes per access); loads are checked by
  // classifyAccesses (16 bytes, or 32 in two accesses in an elementwise kernel).
  int widest = 1;
  for (const ElementwiseOutput& s : plan.stores) widest = std::max(widest, dtypeBytes(plan.body[static_cast<size_t>(s.value)].dtype));
  IslContext ctx;
  for (int width = std::min({8, kVectorBytes / widest, maxWidth}); width >= 2; width /= 2) {
    Vectorization r;
    r.width = width;
    r.axis = alongI ? 'i' : 'j';
    r.accumulatorLanes = alongI && !elementwise ? width : 1;
    if ((alongI ? plan.M : plan.N) % width == 0) {
      if (classifyAccesses(ctx.get(), plan, r)) return r;
      r.accesses.clear();
    }
    // Rows off the vector boundary: masked lanes over the flat buffer's vectors.
    if (alongJ && !(r.shift = rowShift(plan, width)).empty() && classifyAccesses(ctx.get(), plan, r)) return r;
    // An elementwise output whose flat size V does not divide: every vector whole but
    // the last. (Neither attempt above ran: M % V != 0, and lanes run along i.)
    if (elementwise && plan.M % width != 0) {
      r.shift = Vectorization::kUnshifted;
      if (classifyAccesses(ctx.get(), plan, r)) return r;
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

// Points of a column per thread in a y-reduce scan. H100 (2026-11-27, a
// hand-written cumsum f32 [4096,1024] down its columns, blocks of 32x32): one point per
// thread 32.3 us, 2 25.4, 4 23.7, 8 23.6 -- the block scan and its barriers run once per
// V points instead of once per point.
constexpr int kColumnScanLanes = 8;

int columnScanLanes(const KernelPlan& plan, int maxWidth) {
  const int most = maxWidth == KernelConfig::kAuto ? kColumnScanLanes : std::min(maxWidth, kColumnScanLanes);
  for (int width = most; width >= 2; width /= 2)
    if (plan.N % width == 0 && plan.N >= 2 * width) return width;
  return 1;
}

}  // namespace

Vectorization chooseVectorization(const KernelPlan& plan, int maxWidth) {
  if (plan.hasScan() && plan.form == CanonicalForm::YReduce) {
    const int width = plan.hasComplexValue() ? 1 : columnScanLanes(plan, maxWidth);  // complex64: scalar code
    return gatheredScan(plan, width, width > 1 ? 'j' : 'i');
  }
  Vectorization v = chooseLanes(plan, maxWidth);
  return plan.hasScan() && v.width == 1 ? gatheredScan(plan, 1, 'j') : v;
}

}  // namespace polyred
