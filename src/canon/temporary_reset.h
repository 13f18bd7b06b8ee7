// Scatter temporaries kept zero between launches, so no memset precedes their scatter.
//
// Takes: a KernelPartition. Gives: the same partition in which each temporary that a
// ScatterAdd adds into (canon/scatter_fallback) and that exactly one other kernel reads
// -- elementwise, over the temporary's own points, each loaded once at its own offset
// (the cast back to float16, the Add of a base, the Exp of segment sums) -- is
// Temporary::keptZero: that reader also stores zero where it loaded a nonzero value
// (ElementwiseOutput::zeroWhereNonzero), and the runtime zeroes the temporary once when
// it allocates it. A sparse scatter's temporary is mostly zero, so the reader writes
// little, and the memset of the whole temporary before every launch is gone. Other
// scatter temporaries (read by several kernels, gathered, read at other points) keep
// the memset (KernelSpec::initFirst).
#pragma once

#include "canon/kernel_plan.h"

namespace polyred {

void keepScatterTemporariesZero(KernelPartition& partition);

}  // namespace polyred
