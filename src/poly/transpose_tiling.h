// Tiled transposes: an elementwise kernel whose loads run along another axis than its
// stores goes through shared memory a tile at a time.
//
// Takes: an elementwise KernelPlan (KernelPlan::pointShape: the extents whose row-major
// linearization is i) and the config's `transpose` knob. Gives: a TransposeTiling --
// empty where no load transposes (or, under auto, where tiles were measured slower:
// rows of stores shorter than a warp, kernels moving less than 2 MB; see
// transpose_tiling.cc).
//
// The analysis asks isl, per load, whether its offset is affine in the point's
// coordinates (transposes and broadcasts are; a reshape that splits an axis may not
// be) and reads its stride along each. Axes that every affine load reads as one are
// coalesced (a [128,3,3,128] tensor read as [128,128,3,3] is a [128,9,128] one read as
// [128,128,9]). Axis `a` is the innermost one, along which the stores run; axis `b` is
// where the transposing loads are contiguous (stride 1 there, not along a). A tile
// covers TA points along a by TB along b at fixed other coordinates:
//   Stage[t, e]   thread e reads point (b = e mod TB, a = floor(e / TB)) of tile t:
//                 consecutive threads read consecutive elements of each staged load
//                 and write them into its shared tile (a row of pitch() per a)
//   Sync[t]       __syncthreads()
//   Elem[t, e]    thread e computes point (a = e mod TA, b = floor(e / TA)), reading
//                 staged loads from the tile: consecutive threads store consecutive
//                 elements
//   Sync_1[t]     __syncthreads() before the next tile's Stage (blocks that loop; the
//                 AST reads it as statement Sync of pass 1, as Red_1 is Red of pass 1)
// poly/schedule builds this schedule from buildTiledSchedule; codegen emits the tiles
// and barriers, and the CPU executor checks that Elem reads only slots staged since
// the last barrier.
#pragma once

#include <isl/ctx.h>

#include <cstdint>
#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "poly/binding.h"
#include "poly/kernel_config.h"
#include "poly/vectorize.h"

namespace polyred {

struct ScheduleResult;

struct TransposeTiling {
  std::vector<int64_t> dims;  // the coalesced point extents (row-major: i is their linearization)
  int a = -1;                 // the innermost dim (dims.size() - 1): where the stores are contiguous
  int b = -1;                 // the dim along which the staged loads are contiguous
  int64_t TA = 1, TB = 1;     // tile extents along a and b
  std::vector<bool> staged;   // per body value: a load read through the shared tile
  // Vector lanes: Elem's along a (PolyKernel::vector, whose lane 0 points are the
  // multiples of Va: Va divides A and TA), Stage's along b (Vb divides B, TB, and every
  // stride of each staged load but b's, and its origin). With lanes, the tile's rows
  // and columns are permuted so that a warp's scalar shared accesses of one lane hit
  // distinct banks: element (a, b) lies at pitch * row(a) + col(b), row(a) = (a mod
  // Va) * TA / Va + floor(a / Va), col(b) = (b mod Vb) * TB / Vb + floor(b / Vb).
  int Va = 1, Vb = 1;

  bool empty() const { return a < 0; }
  int64_t tilesAlongA() const;
  int64_t tilesAlongB() const;
  int64_t tiles() const;                         // tilesAlongA * tilesAlongB * the other dims' points
  // Instances of Stage (storeOrder false: vectors of Vb along b) or Elem (true: of Va
  // along a) per tile.
  int64_t instancesPerTile(bool storeOrder) const { return TA * TB / (storeOrder ? Va : Vb); }
  // Between the slots of consecutive lanes: Stage's (TB / Vb), Elem's (pitch * TA / Va).
  int64_t laneStride(bool storeOrder) const { return storeOrder ? pitch() * (TA / Va) : TB / Vb; }
  // A tile row's elements: TB, or TB + 1 when even, so that Elem's threads, reading
  // down the rows, hit distinct banks (an odd stride of 4-byte words).
  int64_t pitch() const { return TB % 2 ? TB : TB + 1; }
  int64_t slots() const { return TA * pitch(); }  // elements of one staged load's tile
  int stagedLoads() const;
  // Whether body value v is read through a tile (false for an empty tiling).
  bool stages(size_t v) const { return !empty() && staged[v]; }
  // Static shared memory of the tiles (each in its load's compute type).
  int64_t sharedBytes(const KernelPlan& plan) const;
  // isl text over t and e: the point index i of (lane 0 of) Stage[t, e] (storeOrder
  // false) or Elem[t, e] (true); its slot in a tile; the constraints saying the point
  // lies inside the tensor (a partial tile at the end of a or b; vectors are whole).
  std::string pointIndex(bool storeOrder) const;
  std::string slot(bool storeOrder) const;
  std::string inside(bool storeOrder) const;
  // "tiles of 3 x 256 over [64,50176,3] (a = 2, b = 1); staged: v0" (for dumps).
  std::string describe(const KernelPlan& plan) const;
};

// The tiling of `plan` under the config's `transpose` knob (its `vector` bounds the
// lanes), or an empty one.
TransposeTiling chooseTransposeTiling(const KernelPlan& plan, const KernelConfig& config);

// The binding of a tiled kernel: 1-D blocks of `threadsPerBlock` threads, one tile
// per block up to four waves of resident blocks, then a grid stride.
Binding bindTiles(const TransposeTiling& tiling, const Target& target, int threadsPerBlock);

// The schedule tree and accesses of a tiled kernel (see above); `binding` from bindTiles.
// `vector`: Elem's lanes (width tiling.Va).
ScheduleResult buildTiledSchedule(isl_ctx* ctx, const KernelPlan& plan, const Binding& binding,
                                  const TransposeTiling& tiling, const Vectorization& vector);

}  // namespace polyred
