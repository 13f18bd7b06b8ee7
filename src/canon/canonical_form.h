// The canonical form of a reduction space: dimension flattening's first step.
//
// Takes: a shape and its reduced axes (or a lowered KernelPlan and that split). Gives:
// the kept and reduced axes once size-1 axes are dropped (AxisSplit); the logical form
// -- all-reduce (nothing kept), x-reduce (the innermost non-trivial axis is reduced) or
// y-reduce (it is kept) -- with the coalesced extents M (kept) and N (reduced); and,
// for a lowered plan, the form its memory layout asks for (a transposed read flips an
// x-reduce to a y-reduce or back).
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "ir/graph.h"

namespace polyred {

struct AxisSplit {
  std::vector<int64_t> keptExtents, reducedExtents;  // size-1 axes dropped, in order
  std::vector<size_t> keptAxes, reducedAxes;
};
AxisSplit splitAxes(const Shape& shape, const std::vector<int64_t>& axes);

// The logical form: where the innermost non-trivial axis falls (kept or reduced).
CanonicalForm chooseForm(const AxisSplit& s);

// "anchor [..] reduced axes [..]: kept [..] -> i < M, reduced [..] -> j < N; form .."
// for --dump and the plan's `why`.
std::string describeSplit(const Shape& shape, const std::vector<int64_t>& axes, const AxisSplit& s, CanonicalForm f);

// Flips an x- or y-reduce plan to the form that more of its bytes are contiguous along
// (docs/design/canonical-forms.md, "Form"); the reason is appended to plan.why.
void chooseFormFromLayout(KernelPlan& plan, const AxisSplit& split);

// A reduction's canonical iteration space: its form and the coalesced extents.
struct CanonicalSpace {
  CanonicalForm form = CanonicalForm::XReduce;
  int64_t M = 1, N = 1;
};
CanonicalSpace canonicalSpace(const Shape& shape, const std::vector<int64_t>& axes);

}  // namespace polyred
