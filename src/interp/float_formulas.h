// The reference interpreter's float fast paths (interp/reference.cc): each formula is
// the one evalElementwise() applies for float operands (ir/ops.cc, evalFloat: in
// double, Rsqrt in float below float64), and the result is rounded to the output dtype as Scalar::convert does.
// Reference.EveryOpMatchesEvalElementwise checks that the two agree bit for bit.
// Formulas and roundings are passed as lambdas (not function pointers) so that each
// loop is compiled with both inlined.
//
// Takes: an op kind or a float dtype, and a body. Gives: body(formula) or body(round)
// when there is a fast path (ops without one take evalElementwise's general path).
#pragma once

#include <cmath>

#include "ir/dtype.h"
#include "ir/ops.h"
#include "support/error.h"

namespace polyred {

// Calls body(formula) if op k has a unary float fast path for results of dtype t.
template <class Body>
void withUnaryFormula(OpKind k, DType t, Body body) {
  switch (k) {
    case OpKind::Neg: body([](double x) { return -x; }); return;
    case OpKind::Abs: body([](double x) { return std::fabs(x); }); return;
    case OpKind::Exp: body([](double x) { return std::exp(x); }); return;
    case OpKind::Log: body([](double x) { return std::log(x); }); return;
    case OpKind::Sqrt: body([](double x) { return std::sqrt(x); }); return;
    case OpKind::Rsqrt:  // in float below float64, as the device computes it
      if (t == DType::Float64) body([](double x) { return 1.0 / std::sqrt(x); });
      else body([](double x) { return static_cast<double>(1.0f / std::sqrt(static_cast<float>(x))); });
      return;
    case OpKind::Reciprocal: body([](double x) { return 1.0 / x; }); return;
    case OpKind::Tanh: body([](double x) { return std::tanh(x); }); return;
    case OpKind::Erf: body([](double x) { return std::erf(x); }); return;
    default: return;
  }
}

// Calls body(formula) if op k has a binary float fast path.
template <class Body>
void withBinaryFormula(OpKind k, Body body) {
  switch (k) {
    case OpKind::Add: body([](double a, double b) { return a + b; }); return;
    case OpKind::Sub: body([](double a, double b) { return a - b; }); return;
    case OpKind::Mul: body([](double a, double b) { return a * b; }); return;
    case OpKind::Div: body([](double a, double b) { return a / b; }); return;
    case OpKind::Maximum: body(floatMaximum); return;
    case OpKind::Minimum: body(floatMinimum); return;
    default: return;
  }
}

// Calls body(round), round being the rounding of double to float dtype t.
template <class Body>
void withRounding(DType t, Body body) {
  switch (t) {
    case DType::Float64: body([](double x) { return x; }); return;
    case DType::Float32: body([](double x) { return double{static_cast<float>(x)}; }); return;
    case DType::Float16: body([](double x) { return roundToFloatType(x, DType::Float16); }); return;
    case DType::BFloat16: body([](double x) { return roundToFloatType(x, DType::BFloat16); }); return;
    default: POLYRED_CHECK(false, "withRounding on a non-float dtype");
  }
}

}  // namespace polyred
