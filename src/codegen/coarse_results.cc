#include "codegen/coarse_results.h"

namespace polyred {

bool onlyRoundedTo16Bits(const KernelPlan& plan, int v) {
  for (const ElementwiseOutput& s : plan.stores)
    if (s.value == v) return false;
  for (const ReductionOutput& r : plan.reductions)
    for (int x : r.values)
      if (x == v || r.value == v) return false;
  bool used = false;
  for (const BodyValue& b : plan.body) {
    if (b.kind != BodyValue::Kind::Op) continue;
    for (int o : b.operands) {
      if (o != v) continue;
      if (b.op != OpKind::Cast || (b.dtype != DType::Float16 && b.dtype != DType::BFloat16)) return false;
      used = true;
    }
  }
  return used;
}

std::vector<bool> coarseQuotients(const KernelPlan& plan) {
  std::vector<bool> coarse(plan.body.size(), false);
  for (size_t v = 0; v < plan.body.size(); ++v) {
    const BodyValue& b = plan.body[v];
    if (b.kind != BodyValue::Kind::Op || b.op != OpKind::Div) continue;
    const bool rounds16 = b.dtype == DType::Float16 || b.dtype == DType::BFloat16;
    coarse[v] = rounds16 || (b.dtype == DType::Float32 && onlyRoundedTo16Bits(plan, static_cast<int>(v)));
  }
  return coarse;
}

}  // namespace polyred
