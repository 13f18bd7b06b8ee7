// Hardware binding policy: block shape and grid for a canonical kernel.
//
// Takes: a KernelPlan and the target GPU. Gives: a Binding that the schedule builder
// turns into isl constraints. The heuristic (documented in docs/design/schedule-and-binding.md):
//   x-reduce / all-reduce: threadIdx.x runs along the reduced j (coalesced; a power
//     of two for N/8 elements per thread, at least a warp once N >= 32, at most 256;
//     launches too small to fill the GPU take 4 or 2 elements per thread, rows up to
//     512 threads, small all-reduces blocks of 64: smallLaunchConfig in binding.cc),
//     threadIdx.y over BY = 256/BX rows of i; blockIdx.y over row tiles (kept -> outer grid
//     dimension), blockIdx.x splits j over GX blocks (grid-stride) when rows are few.
//   y-reduce: threadIdx.x runs along the kept, contiguous i (coalesced), threadIdx.y
//     along j; blockIdx.y over column tiles, blockIdx.x splits j over GX blocks.
//   elementwise: a 1-D grid-stride loop.
// A kernel with an ordered tuple reduction keeps the shape and grid but gives each
// thread a contiguous chunk of j instead of an interleaved stride (Binding::chunk).
// GX is chosen for the best wave efficiency (blocks / (waves * resident blocks), 8
// resident blocks per SM): 1280 row blocks on 1056 resident slots leave the second
// wave 80% idle, 3 blocks per row fill 91% of 4 waves. Each thread still handles at
// least its items per thread. Where that leaves each thread a short loop whose
// trip differs between threads, a split that gives all the same trip is preferred
// (evenSplit in binding.cc); the `split` knob overrides both.
#pragma once

#include <cstdint>
#include <string>

#include "canon/flatten.h"
#include "canon/kernel_plan.h"
#include "poly/kernel_config.h"
#include "poly/launch_policy.h"

namespace polyred {

struct Target {
  int ccMajor = 9, ccMinor = 0;
  int smCount = 132;  // H100 SXM
  int64_t l2Bytes = int64_t{50} << 20;  // H100 SXM; cache hints weigh a kernel's reads against it
  std::string name = "sm_90 (assumed: no GPU queried)";
  // The shared memory one block may have (static + dynamic, opt-in) on this compute
  // capability: 227 KiB on sm_90.
  int64_t sharedBytesPerBlock() const;
  // The measured thresholds of the binding and vectorization rules for this compute
  // capability's family (poly/launch_policy.h).
  const LaunchPolicy& launchPolicy() const { return launchPolicyFor(ccMajor, ccMinor); }
};

struct Binding {
  int BX = 1, BY = 1;    // blockDim.x, blockDim.y
  int64_t GX = 1, GY = 1;  // gridDim.x, gridDim.y
  int64_t tiles = 1;  // number of i tiles; tiles > GY means blocks loop over tiles
  bool reduction = true;  // false for elementwise kernels (GX > 1 is then just a 1-D grid)
  // 0: thread g along j (g = bx * threads along j + thread) takes j = g, g + stride, ...
  // (interleaved, coalesced). > 0: it takes the contiguous chunk [g * chunk, g * chunk +
  // chunk), so threads, then blocks, hold consecutive ranges of j in order: what an
  // ordered (non-commutative) tuple reduction needs.
  int64_t chunk = 0;
  // A scan whose rows span GX > 1 blocks: each block scans `scanChunk` consecutive
  // tiles of j (a tile: one element or vector per thread along j), its place in the row
  // taken in arrival order, the carry into it found by a look-back over the blocks
  // before (device/polyred_scan.cuh). 0: one block per row.
  int64_t scanChunk = 0;
  // Blocks that split j combine through a partial per block, which the last block of
  // the i-tile to arrive folds in block order (the deterministic protocol), rather
  // than by atomics into the workspace (KernelConfig's `combine` knob). Tuples,
  // complex products and deterministic mode always do; this records the policy's
  // choice for the other kernels (combineThroughPartials).
  bool partials = false;
  bool multiBlock() const { return reduction && GX > 1 && scanChunk == 0; }  // j is split, partials combined
  bool multiBlockScan() const { return scanChunk > 0; }
  int threadsPerBlock() const { return BX * BY; }
  int64_t blocks() const { return GX * GY; }
  std::string toString() const;
};

// How many blocks of `threadsPerBlock` threads the target holds at once (by threads
// alone: 2048 an SM, at most 32 blocks; support/sm_occupancy.h).
int64_t residentBlocks(const Target& target, int threadsPerBlock);

// The items per thread of `config` for a kernel of this form reducing N elements per
// row (resolving "auto" by `policy`).
int itemsFor(const KernelConfig& config, CanonicalForm form, int64_t N, const LaunchPolicy& policy);

// threadsPerBlock > 0 asks for blocks of exactly that many threads (a power of two,
// at least the natural choice's threadsPerBlock()): the parts of a horizontally fused
// kernel share one block size. The extra threads go to more rows (x-reduce), more of
// j (y-reduce) or a larger grid stride; isl guards the ones past the extents.
// `config` holds the knobs of the policy (defaults: the analytic choice); row-resident
// kernels use the defaults but for a larger block size and the items per thread
// (the policy's rowResidentItems unless `items` is given; rowsFitOneBlock promised their rows one
// block under the defaults).
// blocksBeside: blocks that the other parts of a horizontally fused launch add to it;
// a split along j then fills the waves of the whole launch, not its own.
Binding chooseBinding(const KernelPlan& plan, const Target& target, const KernelConfig& config = {},
                      int threadsPerBlock = 0, int64_t blocksBeside = 0);

// `b` over M rows of an x-reduce or elementwise kernel: its row tiles and the grid
// along them as chooseBinding sets them, its block shape and split of j kept. (A
// symbolic kernel's variant is chosen at fewer rows than the probe's but compiled for
// the grid of the probe's: driver/row_variants.h.)
Binding withRows(Binding b, CanonicalForm form, int64_t M, const Target& target);

// Whether a reduction of this space may keep each row in one block (GX == 1) on
// `target` without losing parallelism: its rows are short (one block's threads with
// their items per thread cover a row), or there are enough of them at one block each:
// a quarter wave of the 1024-thread blocks long rows take (66 rows on 132 SMs: a
// softmax over 4096 rows of 50257, or 200 of 16384), two waves of default blocks for
// long columns. Row-resident kernels
// (several passes per row) are planned only where this holds; chooseBinding gives
// them GX == 1.
bool rowsFitOneBlock(const CanonicalSpace& space, const Target& target);

}  // namespace polyred
