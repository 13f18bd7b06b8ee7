// Blocks that combine across one launch (device/polyred_reduce.cuh, "Protocol"): the
// workspaces they share, where each block stores its partial of a row, and how the last
// block of a tile gathers and combines a tile's partials.
//
// Takes: the kernel's form, extents, block shape and lanes, and its accumulators as the
// emitter spells them. Gives: workspace parameters and specs, and CUDA statements.
// The partials' layout follows the threads that fold them: an x- or all-reduce row's
// partials are consecutive, ws[row * GX + block], for the row's threads (along x) share
// them out; a y-reduce stores block by block, ws[block * M + row], for a warp owns
// consecutive rows (the tensor's columns) and so loads consecutive partials.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/kernel_params.h"
#include "ir/reduction.h"

namespace polyred {

struct CrossBlockKernel {
  bool yReduce = false;
  bool partials = false;  // the deterministic protocol (else atomics)
  int64_t M = 0;          // rows (kept points) of the kernel
  int64_t GX = 0;         // blocks per tile: partials per row
  int64_t tiles = 0;      // tiles (one ticket each)
  int BX = 0, BY = 0;
  int lanes = 1;               // rows per thread of a y-reduce (vector lanes)
  bool lanesTogether = false;  // the lanes reduce in one block_reduce_y_lanes
  std::string index;           // the kernel's index type
};

// One accumulator the kernel combines (a reduction that owns it).
struct CrossBlockAccumulator {
  int number = 0;       // ws<number>, smem<number>
  std::string name;     // "acc0": a scalar, or an array of `lanes`
  std::string type;     // accumulator type
  std::string pointee;  // the workspace's element type as declared (a part's tuples qualified)
  std::string functor;  // combiner type
  std::string identity;
  std::string order;  // the tree policy: polyred_dev::AnyOrder or polyred_dev::InOrder
  const Reduction* reduction = nullptr;
};

// The workspaces ws<n> (atomic slots filled with the identity, or partials never read
// before written) and the tickets, appended to `params` and `workspaces`.
void addCrossBlockWorkspaces(const CrossBlockKernel& k, const std::vector<CrossBlockAccumulator>& accs,
                             std::vector<ParamDeclaration>& params, std::vector<WorkspaceSpec>& workspaces);

// Where a block stores its partial of `row` (an index expression into ws<n>).
std::string partialIndex(const CrossBlockKernel& k, const std::string& row);

// Each thread's contribution of its rows to the combine (the Contribute statement):
// lane l's row is rowOfLane[l]; an atomic combine, or a store of the block's partial.
// Nothing where the lanes reduce together (emitContributeLanes did it).
void emitContribute(std::ostream& os, const CrossBlockKernel& k, const std::vector<CrossBlockAccumulator>& accs,
                    const std::vector<std::string>& rowOfLane, const std::string& indent);

// A y-reduce whose lanes reduce together: its block reduction and contribution in one
// call at the BlockReduce of tile `tile` (block_contribute_y_lanes, or
// block_store_y_lanes for the partials), each column's total from the thread of that
// column, so that a warp's atomics or stores cover consecutive columns.
void emitContributeLanes(std::ostream& os, const CrossBlockKernel& k, const CrossBlockAccumulator& a,
                         const std::string& tile, const std::string& indent);

// The last block of tile `tile` combines its rows' partials into the accumulators (in
// the thread whose Final stores the row).
void emitGatherPartials(std::ostream& os, const CrossBlockKernel& k, const std::vector<CrossBlockAccumulator>& accs,
                        const std::string& tile, const std::string& indent);

}  // namespace polyred
