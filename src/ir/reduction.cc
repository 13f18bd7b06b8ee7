#include "ir/reduction.h"

#include <array>
#include <cmath>
#include <limits>

#include "support/error.h"

namespace polyred {

ScalarExprPtr ScalarExpr::argument(int n) {
  auto e = std::make_shared<ScalarExpr>();
  e->kind = Kind::Arg;
  e->arg = n;
  return e;
}

ScalarExprPtr ScalarExpr::tupleArg(int side, int field) {
  auto e = std::make_shared<ScalarExpr>();
  e->kind = Kind::Arg;
  e->arg = side;
  e->field = field;
  return e;
}

ScalarExprPtr ScalarExpr::constant(Scalar v) {
  auto e = std::make_shared<ScalarExpr>();
  e->kind = Kind::Const;
  e->value = v;
  return e;
}

ScalarExprPtr ScalarExpr::apply(OpKind op, std::vector<ScalarExprPtr> operands) {
  POLYRED_CHECK(isElementwise(op), "ScalarExpr op must be elementwise");
  auto e = std::make_shared<ScalarExpr>();
  e->kind = Kind::Op;
  e->op = op;
  e->operands = std::move(operands);
  return e;
}

Scalar evalScalarExpr(const ScalarExpr& e, const Scalar& acc, const Scalar& x, DType t) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg: return (e.arg == 0 ? acc : x).castTo(t);
    case ScalarExpr::Kind::Const: return e.value.castTo(t);
    case ScalarExpr::Kind::Op: {
      // Runs once per combined value: operands on the stack, not in a vector.
      std::array<Scalar, 3> vals;
      POLYRED_CHECK(e.operands.size() <= vals.size(), "combiner op with " << e.operands.size() << " operands");
      for (size_t k = 0; k < e.operands.size(); ++k) vals[k] = evalScalarExpr(*e.operands[k], acc, x, t);
      DType result = (isComparison(e.op) || isPredicate(e.op) || isLogical(e.op)) ? DType::Bool : t;
      return evalElementwise(e.op, std::span<const Scalar>(vals.data(), e.operands.size()), result).castTo(t);
    }
  }
  POLYRED_CHECK(false, "bad ScalarExpr");
}

std::string toString(const ScalarExpr& e) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg:
      if (e.arg == 2) return "in" + std::to_string(e.field);
      if (e.field != 0) return std::string(e.arg == 0 ? "a" : "b") + ".f" + std::to_string(e.field);
      return e.arg == 0 ? "acc" : "x";
    case ScalarExpr::Kind::Const: return e.value.toString();
    case ScalarExpr::Kind::Op: {
      std::string s(opName(e.op));
      s += "(";
      for (size_t i = 0; i < e.operands.size(); ++i) s += (i ? ", " : "") + toString(*e.operands[i]);
      return s + ")";
    }
  }
  return "?";
}

DType defaultAccType(DType in) {
  switch (in) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: return DType::Float32;
    case DType::Float64: return DType::Float64;
    case DType::Int64:
    case DType::UInt32:
    case DType::UInt64: return DType::Int64;
    case DType::Complex64: return DType::Complex64;  // two float32 parts
    default: return DType::Int32;
  }
}

DType accumulatorType(BuiltinCombiner c, DType in, DType out) {
  if (c != BuiltinCombiner::Sum && c != BuiltinCombiner::Prod) return defaultAccType(in);
  if (isComplex(in) || isComplex(out)) return DType::Complex64;
  auto wide = [](DType t) { return t == DType::Int64 || t == DType::UInt64; };
  if (!isFloat(in)) return wide(in) || wide(out) || isFloat(out) ? DType::Int64 : DType::Int32;
  return in == DType::Float64 || out == DType::Float64 ? DType::Float64 : DType::Float32;
}

bool accumulatorHolds(DType acc, DType out) {
  if (isComplex(acc) || isComplex(out)) return isComplex(acc) && isComplex(out);
  if (out == DType::Bool) return true;
  if (isFloat(out)) return acc == DType::Int64 || (isFloat(acc) && dtypeBytes(acc) >= dtypeBytes(out));
  return isFloat(acc) || dtypeBytes(acc) >= dtypeBytes(out);
}

std::optional<std::string> unsignedReductionRefusal(BuiltinCombiner c, bool tuple, DType in, DType out) {
  if (in != DType::UInt16 && in != DType::UInt32 && in != DType::UInt64) return std::nullopt;
  const std::string what = "a reduction of " + std::string(dtypeName(in)) + " ";
  if (tuple) return what + "by a tuple reduction (argmax, ...) is refused; Cast to int64 first";
  if (in != DType::UInt64) return std::nullopt;
  if (c != BuiltinCombiner::Sum && c != BuiltinCombiner::Prod)
    return what + "is refused unless it is a sum or a product: polyred orders unsigned values up to uint32 only";
  if (out != DType::UInt64 && out != DType::Int64)
    return what + "into " + std::string(dtypeName(out)) + " is refused: reduce into uint64, then Cast";
  return std::nullopt;
}

