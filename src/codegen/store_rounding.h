// 16-bit float values that only their stores read stay in float: the store rounds them.
//
// Takes: a KernelPlan and the graph (the dtypes of the outputs it stores). Gives: per
// body value, whether it is a float16/bfloat16 Op -- computed in float, then rounded to
// its dtype (cuda_expr's pr_fit_float16 / pr_fit_bfloat16) -- that nothing reads but
// plain stores into outputs of its own dtype. Those stores round the float to the
// output's dtype to nearest (pr_store, pr_storage), and rounding to a 16-bit float
// twice is rounding once (the second rounding of a value that already is a half changes
// nothing, NaN included), so the kernel leaves out the first: two conversions a lane
// (to half and back), on top of the store's own. The values are bit for bit what they
// were; the CPU executor, which rounds every value, stores the same bits.
// Not taken: reads by other values or reductions, scatters, temporaries, and a Cast of
// an integer to bfloat16 (pr_int_to_bfloat16 rounds once from the integer).
#pragma once

#include <vector>

#include "canon/kernel_plan.h"
#include "ir/graph.h"

namespace polyred {

std::vector<bool> roundedByStores(const KernelPlan& plan, const Graph& graph);

}  // namespace polyred
