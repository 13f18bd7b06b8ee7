// The static shared memory of a generated kernel.
//
// Takes a PolyKernel; gives the bytes its block reductions, row-resident totals and
// last-block flag declare -- what codegen/cuda_emitter prints, sized with the layout
// functions the device library uses (polyred_reduce_layout.cuh). The pipeline groups
// launches by it (canon/launch_groups) and the emitter refuses tuple kernels past the
// static limit.
#pragma once

#include <cstdint>

#include "poly/poly_kernel.h"

namespace polyred {

// The static shared memory one block may declare.
inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

int64_t staticSharedBytes(const PolyKernel& k);

}  // namespace polyred
