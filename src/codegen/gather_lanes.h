// A Gather's load (canon/kernel_plan.h: BodyValue::gathers) in lane code.
//
// Takes: the load, its lane access (poly/vectorize: Contiguous or Invariant when the
// index is the same in every lane, else Gather), the C text of its offset (one, or one
// per lane), and how the kernel loads a vector. Gives: C statements filling the value's
// V lanes: one vector at offset + index * stride (zeros, and no read, where the index
// is out of range), one element for all lanes, or one element per lane with its index.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "poly/vectorize.h"

namespace polyred {

struct GatherLanes {
  const BodyValue& load;
  std::string name;     // the lane array, "v<k>"
  std::string pointer;  // the params pointer
  LaneAccess access = LaneAccess::Gather;
  int width = 1;
  std::vector<std::string> offsets;  // lane 0's (Contiguous, Invariant) or every lane's (Gather)
  bool masked = false;               // lanes [lo, hi) only
  std::string indent;
};

// The scalar load (an expression); the index is the value `prefix` + its number.
std::string gatherScalar(const BodyValue& load, const std::string& pointer, const std::string& offset,
                         const std::string& prefix);

// `vectorLoad(offset)`: the kernel's statement loading V lanes from `offset` into the array.
std::string gatherLanes(const GatherLanes& g, const std::function<std::string(const std::string&)>& vectorLoad);

}  // namespace polyred
