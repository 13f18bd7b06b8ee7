// Vector width of elementwise kernels (16-byte accesses).
//
// Takes: an elementwise KernelPlan. Gives: how many consecutive elements V one
// statement instance handles, and how each load behaves along those V lanes, decided
// exactly with isl over the whole iteration space (i = V*iv + v):
//   Contiguous  offset(V*iv + v) = offset(V*iv) + v and offset(V*iv) is a multiple of
//               V: one aligned vector load (when the pointer is aligned, checked once
//               per launch inside the kernel, with a scalar fallback)
//   Invariant   offset(V*iv + v) = offset(V*iv): one scalar load for all lanes
//   Gather      anything else: one scalar load per lane
// Stores of elementwise kernels are at i, hence contiguous. V = 1 (no vectorization)
// when M is not a multiple of V or nothing would be contiguous.
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"

namespace polyred {

enum class LaneAccess : uint8_t { Contiguous, Invariant, Gather };

struct Vectorization {
  int width = 1;
  std::vector<LaneAccess> loads;  // one per Load of plan.body, in order

  // The offset of lane `lane` (or of lane 0, for lane < 0) of an access written in i.
  static std::string laneOffset(const std::string& offset, int width, int lane);
};

Vectorization chooseVectorization(const KernelPlan& plan);

}  // namespace polyred
