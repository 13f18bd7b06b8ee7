#include "ir/ops.h"

#include <cmath>
#include <optional>

#include "ir/philox.h"
#include "support/error.h"

namespace polyred {

namespace {
struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpCategory category;
};
constexpr OpInfo kOps[] = {
    {OpKind::Neg, "Neg", OpCategory::Unary},
    {OpKind::Abs, "Abs", OpCategory::Unary},
    {OpKind::Exp, "Exp", OpCategory::Unary},
    {OpKind::Log, "Log", OpCategory::Unary},
    {OpKind::Sqrt, "Sqrt", OpCategory::Unary},
    {OpKind::Rsqrt, "Rsqrt", OpCategory::Unary},
    {OpKind::Reciprocal, "Reciprocal", OpCategory::Unary},
    {OpKind::Tanh, "Tanh", OpCategory::Unary},
    {OpKind::Sin, "Sin", OpCategory::Unary},
    {OpKind::Cos, "Cos", OpCategory::Unary},
    {OpKind::Erf, "Erf", OpCategory::Unary},
    {OpKind::Erfc, "Erfc", OpCategory::Unary},
    {OpKind::Expm1, "Expm1", OpCategory::Unary},
    {OpKind::Log1p, "Log1p", OpCategory::Unary},
    {OpKind::Asin, "Asin", OpCategory::Unary},
    {OpKind::Acos, "Acos", OpCategory::Unary},
    {OpKind::Atan, "Atan", OpCategory::Unary},
    {OpKind::Asinh, "Asinh", OpCategory::Unary},
    {OpKind::Acosh, "Acosh", OpCategory::Unary},
    {OpKind::Sign, "Sign", OpCategory::Unary},
    {OpKind::Floor, "Floor", OpCategory::Unary},
    {OpKind::Ceil, "Ceil", OpCategory::Unary},
    {OpKind::Round, "Round", OpCategory::Unary},
    {OpKind::LogicalNot, "LogicalNot", OpCategory::Unary},
    {OpKind::IsNan, "IsNan", OpCategory::Unary},
    {OpKind::IsInf, "IsInf", OpCategory::Unary},
    {OpKind::IsFinite, "IsFinite", OpCategory::Unary},
    {OpKind::CReal, "CReal", OpCategory::Unary},
    {OpKind::CImag, "CImag", OpCategory::Unary},
    {OpKind::Conj, "Conj", OpCategory::Unary},
    {OpKind::Add, "Add", OpCategory::Binary},
    {OpKind::Sub, "Sub", OpCategory::Binary},
    {OpKind::Mul, "Mul", OpCategory::Binary},
    {OpKind::Div, "Div", OpCategory::Binary},
    {OpKind::FloorDiv, "FloorDiv", OpCategory::Binary},
    {OpKind::FloorMod, "FloorMod", OpCategory::Binary},
    {OpKind::Mod, "Mod", OpCategory::Binary},
    {OpKind::Pow, "Pow", OpCategory::Binary},
    {OpKind::Atan2, "Atan2", OpCategory::Binary},
    {OpKind::Maximum, "Maximum", OpCategory::Binary},
    {OpKind::Minimum, "Minimum", OpCategory::Binary},
    {OpKind::Equal, "Equal", OpCategory::Binary},
    {OpKind::NotEqual, "NotEqual", OpCategory::Binary},
    {OpKind::Less, "Less", OpCategory::Binary},
    {OpKind::LessEqual, "LessEqual", OpCategory::Binary},
    {OpKind::Greater, "Greater", OpCategory::Binary},
    {OpKind::GreaterEqual, "GreaterEqual", OpCategory::Binary},
    {OpKind::LogicalAnd, "LogicalAnd", OpCategory::Binary},
    {OpKind::LogicalOr, "LogicalOr", OpCategory::Binary},
    {OpKind::Complex, "Complex", OpCategory::Binary},
    {OpKind::PhiloxNormal, "PhiloxNormal", OpCategory::Binary},
    {OpKind::Select, "Select", OpCategory::OtherElementwise},
    {OpKind::Cast, "Cast", OpCategory::OtherElementwise},
    {OpKind::AddN, "AddN", OpCategory::OtherElementwise},
    {OpKind::Assign, "Assign", OpCategory::OtherElementwise},
    {OpKind::BroadcastTo, "BroadcastTo", OpCategory::Movement},
    {OpKind::Reshape, "Reshape", OpCategory::Movement},
    {OpKind::Transpose, "Transpose", OpCategory::Movement},
    {OpKind::Window, "Window", OpCategory::Movement},
    {OpKind::Iota, "Iota", OpCategory::Movement},
    {OpKind::Gather, "Gather", OpCategory::Movement},
    {OpKind::ScatterAdd, "ScatterAdd", OpCategory::Movement},
    {OpKind::Reduce, "Reduce", OpCategory::Reduction},
    {OpKind::Scan, "Scan", OpCategory::Reduction},
};
const OpInfo& info(OpKind k) {
  const OpInfo& i = kOps[static_cast<int>(k)];
  POLYRED_CHECK(i.kind == k, "op table out of order");
  return i;
}

double roundOp(double x) { return std::nearbyint(x); }  // half to even, as torch.round

// Integer floor division as Python/PyTorch define it is not what C does; MindSpore's
// integer RealDiv truncates (C semantics). Division by zero yields 0 (documented).
int64_t intDiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0ull - static_cast<uint64_t>(a));
  return a / b;
}

