// Kernel partitioning: decides which ops share a kernel.
//
// Takes: a verified Graph. Gives: a KernelPartition (kernels in launch order), each
// flattened into canonical form by flatten.h. Current rules, each recorded in the
// plan's `why` for --dump:
//   - reductions over the same input shape and reduced axes share one kernel, with
//     their elementwise producers fused (recomputed per point, never materialized);
//   - elementwise-only outputs of one shape share one coalesced elementwise kernel;
//   - work that consumes a reduction result (epilogues, dependent reductions) is
//     rejected with UnsupportedError for now.
#pragma once

#include "canon/kernel_plan.h"

namespace polyred {

KernelPartition partitionGraph(const Graph& g);

}  // namespace polyred
