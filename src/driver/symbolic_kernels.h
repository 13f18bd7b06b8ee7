// Symbolic kernels: which kernels of a symbolic graph iterate over rows that follow a
// size symbol, and the refusal of everything else that would depend on a symbol.
//
// Takes: the kernel partitions of a template graph (ir/symbolic_dims.h) instantiated at
// its two probe sets. The partition is a function of the sizes; comparing it at two
// values of every symbol shows where a symbol reaches it:
//   - a kernel whose plan is identical at both (M too) does not depend on the symbols;
//   - a kernel whose plan is identical but for M, where M is the same coefficient times
//     one symbol's probe in both, iterates over coefficient * symbol rows: its plan gets
//     SymbolicRows. Offsets compare as the functions of (i, j) they denote (isl's
//     form). Each constant of a plan is at most linear in the kernel's one symbol (a
//     tensor holds a symbol in one axis at most: ir/symbolic_dims), so a plan equal at
//     two values of it is the same at every value: one kernel for all;
//   - a temporary between kernels whose elements are the same coefficient times one
//     symbol's probe in both is sized by that symbol (Temporary::symbol; the runtime
//     allocates it at launch);
//   - anything else is refused with polyred::Error naming the file and the kernel: a
//     kernel whose offsets or reduced extent involve a symbol (a symbol in a reduced
//     axis, or in an axis that does not flatten into the outer rows: a broadcast
//     along it, a transpose), a scatter's or an in-place output's temporary sized by a
//     symbol, a temporary sized otherwise, a symbolic kernel that is
//     not an x-reduce or elementwise (all-reduce, y-reduce, scan, scatter), and a
//     partition whose kernels differ between the two sizes.
// Binding choices for symbolic kernels are made at the row counts where the policy's
// choice changes, one kernel each (driver/row_variants.h); checkSymbolicBinding
// refuses what would tie a symbolic kernel to its row count.
#pragma once

#include "canon/kernel_plan.h"
#include "ir/graph.h"
#include "poly/binding.h"
#include "poly/transpose_tiling.h"
#include "poly/vectorize.h"

namespace polyred {

// Sets SymbolicRows on the kernels of `atProbes` (the partition of the template at
// probe set 0) that iterate over symbolic rows; throws Error for the rest. `g` is the
// template (its symbols and file name).
void markSymbolicKernels(KernelPartition& atProbes, const KernelPartition& atSecondProbes, const Graph& g);

// Refuses a symbolic kernel whose binding splits its rows' reduction across blocks (a
// workspace of one slot per row would be sized by the symbol) or that vectorizes or
// tiles its rows.
void checkSymbolicBinding(const KernelPlan& plan, const Binding& b, const Vectorization& vec,
                          const TransposeTiling& tiling, const Graph& g);

}  // namespace polyred
