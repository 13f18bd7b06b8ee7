#include "codegen/loop_invariants.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "support/error.h"

namespace polyred {

namespace {

void collectPasses(const AstNode& n, std::set<int>& passes) {
  if (n.kind == AstNode::Kind::User) passes.insert(n.user.pass);
  for (const auto& c : n.children)
    if (c) collectPasses(*c, passes);
}

// Marks value v and the values it is computed from.
void markOperands(const KernelPlan& plan, size_t v, std::vector<bool>& needed) {
  if (needed[v]) return;
  needed[v] = true;
  for (int o : plan.body[v].operands) markOperands(plan, static_cast<size_t>(o), needed);
}

}  // namespace

std::vector<bool> valuesOfTotals(const KernelPlan& plan) {
  std::vector<bool> of(plan.body.size(), false);
  for (size_t v = 0; v < plan.body.size(); ++v) {  // operands come before their uses
    const BodyValue& b = plan.body[v];
    of[v] = b.kind == BodyValue::Kind::Reduced || b.kind == BodyValue::Kind::Constant ||
            (b.kind == BodyValue::Kind::Op &&
             std::all_of(b.operands.begin(), b.operands.end(), [&](int o) { return of.at(static_cast<size_t>(o)); }));
  }
  return of;
}

bool dividesByTotals(const KernelPlan& plan, const std::vector<bool>& ofTotals, size_t v) {
  const BodyValue& b = plan.body.at(v);
  return b.kind == BodyValue::Kind::Op && b.op == OpKind::Div && ofTotals.at(static_cast<size_t>(b.operands[1]));
}

std::string hoistedValueName(size_t v) { return "inv" + std::to_string(v); }
std::string hoistedDivisorName(size_t v) { return "div" + std::to_string(v); }

LoopInvariants loopInvariantsUnder(const InvariantHoist& h, const AstNode& loop) {
  std::set<int> passes;
  collectPasses(loop, passes);
  const size_t n = h.plan.body.size();
  std::vector<bool> evaluated(n, false);
  for (int pass : passes) {
    const std::vector<bool> of = h.plan.valuesOfPass(pass);
    for (size_t v = 0; v < n; ++v) evaluated[v] = evaluated[v] || of[v];
  }
  LoopInvariants inv{std::vector<bool>(n, false), {}};
  for (size_t v = 0; v < n; ++v) {
    if (!evaluated[v]) continue;
    inv.values[v] = h.plan.body[v].kind == BodyValue::Kind::Op && h.ofTotals[v];
    if (!inv.values[v] && h.invariantDivision(v)) inv.divisions.push_back(v);
  }
  return inv;
}

std::string hoistInvariants(const InvariantHoist& h, const LoopInvariants& inv, const std::string& indent) {
  const KernelPlan& p = h.plan;
  std::vector<bool> needed(p.body.size(), false);
  for (size_t v = 0; v < p.body.size(); ++v)
    if (inv.values[v]) markOperands(p, v, needed);
  for (size_t v : inv.divisions) markOperands(p, static_cast<size_t>(p.body[v].operands[1]), needed);
  std::ostringstream os;
  for (size_t v = 0; v < p.body.size(); ++v) {  // operands come before their uses
    if (!needed[v]) continue;
    const BodyValue& b = p.body[v];
    os << indent << "const " << computeType(b.dtype) << " " << hoistedValueName(v) << " = ";
    switch (b.kind) {
      case BodyValue::Kind::Reduced: os << h.total(b.reduction); break;
      case BodyValue::Kind::Constant: os << emitLiteral(b.value); break;
      case BodyValue::Kind::Op: {
        std::vector<std::string> a;
        std::vector<DType> ts;
        for (int o : b.operands) {
          a.push_back(hoistedValueName(static_cast<size_t>(o)));
          ts.push_back(p.body[static_cast<size_t>(o)].dtype);
        }
        os << emitElementwise(b.op, a, ts, b.dtype, h.facts(v));
        break;
      }
      default: POLYRED_CHECK(false, "a loop invariant reads only totals and constants");
    }
    os << ";  // v" << v << "\n";
  }
  for (size_t v : inv.divisions)
    os << indent << "const PrInvariantDivisor " << hoistedDivisorName(v) << " = pr_invariant_divisor("
       << hoistedValueName(static_cast<size_t>(p.body[v].operands[1])) << ");  // divides v" << v << "\n";
  return os.str();
}

}  // namespace polyred
