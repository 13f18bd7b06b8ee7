#include "driver/row_variants.h"

#include <limits>

#include "support/error.h"

namespace polyred {

namespace {

constexpr int64_t kEveryRowCount = std::numeric_limits<int64_t>::max();
constexpr size_t kMostSteps = 64;

// What the pipeline binds `plan` with at `units` values of its symbol (coefficient *
// units rows), a split of its rows withdrawn.
BoundKernel choiceAt(const KernelPlan& plan, int64_t units, const Target& target, const KernelConfig& config) {
  KernelPlan at = plan;
  at.M = plan.symbolicRows->coefficient * units;
  BoundKernel b = bindAlone(at, target, config);
  if (b.binding.multiBlock()) {
    KernelConfig oneBlockARow = config;
    oneBlockARow.splitBlocks = 1;
    b = bindAlone(at, target, oneBlockARow);
  }
  POLYRED_CHECK(!b.binding.multiBlock() && !b.binding.multiBlockScan(), plan.name << ": split rows at " << units);
  return b;
}

// A range of symbol values [from, next range's from) and the choice there.
struct Step {
  int64_t from;
  BoundKernel choice;
};

// Appends the steps in (lo, hi] where the choice changes, lo's choice `atLo` and hi's
// `atHi` (different).
void findSteps(const KernelPlan& plan, const Target& target, const KernelConfig& config, int64_t lo,
               const BoundKernel& atLo, int64_t hi, const BoundKernel& atHi, std::vector<Step>& steps) {
  if (hi - lo == 1) {
    // The policy's choices are a few steps in the row count; many mean that the
    // comparison sees something that follows the rows.
    POLYRED_CHECK(steps.size() < kMostSteps, plan.name << ": the binding changes at more than " << kMostSteps
                                                       << " row counts");
    steps.push_back({hi, atHi});
    return;
  }
  const int64_t mid = lo + (hi - lo) / 2;
  const BoundKernel atMid = choiceAt(plan, mid, target, config);
  if (!sameCodeForRows(atLo, atMid)) findSteps(plan, target, config, lo, atLo, mid, atMid, steps);
  if (!sameCodeForRows(atMid, atHi)) findSteps(plan, target, config, mid, atMid, hi, atHi, steps);
}

// Every step from 1 to the probe's `probeUnits`, the first from 1.
std::vector<Step> stepsUpTo(const KernelPlan& plan, int64_t probeUnits, const Target& target,
                            const KernelConfig& config) {
  std::vector<Step> steps{{1, choiceAt(plan, 1, target, config)}};
  int64_t last = 1;
  BoundKernel atLast = steps.front().choice;
  for (int64_t units = 2; last < probeUnits; units *= 2) {
    const int64_t sample = std::min(units, probeUnits);
    BoundKernel atSample = choiceAt(plan, sample, target, config);
    if (!sameCodeForRows(atLast, atSample)) findSteps(plan, target, config, last, atLast, sample, atSample, steps);
    last = sample;
    atLast = std::move(atSample);
  }
  return steps;
}

// At most kMaxRowVariants steps: the narrowest between the first and the last gives
// its values to the step above it (which then starts where it started); neighbours
// left with the same choice are one step.
void keepAtMostTheLimit(std::vector<Step>& steps) {
  while (steps.size() > kMaxRowVariants) {
    size_t narrowest = 1;
    for (size_t k = 1; k + 1 < steps.size(); ++k)
      if (steps[k + 1].from - steps[k].from < steps[narrowest + 1].from - steps[narrowest].from) narrowest = k;
    steps[narrowest + 1].from = steps[narrowest].from;
    steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(narrowest));
    if (sameCodeForRows(steps[narrowest - 1].choice, steps[narrowest].choice))
      steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(narrowest));
  }
}

}  // namespace

bool sameCodeForRows(const BoundKernel& a, const BoundKernel& b) {
  const Binding &x = a.binding, &y = b.binding;
  const Vectorization &v = a.vector, &w = b.vector;
  // (An elementwise kernel's GX is its grid along the rows, which follows them.)
  const bool sameSplit = x.reduction ? x.GX == y.GX : true;
  return x.BX == y.BX && x.BY == y.BY && sameSplit && x.reduction == y.reduction && x.chunk == y.chunk &&
         x.scanChunk == y.scanChunk && x.partials == y.partials && v.width == w.width && v.axis == w.axis &&
         v.shift == w.shift && v.strided == w.strided && v.accumulatorLanes == w.accumulatorLanes &&
         a.tiling.empty() && b.tiling.empty();
}

std::vector<RowVariant> chooseRowVariants(const KernelPlan& plan, const Target& target, const KernelConfig& config) {
  POLYRED_CHECK(plan.symbolicRows && plan.M % plan.symbolicRows->coefficient == 0,
                plan.name << ": row variants of a kernel without symbolic rows");
  const int64_t coefficient = plan.symbolicRows->coefficient;
  std::vector<Step> steps = stepsUpTo(plan, plan.M / coefficient, target, config);
  keepAtMostTheLimit(steps);
  // The probe's own binding, as bound before variants: the last variant's.
  steps.back().choice = bindAlone(plan, target, config);
  std::vector<RowVariant> variants;
  for (size_t k = 0; k < steps.size(); ++k) {
    const bool last = k + 1 == steps.size();
    RowVariant v{k == 0 ? 0 : coefficient * steps[k].from,
                 last ? kEveryRowCount : coefficient * steps[k + 1].from - 1, std::move(steps[k].choice)};
    v.bound.binding = withRows(v.bound.binding, plan.form, plan.M, target);
    variants.push_back(std::move(v));
  }
  return variants;
}

std::string describeRows(const SymbolicRows& rows) {
  const std::string count = (rows.coefficient == 1 ? "" : std::to_string(rows.coefficient) + "*") + rows.name;
  if (rows.mostRows == kEveryRowCount) return count + " rows: " + std::to_string(rows.fewestRows) + " on";
  return count + " rows: " + std::to_string(rows.fewestRows) + " to " + std::to_string(rows.mostRows);
}

}  // namespace polyred
