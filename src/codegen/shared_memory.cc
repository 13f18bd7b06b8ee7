#include "codegen/shared_memory.h"

#include <algorithm>

#include "support/error.h"

#include "codegen/tuple_emitter.h"
#include "device/polyred_reduce_layout.cuh"

namespace polyred {

namespace {
int64_t alignUp(int64_t bytes, int64_t alignment) { return (bytes + alignment - 1) / alignment * alignment; }

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

std::vector<ReductionArrays> reductionArrays(const PolyKernel& k) {
  const KernelPlan& p = k.plan;
  const Binding& b = k.binding;
  if (p.hasScan() || !k.tiling.empty()) return {};
  const bool y = p.form == CanonicalForm::YReduce;
  const int64_t columns = std::max(1, polyred_dev::ColumnsLayout::make(b.BX, b.BY).smem_elements());
  const int64_t slots = y ? std::max(columns, reducesLanesTogether(k) ? laneSlots(k) : 0)
                          : std::max(1, polyred_dev::RowsLayout::make(b.BX, b.BY).partial_slots());
  std::vector<ReductionArrays> arrays;
  for (size_t r = 0; r < p.reductions.size(); ++r) {
    const ReductionOutput& out = p.reductions[r];
    if (out.sharesAccumulatorOf >= 0) continue;  // no storage of its own
    const int64_t acc = out.reduction.isTuple() ? tupleBytes(out.reduction) : dtypeBytes(out.reduction.accType);
    const int64_t totals = out.stage + 1 < p.passes() ? (y ? b.BX : b.BY) * acc : 0;  // a row-resident pass's
    arrays.push_back({static_cast<int>(r), slots * acc, totals});
  }
  return arrays;
}

// Mirrors KernelEmitter::emitDeclarations (and block_arrive_last's flag, a function-scope
// __shared__ word: 4 bytes, counted as 8).
int64_t staticSharedBytes(const PolyKernel& k) {
  const KernelPlan& p = k.plan;
  const Binding& b = k.binding;
  if (!k.tiling.empty()) return k.tiling.sharedBytes(p);  // the staged loads' tiles
  if (p.hasScan()) {  // one block scan (polyred_scan.cuh's scan_smem); over several blocks, the look-back's
    const bool y = p.form == CanonicalForm::YReduce;
    const int64_t slots = y ? std::max(1, polyred_dev::ColumnsLayout::make(b.BX, b.BY).smem_elements())
                            : std::max(1, polyred_dev::RowsLayout::make(b.BX, b.BY).partial_slots());
    const int64_t acc = dtypeBytes(p.reductions.at(0).reduction.accType);
    const int64_t transposed = b.BY * (b.BX + 1) + b.BX + (b.BY > 32 ? b.BX * (b.BY / 32) : 0);
    const int64_t scan = acc * (y ? transposed : b.BY * std::max(1, b.BX / 32));
    return scan + (b.multiBlockScan() ? slots * acc + (y ? b.BX : b.BY) * acc + 16 : 0);
  }
  int64_t bytes = 0;
  for (const ReductionArrays& a : reductionArrays(k)) bytes += a.slotBytes + a.totalsBytes;
  if (b.multiBlock()) bytes += 8;  // block_arrive_last's flag
  return bytes;
}

bool reductionArraysAreDynamic(const PolyKernel& k) {
  return staticSharedBytes(k) > kMaxStaticSharedBytes && !k.plan.hasScan() && k.tiling.empty();
}

int64_t dynamicReductionBytes(const PolyKernel& k) {
  if (!reductionArraysAreDynamic(k)) return 0;
  int64_t bytes = 0;
  for (const ReductionArrays& a : reductionArrays(k)) bytes += alignUp(a.slotBytes, 16) + alignUp(a.totalsBytes, 16);
  return bytes;
}

std::string dynamicArrayBuffer() {
  return "  extern __shared__ __align__(16) unsigned char pr_reduce_smem[];  // the block reductions' arrays: past "
         "48 KiB of static shared memory\n";
}

std::string reductionArrayDeclarations(const PolyKernel& k, size_t r, const std::string& type,
                                       const std::string& staticSize, bool totals,
                                       const std::vector<ReductionArrays>* carved, int64_t& offset) {
  const std::string n = std::to_string(r);
  const int64_t rows = k.plan.form == CanonicalForm::YReduce ? k.binding.BX : k.binding.BY;
  if (!carved)
    return "  __shared__ " + type + " smem" + n + "[" + staticSize + "];\n" +
           (totals ? "  __shared__ " + type + " totals" + n + "[" + std::to_string(rows) + "];\n" : "");
  const auto mine = std::find_if(carved->begin(), carved->end(),
                                 [&](const ReductionArrays& a) { return a.reduction == static_cast<int>(r); });
  POLYRED_CHECK(mine != carved->end(), k.plan.name << ": no shared array for reduction " << r);
  auto carve = [&](const std::string& name, int64_t bytes) {
    std::string line = "  " + type + "* const " + name + n + " = reinterpret_cast<" + type + "*>(pr_reduce_smem + " +
                       std::to_string(offset) + ");\n";
    offset += alignUp(bytes, 16);
    return line;
  };
  std::string text = carve("smem", mine->slotBytes);
  if (totals) text += carve("totals", mine->totalsBytes);
  return text;
}

}  // namespace polyred
