// The static shared memory of a generated kernel.
//
// Takes a PolyKernel; gives the bytes its block reductions, row-resident totals and
// last-block flag (or a tiled transpose's tiles) declare -- what codegen/cuda_emitter prints, sized with the layout
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

// Whether a y-reduce's vector lanes (a thread owning V columns) reduce over the block
// all at once (block_reduce_y_lanes: V * BY * (BX + 1) accumulators of shared memory per
// reduction, all of them within a third of the static limit) rather than lane by lane.
bool reducesLanesTogether(const PolyKernel& k);

}  // namespace polyred
