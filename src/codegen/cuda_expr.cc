#include "codegen/cuda_expr.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "support/error.h"

namespace polyred {

std::string conjunction(const std::string& a, const std::string& b) {
  if (a == "false" || b == "false") return "false";
  if (a == "true") return b;
  if (b == "true") return a;
  return a + " && " + b;
}

int64_t loadedTensorElements(const Graph& g, const BodyValue& load) {
  if (load.kind != BodyValue::Kind::Load || load.temporary >= 0 || load.input < 0) return 0;
  return numElements(g.tensor(g.inputs.at(static_cast<size_t>(load.input))).shape);
}

std::string loadPointer(const BodyValue& load) {
  return load.temporary >= 0 ? "tmp" + std::to_string(load.temporary) : "in" + std::to_string(load.input);
}

std::string storePointer(const ElementwiseOutput& s) {
  return s.output >= 0 ? "out" + std::to_string(s.output) : "tmp" + std::to_string(s.temporary);
}

std::string computeType(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8:
    case DType::UInt8:
    case DType::UInt16:
    case DType::Int32: return "int";
    case DType::Int64: return "long long";
    case DType::UInt32: return "unsigned";
    case DType::UInt64: return "unsigned long long";
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Complex64: return "pr_complex";
  }
  return "?";
}

namespace {

bool isDouble(DType t) { return t == DType::Float64; }

// Rounds or wraps a compute-type expression to dtype `t`.
std::string fit(DType t, const std::string& e) {
  switch (t) {
    case DType::Float16: return "pr_fit_float16(" + e + ")";
    case DType::BFloat16: return "pr_fit_bfloat16(" + e + ")";
    case DType::Int8: return "pr_fit_int8(" + e + ")";
    case DType::UInt8: return "pr_fit_uint8(" + e + ")";
    case DType::UInt16: return "pr_fit_uint16(" + e + ")";
    default: return e;
  }
}

}  // namespace

std::string emitCast(const std::string& e, DType from, DType to) {
  if (from == to) return e;
  // complex64: a real value becomes (float32 of it, 0); a complex one gives its real
  // part (Scalar::castTo; the verifier refuses such a Cast in graphs), bool its != 0.
  if (isComplex(to)) return "pr_complex_of(" + emitCast(e, from, DType::Float32) + ", 0.0f)";
  if (isComplex(from) && to == DType::Bool) return "pr_cnonzero(" + e + ")";
  if (isComplex(from)) return emitCast("(" + e + ").re", DType::Float32, to);
  if (to == DType::Bool) return "(" + e + " != 0)";
  std::string ct = computeType(to);
  if (isFloat(from) && to == DType::UInt64) return "pr_f2uint64(" + e + ")";
  if (isFloat(from) && isInteger(to)) {
    IntRange r = intRange(to);
    // The int64 minimum has no literal of its own: write it as an expression.
    std::string lo = r.lo == std::numeric_limits<int64_t>::min() ? "(-9223372036854775807LL - 1)"
                                                                  : std::to_string(r.lo) + "LL";
    return "(" + ct + ")pr_f2int(" + e + ", " + lo + ", " + std::to_string(r.hi) + "LL)";
  }
  // Integers past float's 24-bit significand would be rounded twice on the way.
  if (from == DType::UInt64 && to == DType::BFloat16) return "pr_uint_to_bfloat16(" + e + ")";
  if (!isFloat(from) && to == DType::BFloat16) return "pr_int_to_bfloat16((long long)(" + e + "))";
  return fit(to, "(" + ct + ")(" + e + ")");
}

