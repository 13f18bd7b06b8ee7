// Which thread blocks the CPU executor runs (codegen/cpu_executor): all of them, or a
// sample when a kernel has more points than CpuExecOptions::maxPoints.
//
// A reduction needs every bx of an i-tile row (its blocks combine), so it samples rows
// (by); an elementwise kernel samples blocks (bx), except one with a scatter store,
// whose sums need every block. The first and last unit are always kept.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "poly/poly_kernel.h"

namespace polyred {

// (bx, by) of the blocks to run; `sampled` says whether some were left out. A symbolic
// kernel's plan and binding are given at its sizes (codegen/cpu_executor: M and the
// grid it is launched with).
std::vector<std::pair<int64_t, int64_t>> blocksToRun(const KernelPlan& plan, const Binding& binding, int64_t maxPoints,
                                                     bool& sampled);
inline std::vector<std::pair<int64_t, int64_t>> blocksToRun(const PolyKernel& k, int64_t maxPoints, bool& sampled) {
  return blocksToRun(k.plan, k.binding, maxPoints, sampled);
}
// The bytes blocksToRun(plan, binding, maxPoints, ...) takes while it runs, and its list after.
int64_t blocksToRunBytes(const KernelPlan& plan, const Binding& binding, int64_t maxPoints);

}  // namespace polyred
