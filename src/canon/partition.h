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
//   - row-resident kernels (each row reduced inside one block, as the binding policy
//     says): dependent reductions over the same axes (a mean, then a variance of it;
//     softmax's max, then its sum of exponentials) share one kernel as passes over
//     the row, and outputs over the whole row that read the totals at their own row
//     (softmax, layer norm's normalized output) are stored by a last pass;
//   - otherwise a reduction result read by a later reduction or at other rows than its
//     own (a broadcast back over the reduced axes) is materialized into a temporary by
//     its kernel and loaded by the later kernels: the minimal sequence of kernels, in
//     dependence order;
//   - a Scan is a kernel of its own (flatten.h, flattenScan), which also stores the
//     outputs computed from the scan at its own points; a scan result read elsewhere
//     (by a reduction, another kernel, at other points) is materialized likewise;
//   - gathered params that are neither a graph input nor a reduction or scan result
//     (a slice, a gather along another axis: canon/gather_sources leaves them) get an
//     elementwise kernel of their own that stores them into a temporary
//     (flattenMaterialized), launched before the gather's kernel.
#pragma once

#include <functional>

#include "canon/flatten.h"
#include "canon/kernel_plan.h"

namespace polyred {

// Whether every row of a reduction's canonical space is reduced inside one thread
// block. The binding policy (poly/binding.h) answers; canonicalization only asks.
using RowsFitOneBlock = std::function<bool(const CanonicalSpace&)>;

KernelPartition partitionGraph(const Graph& g, const RowsFitOneBlock& rowsFitOneBlock);

}  // namespace polyred