namespace {

std::string mathFn(const char* name, DType t, const std::string& a) {
  return std::string(name) + (isDouble(t) ? "" : "f") + "(" + a + ")";
}

// Exp: pr_expf_fast where its error cannot show (a 16-bit result, or what
// codegen/exp_range proved), else pr_expf (expf, or the fast one under --fast-exp).
std::string emitExp(const std::string& a, DType t, OperandFacts facts) {
  if (t == DType::Float64) return "exp(" + a + ")";
  const bool fast = facts.fastExp || t == DType::Float16 || t == DType::BFloat16;
  return (fast ? "pr_expf_fast(" : "pr_expf(") + a + ")";
}

std::string emitFloatOp(OpKind op, const std::vector<std::string>& a, DType t, OperandFacts facts) {
  std::string one = isDouble(t) ? "1.0" : "1.0f";
  switch (op) {
    case OpKind::Neg: return "(-" + a[0] + ")";
    case OpKind::Abs: return mathFn("fabs", t, a[0]);
    case OpKind::Exp: return emitExp(a[0], t, facts);
    case OpKind::Log: return mathFn("log", t, a[0]);
    case OpKind::Sqrt: return mathFn("sqrt", t, a[0]);
    case OpKind::Rsqrt: return "(" + one + " / " + mathFn("sqrt", t, a[0]) + ")";
    case OpKind::Reciprocal: return "(" + one + " / " + a[0] + ")";
    case OpKind::Tanh: return mathFn("tanh", t, a[0]);
    case OpKind::Sin: return mathFn("sin", t, a[0]);
    case OpKind::Cos: return mathFn("cos", t, a[0]);
    case OpKind::Erf: return mathFn("erf", t, a[0]);
    case OpKind::Erfc: return mathFn("erfc", t, a[0]);
    case OpKind::Expm1: return mathFn("expm1", t, a[0]);
    case OpKind::Log1p: return mathFn("log1p", t, a[0]);
    case OpKind::Asin: return mathFn("asin", t, a[0]);
    case OpKind::Acos: return mathFn("acos", t, a[0]);
    case OpKind::Atan: return mathFn("atan", t, a[0]);
    case OpKind::Asinh: return mathFn("asinh", t, a[0]);
    case OpKind::Acosh: return mathFn("acosh", t, a[0]);
    case OpKind::Floor: return mathFn("floor", t, a[0]);
    case OpKind::Ceil: return mathFn("ceil", t, a[0]);
    case OpKind::Round: return mathFn("rint", t, a[0]);
    case OpKind::Sign: return "pr_sign(" + a[0] + ")";
    case OpKind::IsNan: return "(" + a[0] + " != " + a[0] + ")";
    case OpKind::IsInf: return "isinf(" + a[0] + ")";
    case OpKind::IsFinite: return "isfinite(" + a[0] + ")";
    case OpKind::Add: return "(" + a[0] + " + " + a[1] + ")";
    case OpKind::Sub: return "(" + a[0] + " - " + a[1] + ")";
    case OpKind::Mul: return "(" + a[0] + " * " + a[1] + ")";
    case OpKind::Div:
      if (facts.divisionOfCounts && t == DType::Float32) return "pr_div_counts(" + a[0] + ", " + a[1] + ")";
      if (dividesByInvariant(t, facts))
        return invariantDivisionFunction(facts) + "(" + a[0] + ", " + invariantDivisorArgument(facts, a[1]) + ")";
      return "(" + a[0] + " / " + a[1] + ")";
    // The quotient rounded as Div rounds it (never the invariant-divisor form), then floored.
    case OpKind::FloorDiv: return mathFn("floor", t, "(" + a[0] + " / " + a[1] + ")");
    case OpKind::FloorMod: return "pr_floormod(" + a[0] + ", " + a[1] + ")";
    case OpKind::Mod: return mathFn("fmod", t, a[0] + ", " + a[1]);
    case OpKind::Pow: return std::string(isDouble(t) ? "pow(" : "powf(") + a[0] + ", " + a[1] + ")";
    case OpKind::Atan2: return mathFn("atan2", t, a[0] + ", " + a[1]);
    case OpKind::Maximum: return "pr_max(" + a[0] + ", " + a[1] + ")";
    case OpKind::Minimum: return "pr_min(" + a[0] + ", " + a[1] + ")";
    default: return "";
  }
}

// uint32 and uint64, computed as unsigned types (uint8 and uint16 compute as int).
bool computesUnsigned(DType t) { return t == DType::UInt32 || t == DType::UInt64; }

// Integer arithmetic in the compute type; the unsigned ones divide as unsigned (their
// quotients are the floored ones) and are their own absolute value.
std::string emitIntOp(OpKind op, const std::vector<std::string>& a, DType t) {
  std::string ct = computeType(t);
  if (computesUnsigned(t)) {
    switch (op) {
      case OpKind::Abs: return a[0];
      case OpKind::Div:
      case OpKind::FloorDiv: return "pr_udiv(" + a[0] + ", " + a[1] + ")";
      case OpKind::Mod:
      case OpKind::FloorMod: return "pr_umod(" + a[0] + ", " + a[1] + ")";
      default: break;
    }
  }
  switch (op) {
    case OpKind::Neg: return "pr_neg((" + ct + ")" + a[0] + ")";
    case OpKind::Abs: return "(" + a[0] + " < 0 ? pr_neg((" + ct + ")" + a[0] + ") : " + a[0] + ")";
    case OpKind::Sign: return "pr_sign(" + a[0] + ")";
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round: return a[0];
    case OpKind::IsNan:
    case OpKind::IsInf: return "false";
    case OpKind::IsFinite: return "true";
    case OpKind::Add: return "pr_add(" + a[0] + ", " + a[1] + ")";
    case OpKind::Sub: return "pr_sub(" + a[0] + ", " + a[1] + ")";
    case OpKind::Mul: return "pr_mul(" + a[0] + ", " + a[1] + ")";
    case OpKind::Div: return "pr_idiv(" + a[0] + ", " + a[1] + ")";
    case OpKind::FloorDiv: return "pr_ifloordiv(" + a[0] + ", " + a[1] + ")";
    case OpKind::FloorMod: return "pr_ifloormod(" + a[0] + ", " + a[1] + ")";
    case OpKind::Mod: return "pr_imod(" + a[0] + ", " + a[1] + ")";
    case OpKind::Pow: return "pr_ipow(" + a[0] + ", " + a[1] + ")";
    case OpKind::Maximum: return "pr_max(" + a[0] + ", " + a[1] + ")";
    case OpKind::Minimum: return "pr_min(" + a[0] + ", " + a[1] + ")";
    default: POLYRED_CHECK(false, "float math on integers (the verifier refuses it): " << opName(op));
  }
}

std::string comparison(OpKind op) {
  switch (op) {
    case OpKind::Equal: return "==";
    case OpKind::NotEqual: return "!=";
    case OpKind::Less: return "<";
    case OpKind::LessEqual: return "<=";
    case OpKind::Greater: return ">";
    case OpKind::GreaterEqual: return ">=";
    default: return "";
  }
}

}  // namespace

