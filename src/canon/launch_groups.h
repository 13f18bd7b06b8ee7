// Launch grouping: which kernels of one sub-graph may run in the same launch.
//
// Takes: a KernelPartition (kernels in a valid launch order) and its Graph. Gives: the
// kernels grouped into launches, in launch order. Kernels in one group touch no buffer
// that another kernel of the group writes, so codegen may fuse them horizontally: one
// kernel in which each part owns a range of blocks (the parts of a MindSpore
// `*_parallel` file, or elementwise outputs of different shapes). A kernel's group is
// its depth in the dependence graph (1 + the deepest kernel it depends on), so every
// dependence crosses from an earlier launch to a later one. Dependences are read off the
// buffers: graph inputs, outputs (an in-place output is its input's buffer) and
// temporaries; read-after-write, write-after-read and write-after-write all count.
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "ir/graph.h"

namespace polyred {

struct LaunchGroup {
  std::vector<int> kernels;  // indices into KernelPartition::kernels, in partition order
};

std::vector<LaunchGroup> groupIndependentKernels(const KernelPartition& partition, const Graph& g);

// "launch 0: k0 k2 | launch 1: k1" with the kernels' names, for dumps and messages.
std::string toString(const std::vector<LaunchGroup>& groups, const KernelPartition& partition);

}  // namespace polyred
