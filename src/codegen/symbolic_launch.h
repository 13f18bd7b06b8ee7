// What a symbolic kernel (canon's SymbolicRows) adds to its launch: the size
// parameters after its pointers, the rule by which its grid follows the rows, and the
// pick among its row variants.
//
// Takes: a kernel's plan and binding. Gives: the `long long size_<symbol>` parameter
// declarations, and the GridRule: blocks along the row tiles (blockIdx.y of a
// reduction, of BY rows each; blockIdx.x of an elementwise kernel, BX rows each) as many
// as the rows need, at most the compiled grid, whose grid-stride loop takes the rest,
// and the row counts the kernel serves; the variant that serves given sizes
// (PolyKernel::rowVariants, KernelSpec::rowVariants: a comparison of the row count
// with each variant's range, on the host); and the kernel as launched at given sizes.
#pragma once

#include <vector>

#include "codegen/kernel_params.h"
#include "poly/poly_kernel.h"

namespace polyred {

std::vector<ParamDeclaration> sizeParams(const KernelPlan& p);
GridRule gridRuleOf(const PolyKernel& k);

// The kernel launched at the symbols' values `sizes`: the row variant of `k` whose
// rows hold coefficient * S, else `k` itself (also when `sizes` are empty: a kernel
// without variants, or no sizes given, as for a concrete program). The same pick
// among a launch's KernelSpecs is codegen/kernel_spec.h's.
const PolyKernel& kernelForRows(const PolyKernel& k, const std::vector<int64_t>& sizes);

// A kernel's plan and binding as launched (what the CPU executor runs): a symbolic
// kernel's at its sizes -- M, the i-tiles and the grid along them as
// LaunchConfig::gridAt computes it -- and the symbol's value, which the executor puts
// in the slot of the size parameter (sizeSlot, its own to set).
struct SizedKernel {
  KernelPlan plan;
  Binding binding;
  int sizeSlot = -1;
  int64_t size = 0;
};
SizedKernel sizedKernel(const PolyKernel& k, const std::vector<int64_t>& sizes);

}  // namespace polyred