std::string emitLiteral(const Scalar& v) {
  if (isComplex(v.type))
    return "pr_complex_of(" + emitLiteral(Scalar::ofFloat(DType::Float32, v.f)) + ", " +
           emitLiteral(Scalar::ofFloat(DType::Float32, v.im)) + ")";
  if (v.type == DType::Bool) return v.i ? "true" : "false";
  if (isInteger(v.type)) {
    // Unsigned literals keep the operands of pr_add and friends one type.
    if (v.type == DType::UInt32) return std::to_string(v.i) + "u";
    if (v.type == DType::UInt64) return std::to_string(static_cast<uint64_t>(v.i)) + "ull";
    // The most negative values are written as differences: "-2147483648" would be the
    // negation of a long literal, not an int.
    if (v.i == INT64_MIN) return "(-9223372036854775807LL - 1)";
    if (v.type != DType::Int64 && v.i == INT32_MIN) return "(-2147483647 - 1)";
    return std::to_string(v.i) + (v.type == DType::Int64 ? "LL" : "");
  }
  bool dbl = isDouble(v.type);
  if (std::isnan(v.f)) return dbl ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
  if (std::isinf(v.f)) {
    std::string inf = dbl ? "__longlong_as_double(0x7ff0000000000000LL)" : "__int_as_float(0x7f800000)";
    return v.f < 0 ? "(-" + inf + ")" : inf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v.f);  // exact hexadecimal float literal
  return std::string(buf) + (dbl ? "" : "f");
}

