#include "codegen/store_rounding.h"

namespace polyred {

namespace {

bool is16BitFloat(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// Whether the op's result is its float value rounded by pr_fit_* (cuda_expr's fit).
bool roundsThroughFit(const KernelPlan& plan, const BodyValue& b) {
  if (b.kind != BodyValue::Kind::Op || !is16BitFloat(b.dtype) || b.operands.empty()) return false;
  if (b.op != OpKind::Cast) return true;
  const DType from = plan.body.at(static_cast<size_t>(b.operands[0])).dtype;
  return !isComplex(from) && (isFloat(from) || b.dtype == DType::Float16);
}

}  // namespace

std::vector<bool> roundedByStores(const KernelPlan& plan, const Graph& graph) {
  const size_t n = plan.body.size();
  std::vector<bool> read(n, false), stored(n, false), storedElsewhere(n, false);
  for (const BodyValue& b : plan.body)
    for (int o : b.operands) read.at(static_cast<size_t>(o)) = true;
  for (const ReductionOutput& r : plan.reductions) {
    read.at(static_cast<size_t>(r.value)) = true;
    for (int v : r.values) read.at(static_cast<size_t>(v)) = true;
  }
  for (const ElementwiseOutput& s : plan.stores) {
    const size_t v = static_cast<size_t>(s.value);
    const bool plain = s.output >= 0 && !s.scatters() && !s.zeroWhereNonzero &&
                       graph.tensor(graph.outputs.at(static_cast<size_t>(s.output)).tensor).dtype == plan.body[v].dtype;
    (plain ? stored : storedElsewhere).at(v) = true;
    if (s.scatters()) read.at(static_cast<size_t>(s.scatterIndex)) = true;
  }
  std::vector<bool> r(n, false);
  for (size_t v = 0; v < n; ++v)
    r[v] = stored[v] && !storedElsewhere[v] && !read[v] && roundsThroughFit(plan, plan.body[v]);
  return r;
}

}  // namespace polyred