// The remainder of a / b truncated (C's %) and floored (Python's %). By 0 the quotient
// is 0 (intDiv), so a == b * q + r leaves a.
int64_t intMod(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}
int64_t intFloorMod(int64_t a, int64_t b) {
  const int64_t r = intMod(a, b);
  return r != 0 && b != 0 && (r < 0) != (b < 0) ? r + b : r;
}
int64_t intFloorDiv(int64_t a, int64_t b) {
  const int64_t q = intDiv(a, b);
  return b != 0 && intMod(a, b) != 0 && (a < 0) != (b < 0) ? q - 1 : q;
}

// Float remainders, exact (fmod is): Python's % adds b where the signs differ, once.
double floatFloorMod(double a, double b) {
  const double r = std::fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

int64_t intPow(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : (base == -1 ? (exp % 2 ? -1 : 1) : 0);
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  while (exp) {
    if (exp & 1) r *= b;
    b *= b;
    exp >>= 1;
  }
  return static_cast<int64_t>(r);
}

// Comparisons and logic read their operands alike as doubles or as integers (x(n):
// operand n); nullopt for any other op.
template <class Operand>
std::optional<bool> evalPredicate(OpKind k, Operand x) {
  switch (k) {
    case OpKind::Equal: return x(0) == x(1);
    case OpKind::NotEqual: return x(0) != x(1);
    case OpKind::Less: return x(0) < x(1);
    case OpKind::LessEqual: return x(0) <= x(1);
    case OpKind::Greater: return x(0) > x(1);
    case OpKind::GreaterEqual: return x(0) >= x(1);
    case OpKind::LogicalNot: return x(0) == 0;
    case OpKind::LogicalAnd: return x(0) != 0 && x(1) != 0;
    case OpKind::LogicalOr: return x(0) != 0 || x(1) != 0;
    default: return std::nullopt;
  }
}

Scalar evalFloat(OpKind k, std::span<const Scalar> a, DType result) {
  auto x = [&](int n) { return a[n].f; };
  auto out = [&](double v) { return Scalar::convert(v, result); };
  // The quotient as the device rounds it before taking its floor: in float32 for
  // every float dtype but float64 (16-bit floats compute in float32).
  auto quotient = [&] {
    return result == DType::Float64 ? x(0) / x(1) : Scalar::convert(x(0) / x(1), DType::Float32).f;
  };
  auto pred = [](bool v) { return Scalar::ofBool(v); };
  if (const std::optional<bool> p = evalPredicate(k, x)) return pred(*p);
  switch (k) {
    case OpKind::Neg: return out(-x(0));
    case OpKind::Abs: return out(std::fabs(x(0)));
    case OpKind::Exp: return out(std::exp(x(0)));
    case OpKind::Log: return out(std::log(x(0)));
    case OpKind::Sqrt: return out(std::sqrt(x(0)));
    // As the device computes it: 1 / sqrt in float (16-bit floats too), each rounded.
    case OpKind::Rsqrt:
      return out(result == DType::Float64 ? 1.0 / std::sqrt(x(0))
                                          : static_cast<double>(1.0f / std::sqrt(static_cast<float>(x(0)))));
    case OpKind::Reciprocal: return out(1.0 / x(0));
    case OpKind::Tanh: return out(std::tanh(x(0)));
    case OpKind::Sin: return out(std::sin(x(0)));
    case OpKind::Cos: return out(std::cos(x(0)));
    case OpKind::Erf: return out(std::erf(x(0)));
    case OpKind::Erfc: return out(std::erfc(x(0)));
    case OpKind::Expm1: return out(std::expm1(x(0)));
    case OpKind::Log1p: return out(std::log1p(x(0)));
    case OpKind::Asin: return out(std::asin(x(0)));
    case OpKind::Acos: return out(std::acos(x(0)));
    case OpKind::Atan: return out(std::atan(x(0)));
    case OpKind::Asinh: return out(std::asinh(x(0)));
    case OpKind::Acosh: return out(std::acosh(x(0)));
    case OpKind::Sign: return out((x(0) > 0) - (x(0) < 0));  // NaN -> 0, as PyTorch and AKG
    case OpKind::Floor: return out(std::floor(x(0)));
    case OpKind::Ceil: return out(std::ceil(x(0)));
    case OpKind::Round: return out(roundOp(x(0)));
    case OpKind::IsNan: return pred(std::isnan(x(0)));
    case OpKind::IsInf: return pred(std::isinf(x(0)));
    case OpKind::IsFinite: return pred(std::isfinite(x(0)));
    case OpKind::Add: return out(x(0) + x(1));
    case OpKind::Sub: return out(x(0) - x(1));
    case OpKind::Mul: return out(x(0) * x(1));
    case OpKind::Div: return out(x(0) / x(1));
    case OpKind::FloorDiv: return out(std::floor(quotient()));
    case OpKind::FloorMod: return out(floatFloorMod(x(0), x(1)));
    case OpKind::Mod: return out(std::fmod(x(0), x(1)));
    case OpKind::Pow: return out(std::pow(x(0), x(1)));
    case OpKind::Atan2: return out(std::atan2(x(0), x(1)));
    // NaN-propagating, like torch.maximum/minimum and torch.amax/amin.
    case OpKind::Maximum: return out(floatMaximum(x(0), x(1)));
    case OpKind::Minimum: return out(floatMinimum(x(0), x(1)));
    case OpKind::Select: return out(a[0].asBool() ? x(1) : x(2));
    default: POLYRED_CHECK(false, "evalElementwise: unsupported float op " << opName(k));
  }
}

Scalar evalInt(OpKind k, std::span<const Scalar> a, DType result) {
  auto x = [&](int n) { return a[n].i; };
  auto u = [&](int n) { return static_cast<uint64_t>(a[n].i); };
  auto out = [&](int64_t v) { return Scalar::convert(v, result); };
  auto outu = [&](uint64_t v) { return Scalar::convert(static_cast<int64_t>(v), result); };
  auto pred = [](bool v) { return Scalar::ofBool(v); };
  if (const std::optional<bool> p = evalPredicate(k, x)) return pred(*p);
  switch (k) {
    case OpKind::Neg: return outu(0ull - u(0));
    case OpKind::Abs: return outu(x(0) < 0 ? 0ull - u(0) : u(0));
    case OpKind::Sign: return out((x(0) > 0) - (x(0) < 0));
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round: return out(x(0));
    case OpKind::IsNan:
    case OpKind::IsInf: return pred(false);
    case OpKind::IsFinite: return pred(true);
    case OpKind::Add: return outu(u(0) + u(1));
    case OpKind::Sub: return outu(u(0) - u(1));
    case OpKind::Mul: return outu(u(0) * u(1));
    case OpKind::Div: return out(intDiv(x(0), x(1)));
    case OpKind::FloorDiv: return out(intFloorDiv(x(0), x(1)));
    case OpKind::FloorMod: return out(intFloorMod(x(0), x(1)));
    case OpKind::Mod: return out(intMod(x(0), x(1)));
    case OpKind::Pow: return out(intPow(x(0), x(1)));
    case OpKind::Maximum: return out(std::max(x(0), x(1)));
    case OpKind::Minimum: return out(std::min(x(0), x(1)));
    case OpKind::Select: return out(a[0].asBool() ? x(1) : x(2));
    default: POLYRED_CHECK(false, "evalElementwise: float math on integers (the verifier refuses it): " << opName(k));
  }
}
// Complex64 ops: each part computed in double from the float32 parts and rounded to
// float32 (Scalar::ofComplex + castTo), as a framework storing the complex64 would.
Scalar evalComplex(OpKind k, std::span<const Scalar> a, DType result) {
  auto out = [&](double re, double im) { return Scalar::ofComplex(DType::Complex64, re, im).castTo(result); };
  auto real = [&](double v) { return Scalar::convert(v, result); };
  switch (k) {
    case OpKind::Complex: return out(a[0].asDouble(), a[1].asDouble());
    case OpKind::CReal: return real(a[0].f);
    case OpKind::CImag: return real(a[0].im);
    case OpKind::Conj: return out(a[0].f, -a[0].im);
    case OpKind::Neg: return out(-a[0].f, -a[0].im);
    case OpKind::Abs: return real(std::hypot(a[0].f, a[0].im));
    case OpKind::Add: return out(a[0].f + a[1].f, a[0].im + a[1].im);
    case OpKind::Sub: return out(a[0].f - a[1].f, a[0].im - a[1].im);
    case OpKind::Mul:
      return out(a[0].f * a[1].f - a[0].im * a[1].im, a[0].f * a[1].im + a[0].im * a[1].f);
    case OpKind::Div: {
      double re, im;
      complexDivide(a[0].f, a[0].im, a[1].f, a[1].im, re, im);
      return out(re, im);
    }
    case OpKind::Select: return (a[0].asBool() ? a[1] : a[2]).castTo(result);
    default: POLYRED_CHECK(false, "evalElementwise: " << opName(k) << " on complex64 (the verifier refuses it)");
  }
}
}  // namespace