// complex64 ops (polyred_elementwise.cuh): each part computed as the host does (in
// double from the float32 parts where a product or quotient is involved, then rounded).
static std::string emitComplexOp(OpKind op, const std::vector<std::string>& a) {
  switch (op) {
    case OpKind::Complex: return "pr_complex_of(" + a[0] + ", " + a[1] + ")";
    case OpKind::CReal: return "(" + a[0] + ").re";
    case OpKind::CImag: return "(" + a[0] + ").im";
    case OpKind::Conj: return "pr_conj(" + a[0] + ")";
    case OpKind::Neg: return "pr_cneg(" + a[0] + ")";
    case OpKind::Abs: return "pr_cabs(" + a[0] + ")";
    case OpKind::Add: return "pr_cadd(" + a[0] + ", " + a[1] + ")";
    case OpKind::Sub: return "pr_csub(" + a[0] + ", " + a[1] + ")";
    case OpKind::Mul: return "pr_cmul(" + a[0] + ", " + a[1] + ")";
    case OpKind::Div: return "pr_cdiv(" + a[0] + ", " + a[1] + ")";
    default: POLYRED_CHECK(false, opName(op) << " on complex64 (the verifier refuses it)");
  }
}

std::string emitElementwise(OpKind op, const std::vector<std::string>& a, const std::vector<DType>& types,
                            DType result, OperandFacts facts) {
  if (op == OpKind::Complex || (op != OpKind::Select && op != OpKind::Cast && !types.empty() && isComplex(types[0])))
    return emitComplexOp(op, a);
  // The result's rounding to its dtype, left to the store where it is the only reader.
  auto fitResult = [&](const std::string& e) { return facts.roundedByStore ? e : fit(result, e); };
  if (op == OpKind::Cast)
    return facts.roundedByStore ? emitCast(a[0], types[0], DType::Float32) : emitCast(a[0], types[0], result);
  if (op == OpKind::PhiloxNormal)
    return fitResult(std::string(isDouble(result) ? "pr_philox_normal_double(" : "pr_philox_normal_float(") +
                     kPhiloxMemo + ", " + a[0] + ", " + a[1] + ")");
  if (op == OpKind::Select) return fitResult("(" + a[0] + " ? " + a[1] + " : " + a[2] + ")");
  if (isComparison(op)) return "(" + a[0] + " " + comparison(op) + " " + a[1] + ")";
  if (op == OpKind::LogicalNot) return "(" + a[0] + " == 0)";
  // && and || (not & and |): in argmax's combine they let nvcc skip the NaN and tie
  // tests for the common element that is not a new maximum (H100, 2026-11-23: argmax
  // f16 [4096,50257] 193 us with them, 213 us branch-free).
  if (op == OpKind::LogicalAnd) return "((" + a[0] + " != 0) && (" + a[1] + " != 0))";
  if (op == OpKind::LogicalOr) return "((" + a[0] + " != 0) || (" + a[1] + " != 0))";
  DType in = types[0];
  std::string e = isFloat(in) ? emitFloatOp(op, a, in, facts) : emitIntOp(op, a, in);
  POLYRED_CHECK(!e.empty(), "no CUDA for op " << opName(op));
  if (isPredicate(op)) return e;
  return fitResult(e);
}

std::string scalarExprToCuda(const ScalarExpr& e, DType t) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg: return e.arg == 0 ? "a" : "b";
    case ScalarExpr::Kind::Const: return emitLiteral(e.value.castTo(t));
    case ScalarExpr::Kind::Op: {
      std::vector<std::string> a;
      std::vector<DType> ts;
      for (const auto& o : e.operands) {
        a.push_back(scalarExprToCuda(*o, t));
        ts.push_back(t);
      }
      bool boolean = isComparison(e.op) || isPredicate(e.op) || isLogical(e.op);
      std::string r = emitElementwise(e.op, a, ts, boolean ? DType::Bool : t);
      return boolean ? emitCast(r, DType::Bool, t) : r;
    }
  }
  return "";
}

std::string builtinFunctor(BuiltinCombiner c, const std::string& acc) {
  auto functor = [&](const char* name) { return "polyred_dev::" + std::string(name) + "<" + acc + ">"; };
  switch (c) {
    case BuiltinCombiner::Sum: return functor("Sum");
    case BuiltinCombiner::Prod: return functor("Prod");
    case BuiltinCombiner::Max: return functor("Max");
    case BuiltinCombiner::Min: return functor("Min");
    case BuiltinCombiner::And: return functor("And");
    case BuiltinCombiner::Or: return functor("Or");
    case BuiltinCombiner::None: return "";
  }
  return "";
}

}  // namespace polyred
