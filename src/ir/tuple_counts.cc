#include "ir/tuple_counts.h"

#include <algorithm>
#include <cmath>

namespace polyred {

namespace {

constexpr double kLargestCountConstant = 16777216.0;  // 2^24

// A whole-number constant in [lo, 2^24].
bool isWholeConstant(const ScalarExpr& e, double lo) {
  if (e.kind != ScalarExpr::Kind::Const || !(isFloat(e.value.type) || isInteger(e.value.type))) return false;
  const double v = e.value.asDouble();
  return std::isfinite(v) && v == std::floor(v) && !std::signbit(v) && v >= lo && v <= kLargestCountConstant;
}

bool isSide(const ScalarExpr& e, int side, int field) {
  return e.kind == ScalarExpr::Kind::Arg && e.arg == side && e.field == field;
}

// a.fk + b.fk (either order).
bool addsOwnField(const ScalarExprPtr& e, int field) {
  if (!e || e->kind != ScalarExpr::Kind::Op || e->op != OpKind::Add || e->operands.size() != 2) return false;
  const ScalarExpr &x = *e->operands[0], &y = *e->operands[1];
  return (isSide(x, 0, field) && isSide(y, 1, field)) || (isSide(x, 1, field) && isSide(y, 0, field));
}

bool isCountField(const TupleField& f, int field) {
  // +0: a count of -0 would divide to -inf where pr_div_counts gives +inf.
  const bool fromPlusZero = f.identity.asDouble() == 0.0 && !std::signbit(f.identity.asDouble());
  return f.dtype == DType::Float32 && fromPlusZero && f.lift && isWholeConstant(*f.lift, 1.0) &&
         addsOwnField(f.combine, field) && (!f.combineLater || addsOwnField(f.combineLater, field));
}

}  // namespace

std::vector<bool> countFields(const TupleReduction& t) {
  std::vector<bool> counts;
  for (size_t k = 0; k < t.fields.size(); ++k) counts.push_back(isCountField(t.fields[k], static_cast<int>(k)));
  return counts;
}

int64_t countBound(const ScalarExpr& e, const std::vector<bool>& counts) {
  switch (e.kind) {
    case ScalarExpr::Kind::Const: return isWholeConstant(e, 0.0) ? 1 : 0;
    case ScalarExpr::Kind::Arg:
      return (e.arg == 0 || e.arg == 1) && e.field >= 0 && static_cast<size_t>(e.field) < counts.size() &&
                     counts[static_cast<size_t>(e.field)]
                 ? 1
                 : 0;
    case ScalarExpr::Kind::Op: {
      if (e.op != OpKind::Add || e.operands.size() != 2) return 0;
      const int64_t x = countBound(*e.operands[0], counts), y = countBound(*e.operands[1], counts);
      // Saturates past the division's limit rather than overflowing on deep sums.
      return x == 0 || y == 0 ? 0 : std::min(x + y, kCountTermsForDivision + 1);
    }
  }
  return 0;
}

bool dividesCounts(const ScalarExpr& x, const ScalarExpr& y, const std::vector<bool>& counts) {
  const int64_t bx = countBound(x, counts), by = countBound(y, counts);
  return bx > 0 && by > 0 && bx <= kCountTermsForDivision && by <= kCountTermsForDivision;
}

}  // namespace polyred
