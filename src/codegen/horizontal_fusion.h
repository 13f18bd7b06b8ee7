// Horizontal fusion: independent kernels of one sub-graph in one launch.
//
// Takes: the PolyKernels of one launch group (canon/launch_groups.h), each bound with
// the same number of threads per block. Gives: one KernelSpec whose __global__ function
// hands each part a contiguous range of blockIdx.x -- part p gets GX_p * GY_p blocks,
// and block b of its range runs as the part's block (b % GX_p, b / GX_p) -- and calls
// the part's run() (codegen/cuda_emitter.h) on a flat block. Each part keeps its own
// binding, tiling, workspaces and tickets; a pointer that several parts use (an input
// two parts read) is one parameter. Blocks of different parts never wait for each
// other, so the launch is correct in any block order.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda_emitter.h"
#include "codegen/kernel_spec.h"
#include "ir/graph.h"
#include "poly/poly_kernel.h"

namespace polyred {

KernelSpec fuseHorizontally(const Graph& g, const std::vector<const PolyKernel*>& parts,
                            const CodegenOptions& options, const std::string& name);

}  // namespace polyred
