// Loads that only one branch of a Select reads, issued only where that branch is taken.
//
// A Concat reads each input through a Window under a Select on the coordinate, and a
// pad reads its input only inside: loading every branch at every point would read
// Concat's inputs once per part. A load whose single use is a branch of a Select whose
// condition comes earlier in the body and depends on coordinates only (Iota, constants)
// is guarded by that condition: the scalar code loads under `cond ? load : 0`, the lane
// code when some lane takes the branch.
//
// Takes: a kernel plan. Gives: per body value, the guard (or none). Single-pass kernels
// only (a later pass re-evaluates its own values); the emitter also leaves loads from
// the row cache or the staged row unguarded (they fill or wait).
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"

namespace polyred {

struct LoadGuard {
  int condition = -1;  // the body value that decides; -1: no guard
  bool whenTrue = true;  // the load is the Select's true branch (else its false one)
  explicit operator bool() const { return condition >= 0; }
};

std::vector<LoadGuard> loadGuards(const KernelPlan& plan);

// `load` (a scalar expression of type `type`) evaluated only under the guard.
std::string guardedScalar(const LoadGuard& g, const std::string& load, const std::string& type);
// `statement` (a lane load into an array, ending in ";\n") issued only when some of the
// V lanes of the condition take the branch; `indent` prefixes the lines after the first.
std::string guardedLanes(const LoadGuard& g, const std::string& statement, int V, const std::string& indent);

}  // namespace polyred
