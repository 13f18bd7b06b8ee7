#include "poly/vectorize.h"

#include <algorithm>

#include "support/isl_support.h"
#include "support/error.h"

namespace polyred {

namespace {
// `offset` with the axis variable a replaced by (width*a + lane), where a now counts
// vectors; `lane` is a number or an isl variable.
std::string substituteLane(const std::string& offset, char axis, int width, const std::string& lane) {
  return islSubstitute(offset, axis, std::to_string(width) + "*" + axis + (lane.empty() ? "" : " + " + lane));
}
}  // namespace

std::string Vectorization::laneOffset(const std::string& offset, int lane) const {
  return substituteLane(offset, axis, width, lane > 0 ? std::to_string(lane) : "");
}

namespace {

constexpr int kVectorBytes = 16;
// Smaller kernels are launch-bound: lanes only added latency there (H100, 2026-11-21:
// Table 2 sg05, 1280 elements, 4.70 us scalar vs 5.92 us with 4 lanes).
constexpr int64_t kMinElements = int64_t{1} << 16;

// Bounds of the iteration space with the lane axis split: the axis variable counts
// vectors and v is the lane.
std::string laneBounds(const KernelPlan& p, char axis, int width) {
  int64_t M = axis == 'i' ? p.M / width : p.M, N = axis == 'j' ? p.N / width : p.N;
  return "0 <= i < " + std::to_string(M) + " and 0 <= j < " + std::to_string(N) + " and 0 <= v < " +
         std::to_string(width);
}

// Whether offset(V*a + v) == offset(V*a) + step*v (step 1: contiguous, 0: invariant)
// everywhere, and (contiguous) offset(V*a) is a multiple of V.
bool laneStep(isl_ctx* ctx, const KernelPlan& p, const std::string& offset, char axis, int width, int step) {
  std::string bounds = laneBounds(p, axis, width), dom = " : " + bounds + " }";
  std::string lane0 = substituteLane(offset, axis, width, "");
  std::string lhs = "{ [i, j, v] -> [(" + substituteLane(offset, axis, width, "v") + ")]" + dom;
  std::string rhs = "{ [i, j, v] -> [(" + lane0 + " + " + std::to_string(step) + "*v)]" + dom;
  if (!islSameFunction(ctx, lhs, rhs)) return false;
  if (step == 0) return true;
  return islSetIsEmpty(ctx, "{ [i, j, v] : (" + lane0 + ") mod " + std::to_string(width) + " != 0 and " + bounds + " }");
}

}  // namespace

// y-reduce lanes (a thread owning V columns) lost to scalar code on the H100 wherever
// the kept axis is narrow (2026-11-23, polyred tune: [8192,768] and [21128,768] columns
// 1.2-4x slower): V times fewer threads along it, too few column tiles to fill the GPU,
// and V block reductions per thread. With many columns they won (sg02, 21128 columns:
// 61.5 -> 52.5 us). Below that width tuning may still pick them (bool [131072,1024]).
constexpr int64_t kMinColumnsForLanes = 8192;

int laneLimitFor(int maxWidth, const KernelPlan& plan) {
  if (maxWidth != KernelConfig::kAuto) return maxWidth;
  return plan.form == CanonicalForm::YReduce && plan.M < kMinColumnsForLanes ? 1 : 16;
}

Vectorization chooseVectorization(const KernelPlan& plan, int maxWidth) {
  maxWidth = laneLimitFor(maxWidth, plan);
  Vectorization none;
  bool elementwise = plan.form == CanonicalForm::Elementwise;
  bool alongJ = plan.form == CanonicalForm::XReduce || plan.form == CanonicalForm::AllReduce;
  // Lanes run along the contiguous axis: i of elementwise and y-reduce kernels, j of
  // x- and all-reduce kernels.
  bool alongI = !alongJ;
  if (elementwise ? plan.stores.empty() : !plan.stores.empty()) return none;
  if (plan.passes() > 1) return none;  // row-resident passes: scalar for now
  // Tuples fold their lanes as a tree (codegen's emitLaneTree), which reorders the
  // elements of a thread: commutative tuples only, and lanes along j only (a thread
  // owning V columns would hold V tuple accumulators: not done).
  if (plan.hasTupleReduction() && (alongI || plan.hasOrderedReduction())) return none;
  if (plan.hasComplexValue()) return none;    // complex64: scalar code only (not done)
  if (plan.M * plan.N < kMinElements) return none;
  // The widest element accessed contiguously bounds V (16 bytes per access).
  int widest = 1;
  for (const ElementwiseOutput& s : plan.stores) widest = std::max(widest, dtypeBytes(plan.body[static_cast<size_t>(s.value)].dtype));
  IslContext ctx;
  for (int width = std::min({8, kVectorBytes / widest, maxWidth}); width >= 2; width /= 2) {
    int64_t extent = alongI ? plan.M : plan.N;
    if (extent % width != 0) continue;
    Vectorization r;
    r.width = width;
    r.axis = alongI ? 'i' : 'j';
    r.accumulatorLanes = alongI && !elementwise ? width : 1;
    bool fits = true, anyContiguous = elementwise;
    for (const BodyValue& v : plan.body) {
      if (!v.hasOffset()) continue;
      const bool load = v.kind == BodyValue::Kind::Load;
      if (laneStep(ctx.get(), plan, v.offset, r.axis, width, 0)) {
        r.accesses.push_back(LaneAccess::Invariant);
      } else if (laneStep(ctx.get(), plan, v.offset, r.axis, width, 1)) {
        r.accesses.push_back(LaneAccess::Contiguous);
        fits = fits && (!load || dtypeBytes(v.dtype) * width <= kVectorBytes);
        anyContiguous = anyContiguous || load;
      } else {
        r.accesses.push_back(LaneAccess::Gather);
      }
    }
    if (fits && anyContiguous) return r;
  }
  return none;
}

}  // namespace polyred
