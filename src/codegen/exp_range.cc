#include "codegen/exp_range.h"

#include "codegen/coarse_results.h"

namespace polyred {

namespace {

class ExpRange {
 public:
  explicit ExpRange(const KernelPlan& plan) : p_(plan) {}

  bool isFastExp(int v) const {
    const BodyValue& e = value(v);
    if (e.kind != BodyValue::Kind::Op || e.op != OpKind::Exp || e.dtype != DType::Float32) return false;
    return isMaxShifted(e.operands[0]) || onlyRoundedTo16Bits(p_, v);
  }

 private:
  const BodyValue& value(int k) const { return p_.body.at(static_cast<size_t>(k)); }

  // Whether body value `arg` is a - max(a) over the row.
  bool isMaxShifted(int arg) const {
    const BodyValue& d = value(arg);
    return d.kind == BodyValue::Kind::Op && d.op == OpKind::Sub && isFloat(d.dtype) &&
           isRowMaxOf(d.operands[1], d.operands[0]);
  }

  // Whether body value `shift` is max(a) over the row, a being body value `a`.
  bool isRowMaxOf(int shift, int a) const {
    const BodyValue& s = value(shift);
    if (s.kind == BodyValue::Kind::Reduced) return isMaxOf(s.reduction, a);
    // The logsumexp rewrite shifts by Select(IsInf(m), c, m): m where m is finite.
    if (s.kind != BodyValue::Kind::Op || s.op != OpKind::Select) return false;
    const BodyValue& test = value(s.operands[0]);
    const int m = s.operands[2];
    return test.kind == BodyValue::Kind::Op && test.op == OpKind::IsInf && test.operands[0] == m &&
           value(s.operands[1]).kind == BodyValue::Kind::Constant && value(m).kind == BodyValue::Kind::Reduced &&
           isMaxOf(value(m).reduction, a);
  }

  bool isMaxOf(int reduction, int a) const {
    const ReductionOutput& r = p_.reductions.at(static_cast<size_t>(reduction));
    return !r.reduction.isTuple() && r.reduction.builtin() == BuiltinCombiner::Max && r.value == a;
  }

  const KernelPlan& p_;
};

}  // namespace

std::vector<bool> fastExps(const KernelPlan& plan) {
  const ExpRange range(plan);
  std::vector<bool> fast(plan.body.size(), false);
  for (size_t v = 0; v < plan.body.size(); ++v) fast[v] = range.isFastExp(static_cast<int>(v));
  return fast;
}

}  // namespace polyred
