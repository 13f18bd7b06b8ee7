// Which collective combines a reduction's partials across ranks, read off the
// Reduction itself (combiner shape and accumulator type), never a list of op names.
//
// Takes: a Reduction and whether the run must be bitwise reproducible. Gives:
//   AllReduce         NCCL all-reduce with the matching ncclRedOp_t: sum and prod of
//                     any accumulator NCCL has a type for, max/min of integers;
//   AllGatherCombine  NCCL all-gather of the partials, then the reduction's own
//                     combiner folds them in rank order on each rank (combineGraph):
//                     logical and/or and user-defined combiners (NCCL has no such
//                     op), float max/min (NCCL's fmax-style max drops NaN, polyred's
//                     propagates it), and every reduction in deterministic mode.
// plus the one-line reason, for dumps and docs/multigpu.md.
#pragma once

#include <string>

#include "ir/graph.h"
#include "ir/reduction.h"

namespace polyred {

enum class Collective : uint8_t { AllReduce, AllGatherCombine };
std::string_view collectiveName(Collective c);

struct CollectiveChoice {
  Collective collective = Collective::AllGatherCombine;
  BuiltinCombiner op = BuiltinCombiner::None;  // AllReduce: the NCCL op it maps to
  std::string why;
};

// Whether NCCL has a data type for `t`: all but bool and complex64 (a complex sum could
// go as pairs of floats; a product could not: NCCL would multiply component by component).
bool ncclHasType(DType t);

CollectiveChoice chooseCollective(const Reduction& r, bool deterministic);

// The local combine of AllGatherCombine as a graph: input "partials" of shape
// [ranks] + shape in r.accType, reduced over axis 0 with `r`, output in r.accType.
// Compiled by the normal pipeline (deterministic: a fixed-order fold).
Graph combineGraph(const std::string& name, const Reduction& r, const Shape& shape, int ranks);

}  // namespace polyred
