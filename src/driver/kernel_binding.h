// Binding the kernels of a partition to the hardware: each kernel's vector lanes,
// transpose tiles and block binding, then one block size per launch group.
//
// Takes: a KernelPartition, its launch groups (canon/launch_groups.h), the target and
// the policy's knobs. Gives: a BoundKernel per partition kernel -- what
// buildPolyKernel schedules. A kernel alone takes its natural choice (bindAlone); in
// a launch group of several kernels the parts with smaller blocks are bound again
// with the group's largest, and the part with the most blocks splits its rows again
// around the others' blocks (chooseBinding's blocksBeside). A symbolic kernel's rows
// are neither transpose tiles nor vector lanes (their count is not known to divide).
#pragma once

#include <vector>

#include "canon/kernel_plan.h"
#include "canon/launch_groups.h"
#include "poly/binding.h"
#include "poly/kernel_config.h"
#include "poly/transpose_tiling.h"
#include "poly/vectorize.h"

namespace polyred {

struct BoundKernel {
  Vectorization vector;
  Binding binding;
  TransposeTiling tiling;  // an elementwise kernel through shared-memory tiles (vector: Elem's lanes)
};

// The choice for `plan` launched alone: its lanes or tiles, then its binding.
BoundKernel bindAlone(const KernelPlan& plan, const Target& target, const KernelConfig& config);

// bindAlone for every kernel of `partition`, then one block size and room in the wave
// for the kernels of each launch group of several.
std::vector<BoundKernel> bindKernels(const KernelPartition& partition, const std::vector<LaunchGroup>& groups,
                                     const Target& target, const KernelConfig& config);

}  // namespace polyred
