#include "canon/canonical_form.h"

#include <algorithm>
#include <sstream>

#include "support/isl_support.h"

namespace polyred {

namespace {

// Whether `offset` (over i < M, j < N) advances by exactly 1 when `var` does, within
// the innermost of the axes coalesced into `var` (extent `inner`; formula (1) jumps at
// its end): the accesses are contiguous along that axis. Decided exactly by isl.
bool contiguousAlong(const std::string& offset, char var, int64_t M, int64_t N, int64_t inner) {
  if (inner < 2) return false;
  IslContext ctx;
  std::string v(1, var);
  std::string dom = " : 0 <= i < " + std::to_string(M) + " and 0 <= j < " + std::to_string(N) + " and (" + v +
                    " + 1) mod " + std::to_string(inner) + " != 0 }";
  std::string next = islSubstitute(offset, var, v + " + 1");
  return islSameFunction(ctx.get(), "{ [i, j] -> [(" + next + ")]" + dom, "{ [i, j] -> [(" + offset + ") + 1]" + dom);
}

// Whether `offset` (over i < M, j < N) stays the same when `var` advances: a broadcast
// operand, read once per row (or column) and then served from the cache.
bool invariantAlong(const std::string& offset, char var, int64_t M, int64_t N) {
  IslContext ctx;
  std::string v(1, var);
  std::string dom = " : 0 <= i < " + std::to_string(M) + " and 0 <= j < " + std::to_string(N) + " and " + v +
                    " + 1 < " + std::to_string(var == 'i' ? M : N) + " }";
  std::string next = islSubstitute(offset, var, v + " + 1");
  return islSameFunction(ctx.get(), "{ [i, j] -> [(" + next + ")]" + dom, "{ [i, j] -> [(" + offset + ")]" + dom);
}

}  // namespace

AxisSplit splitAxes(const Shape& shape, const std::vector<int64_t>& axes) {
  AxisSplit s;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    (reduced ? s.reducedExtents : s.keptExtents).push_back(shape[d]);
    (reduced ? s.reducedAxes : s.keptAxes).push_back(d);
  }
  return s;
}

CanonicalForm chooseForm(const AxisSplit& s) {
  if (s.keptExtents.empty()) return CanonicalForm::AllReduce;
  if (s.reducedExtents.empty()) return CanonicalForm::XReduce;  // nothing to reduce: one element per row
  // The innermost non-trivial axis is the contiguous one: reducing it is an x-reduce.
  size_t innermost = std::max(s.keptAxes.back(), s.reducedAxes.back());
  return innermost == s.reducedAxes.back() ? CanonicalForm::XReduce : CanonicalForm::YReduce;
}

std::string describeSplit(const Shape& shape, const std::vector<int64_t>& axes, const AxisSplit& s,
                          CanonicalForm f) {
  std::ostringstream os;
  os << "anchor " << toString(shape) << " reduced axes " << toString(Shape(axes.begin(), axes.end()))
     << ": kept " << toString(s.keptExtents) << " -> i < " << numElements(s.keptExtents) << ", reduced "
     << toString(s.reducedExtents) << " -> j < " << numElements(s.reducedExtents) << "; form " << formName(f);
  bool interleaved = !s.keptAxes.empty() && !s.reducedAxes.empty() &&
                     !(s.keptAxes.back() < s.reducedAxes.front() || s.reducedAxes.back() < s.keptAxes.front());
  if (interleaved) os << " (interleaved axes: interchanged before coalescing, Fig. 2d)";
  return os.str();
}

// The canonical form from the memory layout of what the body reads and writes: the
// logical form reduces the inner axis of the reduction's input, but when that input is
// a transposed read, the bytes it moves are contiguous along the other axis. Flips an
// x-reduce to a y-reduce (or back) when more bytes are contiguous along i than along j
// (threads then run along the contiguous axis). Broadcast operands (invariant along i
// or j, e.g. a label per row) do not count: they move a row's or a column's worth of
// bytes, not a point's. Row-resident kernels of several passes
// keep the logical form, which the partitioner's one-block decision was made for.
// Where the kernel gathers (Gather's loads), their rows alone decide: they are what it
// moves, and their indices, which do not depend on the gathered row's own axis, would
// count as a transposed read (an embedding bag's ids along j, its table rows along i).
void chooseFormFromLayout(KernelPlan& plan, const AxisSplit& split) {
  bool canFlip = plan.form == CanonicalForm::XReduce || plan.form == CanonicalForm::YReduce;
  if (!canFlip || plan.M < 2 || plan.N < 2 || plan.passes() > 1) return;
  int64_t alongI = 0, alongJ = 0;
  auto count = [&](const std::string& offset, DType t, bool gathered) {
    // (A gather's offset is invariant along the axes its index runs on.)
    if (!gathered && (invariantAlong(offset, 'i', plan.M, plan.N) || invariantAlong(offset, 'j', plan.M, plan.N))) return;
    if (contiguousAlong(offset, 'j', plan.M, plan.N, split.reducedExtents.back())) alongJ += dtypeBytes(t);
    else if (contiguousAlong(offset, 'i', plan.M, plan.N, split.keptExtents.back())) alongI += dtypeBytes(t);
  };
  const bool gathers = std::any_of(plan.body.begin(), plan.body.end(), [](const BodyValue& v) { return v.gathers(); });
  for (const BodyValue& v : plan.body)
    if (v.kind == BodyValue::Kind::Load && v.gathers() == gathers) count(v.offset, v.dtype, gathers);
  if (!gathers)
    for (const ElementwiseOutput& s : plan.stores) count(s.offset, plan.body[static_cast<size_t>(s.value)].dtype, false);
  CanonicalForm layout = alongI > alongJ ? CanonicalForm::YReduce : alongJ > alongI ? CanonicalForm::XReduce : plan.form;
  if (layout == plan.form) return;
  plan.form = layout;
  plan.why += "; form " + std::string(formName(layout)) + " chosen from the memory layout: " + std::to_string(alongI) +
              " bytes per point are contiguous along i, " + std::to_string(alongJ) + " along j (a transposed read)";
}

CanonicalSpace canonicalSpace(const Shape& shape, const std::vector<int64_t>& axes) {
  AxisSplit split = splitAxes(shape, axes);
  return {chooseForm(split), numElements(split.keptExtents), numElements(split.reducedExtents)};
}

}  // namespace polyred
