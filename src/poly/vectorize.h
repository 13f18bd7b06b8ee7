// Vector width of every canonical form (16-byte accesses).
//
// Takes: a KernelPlan. Gives: how many consecutive elements V of the contiguous axis
// (i for elementwise kernels, the reduced j for x/all-reduce) one statement instance
// handles, and how each load (and coordinate) behaves along those V lanes, decided exactly with isl
// over the whole iteration space (axis = V*a + v):
//   Contiguous  offset(V*iv + v) = offset(V*iv) + v and offset(V*iv) is a multiple of
//               V: one aligned vector load (when the pointer is aligned, checked once
//               per launch inside the kernel, with a scalar fallback)
//   Invariant   offset(V*iv + v) = offset(V*iv): one scalar load for all lanes
//   Gather      anything else: one scalar load per lane
// Stores of elementwise kernels are at i, hence contiguous. In an x- or all-reduce the
// lanes run along j and fold into the thread's accumulator; in a y-reduce they run
// along the kept, contiguous i and each lane is a column of its own, with its own
// accumulator, block reduction and output (the thread owns V consecutive columns).
// Commutative tuples of x/all-reduces fold their lanes as a tree (codegen).
// V = 1 (no vectorization) when the axis extent is not a multiple of V, for
// reductions that also store point outputs, row-resident kernels, and kernels under
// 2^16 elements (launch-bound: lanes only add latency there).
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "poly/kernel_config.h"

namespace polyred {

enum class LaneAccess : uint8_t { Contiguous, Invariant, Gather };

struct Vectorization {
  int width = 1;
  char axis = 'i';                // the iteration variable the lanes run along
  // One per value of plan.body with an offset (Load, and Index: a coordinate, whose
  // lanes are base + v, the same for all lanes, or computed one by one), in order.
  std::vector<LaneAccess> accesses;
  // Accumulators per reduction and thread: V in a y-reduce (a lane per column, i
  // counts groups of V columns in every statement), else 1.
  int accumulatorLanes = 1;

  // The offset of lane `lane` of an access, with the axis variable counting vectors.
  std::string laneOffset(const std::string& offset, int lane) const;
};

// At most `maxWidth` lanes (KernelConfig::maxVectorWidth; 1: scalar code; kAuto: the
// policy's limit for the kernel, laneLimitFor: no lanes for y-reduces of fewer than
// 8192 columns).
Vectorization chooseVectorization(const KernelPlan& plan, int maxWidth = KernelConfig::kAuto);
int laneLimitFor(int maxWidth, const KernelPlan& plan);

}  // namespace polyred
