// The CPU executor's memory for one kernel, before it runs (driver/cpu_check's budget):
// takes a lowered kernel and the run's options; gives the bytes BlockMachine
// (cpu_executor.cc) will hold -- its blocks to run, per-row totals, accumulators and the
// block-order partials of deterministic and tuple reductions.
#include <algorithm>

#include "codegen/cpu_block_sample.h"
#include "codegen/cpu_executor.h"
#include "codegen/symbolic_launch.h"
#include "ir/tuple_reduction.h"

namespace polyred {

namespace {

// a * b, saturating far above any memory limit instead of overflowing.
int64_t timesSaturated(int64_t a, int64_t b) {
  constexpr int64_t kMax = int64_t{1} << 60;
  return a <= 0 || b <= 0 ? 0 : a > kMax / b ? kMax : a * b;
}

// Bytes of one tuple value on the heap: the vector, its Scalars and malloc's header.
int64_t tupleValueBytes(const TupleReduction& t) {
  return static_cast<int64_t>(sizeof(TupleValue) + 16 + t.fields.size() * sizeof(Scalar));
}

}  // namespace

int64_t cpuExecutorBytes(const PolyKernel& kernel, const CpuExecOptions& options) {
  const PolyKernel& k = kernelForRows(kernel, options.sizes);
  const SizedKernel sized = sizedKernel(k, options.sizes);
  const KernelPlan& p = sized.plan;
  const Binding& b = sized.binding;
  // As BlockMachine's constructor decides (det_).
  const bool blockOrder = options.deterministic || p.needsBlockOrderCombine() || b.partials;
  const int64_t rowsTimesBlocks = timesSaturated(p.M, b.GX);
  int64_t bytes = std::min<int64_t>(blocksToRunBytes(p, b, options.maxPoints), int64_t{1} << 60) +
                  timesSaturated(b.tiles, sizeof(unsigned));
  const int64_t accumulators = int64_t{b.BX} * b.BY * static_cast<int64_t>(p.reductions.size()) *
                               std::max(1, k.vector.accumulatorLanes);
  for (const auto& r : p.reductions) {
    const int64_t value = r.reduction.isTuple() ? tupleValueBytes(*r.reduction.tuple) : sizeof(Scalar);
    bytes += timesSaturated(p.M, sizeof(Scalar)) + timesSaturated(accumulators, value);
    if (r.reduction.isTuple() || blockOrder) bytes += timesSaturated(rowsTimesBlocks, value);
  }
  if (p.hasOrderedReduction()) bytes += timesSaturated(rowsTimesBlocks, 24);  // OrderWitness spans
  return std::min<int64_t>(bytes, int64_t{1} << 60);
}

}  // namespace polyred
