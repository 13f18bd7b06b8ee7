// Kernel partitioning: decides which ops share a kernel.
//
// Takes: a verified Graph. Gives: a KernelPartition (kernels in launch order), each
// flattened into canonical form by flatten.h. Current rules, each recorded in the
// plan's `why` for --dump:
//   - reductions over the same input shape and reduced axes share one kernel, with
//     their elementwise producers fused (recomputed per point, never materialized);
//   - elementwise-only outputs over a group's anchor shape (the reduction input's,
//     size-1 axes aside) are stored from that group's kernel;
//   - other elementwise-only outputs of one shape share one coalesced elementwise kernel;
//   - outputs computed elementwise from a group's results (mean = sum / n, casts,
//     reshapes) join that group's kernel as an epilogue, applied once per kept row
//     where the final value is produced;
//   - a reduction result read by a later reduction (dependent reductions: a variance
//     of a mean, softmax) or at other rows than its own (a broadcast back over the
//     reduced axes) is materialized into a temporary by its kernel and loaded by the
//     later kernels: the minimal sequence of kernels, in dependence order.
#pragma once

#include "canon/kernel_plan.h"

namespace polyred {

KernelPartition partitionGraph(const Graph& g);

}  // namespace polyred