void complexDivide(double a, double b, double c, double d, double& re, double& im) {
  if (std::fabs(c) >= std::fabs(d)) {
    const double r = d / c, t = c + d * r;
    re = (a + b * r) / t;
    im = (b - a * r) / t;
  } else {
    const double r = c / d, t = c * r + d;
    re = (a * r + b) / t;
    im = (b * r - a) / t;
  }
}

bool isComplexPart(OpKind k) { return k == OpKind::CReal || k == OpKind::CImag; }
bool acceptsComplex(OpKind k) {
  switch (k) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Neg: case OpKind::Abs:
    case OpKind::Conj: case OpKind::CReal: case OpKind::CImag: case OpKind::Select: return true;
    default: return false;
  }
}

std::optional<std::string> unsignedRefusal(OpKind k, DType t) {
  if (t != DType::UInt16 && t != DType::UInt32 && t != DType::UInt64) return std::nullopt;
  const std::string what = std::string(opName(k)) + " of " + std::string(dtypeName(t)) + " is refused: ";
  if (k == OpKind::Neg) return what + "an unsigned value has no negation; Cast to a signed type first";
  if (isFloatMath(k) || isPredicate(k))
    return what + "it is float math; Cast to float32 first";
  if (t != DType::UInt64) return std::nullopt;
  switch (k) {
    case OpKind::Abs: case OpKind::Sign: case OpKind::Less: case OpKind::LessEqual: case OpKind::Greater:
    case OpKind::GreaterEqual: case OpKind::Maximum: case OpKind::Minimum: case OpKind::Div:
    case OpKind::FloorDiv: case OpKind::Mod: case OpKind::FloorMod: case OpKind::Pow:
      return what + "polyred orders and divides unsigned values up to uint32 only; Cast to int64 where the "
                    "values fit";
    default: return std::nullopt;
  }
}

