// vector_ok: whether every pointer a kernel accesses as whole vectors is aligned.
//
// Takes: a kernel with vector lanes (Vectorization) or a tiled transpose's vector
// stages. Gives: the declaration `const bool vector_ok = pr_aligned<V>(p) && ...;` over
// the contiguous loads, the stores and the staged tiles' inputs; where it is false at
// run time the kernel moves its elements one by one (device/polyred_lanes.cuh).
#pragma once

#include <string>

#include "poly/poly_kernel.h"

namespace polyred {

std::string alignmentCheck(const PolyKernel& k);

}  // namespace polyred
