// The static shared memory of a generated kernel.
//
// Takes a PolyKernel; gives the bytes its block reductions, row-resident totals and
// last-block flag (or a tiled transpose's tiles) declare -- what codegen/cuda_emitter prints, sized with the layout
// functions the device library uses (polyred_reduce_layout.cuh). The pipeline groups
// launches by it (canon/launch_groups) and the emitter refuses tuple kernels past the
// static limit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "poly/poly_kernel.h"

namespace polyred {

// The static shared memory one block may declare.
inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

// The shared memory of a kernel's block reductions, as the emitter declares it: per
// reduction with storage of its own, its block-reduction array and, for a total read by
// a later pass, the row totals (0 bytes where it has none). Empty for scans and tiled
// transposes, whose shared memory is of another kind.
struct ReductionArrays {
  int reduction = 0;  // into KernelPlan::reductions
  int64_t slotBytes = 0;
  int64_t totalsBytes = 0;
};
std::vector<ReductionArrays> reductionArrays(const PolyKernel& k);

int64_t staticSharedBytes(const PolyKernel& k);

// Whether the block reductions' arrays go to dynamic shared memory: with many
// reductions in one kernel (a backward's column sums over every layer) they add up past
// the 48 KiB a block may declare statically. The emitter then carves them out of one
// dynamic buffer (16-byte aligned, in reduction order) and the launch opts in.
bool reductionArraysAreDynamic(const PolyKernel& k);
int64_t dynamicReductionBytes(const PolyKernel& k);  // 0 unless reductionArraysAreDynamic

// The declaration of the dynamic buffer the arrays are carved from.
std::string dynamicArrayBuffer();

// The declarations of reduction r's array `smem<r>` (`staticSize` elements of `type`)
// and, where `totals`, its row totals `totals<r>`: static arrays where `carved` is null,
// else pointers into the dynamic buffer at `offset` (advanced past them), sized by
// `carved`, the kernel's reductionArrays.
std::string reductionArrayDeclarations(const PolyKernel& k, size_t r, const std::string& type,
                                       const std::string& staticSize, bool totals,
                                       const std::vector<ReductionArrays>* carved, int64_t& offset);

// Whether a y-reduce's vector lanes (a thread owning V columns) reduce over the block
// all at once (block_reduce_y_lanes: V * BY * (BX + 1) accumulators of shared memory per
// reduction, all of them within a third of the static limit) rather than lane by lane.
bool reducesLanesTogether(const PolyKernel& k);

}  // namespace polyred
