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
//                 and write them into its shared tile (TileLayout below)
//   Sync[t]       __syncthreads()
//   Elem[t, e]    thread e computes point (a = e mod TA, b = floor(e / TA)) (or, in a
//                 Flat tile, the run's element e), reading staged loads from the tile:
//                 consecutive threads store consecutive elements
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

// How a tile lies in shared memory.
//  Rows: a row of pitch() slots per a, rows and columns permuted with lanes (below).
//  Flat: where a tile holds the whole of a short a (TA = A < a warp) and b is the dim
//    just outside a, the tile's points are one contiguous run of TB * A outputs. Elem
//    then runs over that run in vectors of Va (f = Va * e; a = f mod A, b = floor(f /
//    A)), so a short row of stores (NCHW -> NHWC's 3 channels) still gets vector stores,
//    and the run's element f lies at slot (f mod Va) * flatPitch + g(floor(f / Va)):
//    lane k of Elem's vector e at k * flatPitch + g(e), a warp's threads in distinct
//    banks. g is the identity or, with flatSwizzle, rotates each aligned 32 slots by
//    their number (g(x) = 32 * floor(x / 32) + (x + floor(x / 32)) mod 32), which
//    spreads Stage's stores when they stride by a multiple of the banks (8 or 16
//    channels). flatSwizzle and flatPitch (at least TB * A / Va, rounded up to 32 with
//    the swizzle) are the pair of 64 candidates that leaves Stage's scalar shared stores
//    the fewest bank conflicts, counted over a tile's warps.
enum class TileLayout { Rows, Flat };

struct TransposeTiling {
  std::vector<int64_t> dims;  // the coalesced point extents (row-major: i is their linearization)
  int a = -1;                 // the innermost dim (dims.size() - 1): where the stores are contiguous
  int b = -1;                 // the dim along which the staged loads are contiguous
  int64_t TA = 1, TB = 1;     // tile extents along a and b
  std::vector<bool> staged;   // per body value: a load read through the shared tile
  // Vector lanes: Elem's (PolyKernel::vector, whose lane 0 points are the multiples of
  // Va) along a (Rows: Va divides A and TA) or along the tile's run of outputs (Flat: Va
  // divides TB * A and B * A); Stage's along b (Vb divides B, TB, and every stride of
  // each staged load but b's, and its origin). With lanes, a Rows tile's rows and
  // columns are permuted so that a warp's scalar shared accesses of one lane hit
  // distinct banks: element (a, b) lies at pitch * row(a) + col(b), row(a) = (a mod
  // Va) * TA / Va + floor(a / Va), col(b) = (b mod Vb) * TB / Vb + floor(b / Vb).
  int Va = 1, Vb = 1;
  TileLayout layout = TileLayout::Rows;
  int64_t flatPitch = 0;     // Flat: slots between Elem's lanes
  bool flatSwizzle = false;  // Flat: the rotation g

  bool empty() const { return a < 0; }
  bool flat() const { return layout == TileLayout::Flat; }
  int64_t tilesAlongA() const;
  int64_t tilesAlongB() const;
  int64_t tiles() const;                         // tilesAlongA * tilesAlongB * the other dims' points
  // Instances of Stage (storeOrder false: vectors of Vb along b) or Elem (true: of Va
  // along a or the run) per tile.
  int64_t instancesPerTile(bool storeOrder) const { return TA * TB / (storeOrder ? Va : Vb); }
  // Between the slots of Elem's consecutive lanes (Stage's lanes have a slot each).
  int64_t elemLaneStride() const { return flat() ? flatPitch : pitch() * (TA / Va); }
  // A Rows tile row's elements: TB, or TB + 1 when even, so that Elem's threads,
  // reading down the rows, hit distinct banks (an odd stride of 4-byte words).
  int64_t pitch() const { return TB % 2 ? TB : TB + 1; }
  int64_t slots() const { return flat() ? Va * flatPitch : TA * pitch(); }  // elements of one staged load's tile
  int stagedLoads() const;
  // Whether body value v is read through a tile (false for an empty tiling).
  bool stages(size_t v) const { return !empty() && staged[v]; }
  // Static shared memory of the tiles (each in its load's compute type).
  int64_t sharedBytes(const KernelPlan& plan) const;
  // isl text over t and e: the point index i of (lane 0 of) Stage[t, e] (storeOrder
  // false) or Elem[t, e] (true); the slot of Stage's lane `lane` and of Elem's lane 0;
  // the constraints saying the point lies inside the tensor (a partial tile at the end
  // of a or b; vectors are whole).
  std::string pointIndex(bool storeOrder) const;
  std::string stageSlot(int lane) const;
  std::string elemSlot() const;
  std::string inside(bool storeOrder) const;
  // The slot of point (a, b) of a tile, and the bank conflicts of Stage's scalar shared
  // stores of `elementBytes`-byte values (the sum over a tile's warps and lanes of the
  // accesses each costs beyond one) -- what flatPitch is chosen by.
  int64_t slotOf(int64_t inA, int64_t inB) const;
  int64_t stageBankConflicts(int64_t elementBytes) const;
  // "tiles of 3 x 256 over [64,50176,3] (a = 2, b = 1); staged: v0" (for dumps).
  std::string describe(const KernelPlan& plan) const;
};

// The tiling of `plan` under the config's `transpose` knob (its `vector` bounds the
// lanes), or an empty one; with a tiling, `elemLanes` (if given) gets Elem's
// Vectorization, of width Va (lanes by `policy`, the target's).
TransposeTiling chooseTransposeTiling(const KernelPlan& plan, const KernelConfig& config, const LaunchPolicy& policy,
                                      Vectorization* elemLanes = nullptr);

// Threads a tiled kernel's block takes: of the multiples of a warp from half of `most`
// to `most`, the largest that leaves the fewest threads idle over a tile's Stage and
// Elem (a flat tile of 3 x 512 with 4 lanes along b and 8 along the run: 384 and 192
// instances, 192 threads). Smaller blocks were slower (H200: 32 threads for vgg16's
// 9 x 128 weight tiles, 4.8 -> 7.7 us).
int tileBlockSize(const TransposeTiling& tiling, int most);

// The binding of a tiled kernel: 1-D blocks of `threadsPerBlock` threads, one tile
// per block up to four waves of resident blocks, then a grid stride.
Binding bindTiles(const TransposeTiling& tiling, const Target& target, int threadsPerBlock);

// The schedule tree and accesses of a tiled kernel (see above); `binding` from bindTiles.
// `vector`: Elem's lanes (width tiling.Va).
ScheduleResult buildTiledSchedule(isl_ctx* ctx, const KernelPlan& plan, const Binding& binding,
                                  const TransposeTiling& tiling, const Vectorization& vector);

}  // namespace polyred