namespace {
Reduction makeBinary(std::string name, OpKind op, DType in, std::optional<DType> out, Scalar identity,
                     BuiltinCombiner kind) {
  Reduction r;
  r.name = std::move(name);
  r.accType = accumulatorType(kind, in, out.value_or(in));
  r.combiner = ScalarExpr::apply(op, {ScalarExpr::argument(0), ScalarExpr::argument(1)});
  r.identity = identity.castTo(r.accType);
  return r;
}

// The smallest / largest value of the *input* type, expressed in the accumulator type,
// so that max over int8 starts from -128 and min over uint8 from 255.
Scalar lowest(DType in) {
  switch (in) {
    case DType::Bool: return Scalar::ofInt(DType::Int64, 0);
    case DType::Int8: return Scalar::ofInt(DType::Int64, -128);
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return Scalar::ofInt(DType::Int64, 0);
    case DType::Int32: return Scalar::ofInt(DType::Int64, std::numeric_limits<int32_t>::min());
    case DType::Int64: return Scalar::ofInt(DType::Int64, std::numeric_limits<int64_t>::min());
    default: return Scalar::ofFloat(DType::Float64, -INFINITY);
  }
}
Scalar highest(DType in) {
  switch (in) {
    case DType::Bool: return Scalar::ofInt(DType::Int64, 1);
    case DType::Int8: return Scalar::ofInt(DType::Int64, 127);
    case DType::UInt8: return Scalar::ofInt(DType::Int64, 255);
    case DType::UInt16: return Scalar::ofInt(DType::Int64, std::numeric_limits<uint16_t>::max());
    case DType::UInt32: return Scalar::ofInt(DType::Int64, std::numeric_limits<uint32_t>::max());
    case DType::UInt64: return Scalar::ofInt(DType::UInt64, -1);  // 2^64 - 1 (max and min of uint64 are refused)
    case DType::Int32: return Scalar::ofInt(DType::Int64, std::numeric_limits<int32_t>::max());
    case DType::Int64: return Scalar::ofInt(DType::Int64, std::numeric_limits<int64_t>::max());
    default: return Scalar::ofFloat(DType::Float64, INFINITY);
  }
}
}  // namespace

Reduction Reduction::sum(DType in, std::optional<DType> out) {
  return makeBinary("sum", OpKind::Add, in, out, Scalar::ofInt(DType::Int64, 0), BuiltinCombiner::Sum);
}
Reduction Reduction::prod(DType in, std::optional<DType> out) {
  return makeBinary("prod", OpKind::Mul, in, out, Scalar::ofInt(DType::Int64, 1), BuiltinCombiner::Prod);
}
Reduction Reduction::max(DType in, std::optional<DType> out) {
  return makeBinary("max", OpKind::Maximum, in, out, lowest(in), BuiltinCombiner::Max);
}
Reduction Reduction::min(DType in, std::optional<DType> out) {
  return makeBinary("min", OpKind::Minimum, in, out, highest(in), BuiltinCombiner::Min);
}
Reduction Reduction::logicalAnd(DType in, std::optional<DType> out) {
  return makeBinary("and", OpKind::LogicalAnd, in, out, Scalar::ofInt(DType::Int64, 1), BuiltinCombiner::And);
}
Reduction Reduction::logicalOr(DType in, std::optional<DType> out) {
  return makeBinary("or", OpKind::LogicalOr, in, out, Scalar::ofInt(DType::Int64, 0), BuiltinCombiner::Or);
}

BuiltinCombiner Reduction::builtin() const {
  if (tuple || !combiner) return BuiltinCombiner::None;
  const ScalarExpr& e = *combiner;
  if (e.kind != ScalarExpr::Kind::Op || e.operands.size() != 2) return BuiltinCombiner::None;
  const auto& a = *e.operands[0];
  const auto& b = *e.operands[1];
  if (a.kind != ScalarExpr::Kind::Arg || b.kind != ScalarExpr::Kind::Arg || a.arg == b.arg)
    return BuiltinCombiner::None;
  switch (e.op) {
    case OpKind::Add: return BuiltinCombiner::Sum;
    case OpKind::Mul: return BuiltinCombiner::Prod;
    case OpKind::Maximum: return BuiltinCombiner::Max;
    case OpKind::Minimum: return BuiltinCombiner::Min;
    case OpKind::LogicalAnd: return BuiltinCombiner::And;
    case OpKind::LogicalOr: return BuiltinCombiner::Or;
    default: return BuiltinCombiner::None;
  }
}

Scalar Reduction::combine(const Scalar& acc, const Scalar& x) const {
  return evalScalarExpr(*combiner, acc, x, accType);
}

}  // namespace polyred