bool isFloatMath(OpKind k) {
  switch (k) {
    case OpKind::Exp: case OpKind::Log: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Reciprocal:
    case OpKind::Tanh: case OpKind::Sin: case OpKind::Cos: case OpKind::Erf: case OpKind::Erfc:
    case OpKind::Expm1: case OpKind::Log1p: case OpKind::Asin: case OpKind::Acos: case OpKind::Atan:
    case OpKind::Asinh: case OpKind::Acosh: case OpKind::Atan2: return true;
    default: return false;
  }
}

double floatMaximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double floatMinimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

OpCategory opCategory(OpKind k) { return info(k).category; }
std::string_view opName(OpKind k) { return info(k).name; }
bool isElementwise(OpKind k) {
  auto c = opCategory(k);
  return c == OpCategory::Unary || c == OpCategory::Binary || c == OpCategory::OtherElementwise;
}
bool isComparison(OpKind k) { return k >= OpKind::Equal && k <= OpKind::GreaterEqual; }
int expressionArity(OpKind k) {
  if (k == OpKind::Select) return 3;
  if (k == OpKind::PhiloxNormal) return -1;
  switch (opCategory(k)) {
    case OpCategory::Unary: return 1;
    case OpCategory::Binary: return 2;
    default: return -1;
  }
}
bool isPredicate(OpKind k) { return k == OpKind::IsNan || k == OpKind::IsInf || k == OpKind::IsFinite; }
bool isLogical(OpKind k) {
  return k == OpKind::LogicalNot || k == OpKind::LogicalAnd || k == OpKind::LogicalOr;
}

Scalar evalElementwise(OpKind k, std::span<const Scalar> args, DType result) {
  POLYRED_CHECK(!args.empty(), "evalElementwise without operands");
  // The operand that decides the arithmetic: Select's first operand is its condition.
  const Scalar& typed = k == OpKind::Select ? args[1] : args[0];
  if (k == OpKind::Complex || isComplex(typed.type)) return evalComplex(k, args, result);
  if (k == OpKind::PhiloxNormal) return Scalar::convert(philoxNormal(args[0].i, args[1].i, result), result);
  return isFloat(typed.type) ? evalFloat(k, args, result) : evalInt(k, args, result);
}

}  // namespace polyred
