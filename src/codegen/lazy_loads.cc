#include "codegen/lazy_loads.h"

namespace polyred {

namespace {
// Whether body value v is computed from coordinates and constants alone: the same for
// every point of a region (Concat's parts, a pad's inside), so skipping a load costs no
// divergence. A data-dependent condition (a dropout mask) would make the load a branch
// that blocks batching the loads of an unrolled loop, for almost no loads saved.
bool fromCoordinates(const KernelPlan& plan, int v) {
  const BodyValue& b = plan.body[static_cast<size_t>(v)];
  if (b.kind == BodyValue::Kind::Index || b.kind == BodyValue::Kind::Constant) return true;
  if (b.kind != BodyValue::Kind::Op) return false;
  for (int o : b.operands)
    if (!fromCoordinates(plan, o)) return false;
  return true;
}
}  // namespace

std::vector<LoadGuard> loadGuards(const KernelPlan& plan) {
  std::vector<LoadGuard> guards(plan.body.size());
  if (plan.passes() > 1) return guards;
  // Uses of each value; a store or a reduction counts as two, so that its value is never
  // guarded.
  std::vector<int> uses(plan.body.size(), 0);
  for (const BodyValue& b : plan.body)
    for (int o : b.operands) ++uses[static_cast<size_t>(o)];
  for (const ElementwiseOutput& s : plan.stores) uses[static_cast<size_t>(s.value)] += 2;
  for (const ReductionOutput& r : plan.reductions) {
    uses[static_cast<size_t>(r.value)] += 2;
    for (int v : r.values) uses[static_cast<size_t>(v)] += 2;
  }
  for (const BodyValue& b : plan.body) {
    if (b.kind != BodyValue::Kind::Op || b.op != OpKind::Select) continue;
    for (size_t branch : {1u, 2u}) {
      const int v = b.operands[branch];
      if (plan.body[static_cast<size_t>(v)].kind == BodyValue::Kind::Load && uses[static_cast<size_t>(v)] == 1 &&
          b.operands[0] < v && fromCoordinates(plan, b.operands[0]))
        guards[static_cast<size_t>(v)] = {b.operands[0], branch == 1};
    }
  }
  return guards;
}

namespace {
std::string takes(const LoadGuard& g, const std::string& cond) { return g.whenTrue ? cond : "!" + cond; }
}  // namespace

std::string guardedScalar(const LoadGuard& g, const std::string& load, const std::string& type) {
  return "(" + takes(g, "v" + std::to_string(g.condition)) + " ? " + load + " : (" + type + ")0)";
}

std::string guardedLanes(const LoadGuard& g, const std::string& statement, int V, const std::string& indent) {
  const std::string cond = "v" + std::to_string(g.condition) + "[l]";
  return "{ bool taken = false;\n" + indent + "  #pragma unroll\n" + indent + "  for (int l = 0; l < " +
         std::to_string(V) + "; ++l) taken |= " + takes(g, cond) + ";\n" + indent + "  if (taken) " + statement +
         indent + "}\n";
}

}  // namespace polyred
