#include "codegen/shared_memory.h"

#include <algorithm>

#include "codegen/tuple_emitter.h"
#include "device/polyred_reduce_layout.cuh"

namespace polyred {

namespace {
// The accumulators block_reduce_y_lanes stages (polyred_reduce_layout.cuh, smem_y_lanes).
int64_t laneSlots(const PolyKernel& k) {
  const int lanes = k.vector.accumulatorLanes;
  return int64_t{lanes} * polyred_dev::y_lane_stride(k.binding.BX, k.binding.BY, lanes);
}
}  // namespace

bool reducesLanesTogether(const PolyKernel& k) {
  if (k.plan.form != CanonicalForm::YReduce || k.vector.accumulatorLanes < 2 || k.plan.passes() > 1 || k.plan.hasScan())
    return false;
  int64_t bytesPerSlot = 0;  // each reduction with an accumulator of its own has its array
  for (const ReductionOutput& r : k.plan.reductions)
    if (r.sharesAccumulatorOf < 0 && !r.reduction.isTuple()) bytesPerSlot += dtypeBytes(r.reduction.accType);
  return bytesPerSlot > 0 && laneSlots(k) * bytesPerSlot <= kMaxStaticSharedBytes / 3;
}

// Mirrors KernelEmitter::emitDeclarations (and block_arrive_last's flag, a function-scope
// __shared__ word: 4 bytes, counted as 8).
int64_t staticSharedBytes(const PolyKernel& k) {
  const KernelPlan& p = k.plan;
  const Binding& b = k.binding;
  const bool y = p.form == CanonicalForm::YReduce;
  const int64_t columns = std::max(1, polyred_dev::ColumnsLayout::make(b.BX, b.BY).smem_elements());
  const int64_t slots = y ? std::max(columns, reducesLanesTogether(k) ? laneSlots(k) : 0)
                          : std::max(1, polyred_dev::RowsLayout::make(b.BX, b.BY).partial_slots());
  if (!k.tiling.empty()) return k.tiling.sharedBytes(p);  // the staged loads' tiles
  int64_t bytes = 0;
  if (p.hasScan()) {  // one block scan (polyred_scan.cuh's scan_smem); over several blocks, the look-back's
    const int64_t acc = dtypeBytes(p.reductions.at(0).reduction.accType);
    const int64_t transposed = b.BY * (b.BX + 1) + b.BX + (b.BY > 32 ? b.BX * (b.BY / 32) : 0);
    const int64_t scan = acc * (y ? transposed : b.BY * std::max(1, b.BX / 32));
    return scan + (b.multiBlockScan() ? slots * acc + (y ? b.BX : b.BY) * acc + 16 : 0);
  }
  for (const ReductionOutput& r : p.reductions) {
    if (r.sharesAccumulatorOf >= 0) continue;  // no storage of its own
    const int64_t acc = r.reduction.isTuple() ? tupleBytes(r.reduction) : dtypeBytes(r.reduction.accType);
    bytes += slots * acc;
    if (r.stage + 1 < p.passes()) bytes += (y ? b.BX : b.BY) * acc;  // totals of a row-resident pass
  }
  if (b.multiBlock()) bytes += 8;  // block_arrive_last's flag
  return bytes;
}

}  // namespace polyred
