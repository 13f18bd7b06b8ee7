// The op vocabulary of the graph IR and the scalar semantics of every elementwise op.
//
// evalElementwise() is the one definition of what an elementwise op computes on the
// host: the reference interpreter, the CPU executor of lowered kernels and the
// reduction combiners all call it, so they cannot drift apart. Float math is done in
// double and rounded to the result dtype; integer math is exact and wraps to the
// result dtype. The CUDA emitter implements the same semantics (codegen/).
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "ir/dtype.h"

namespace polyred {

enum class OpKind : uint8_t {
  // unary elementwise
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Reciprocal, Tanh, Sin, Cos, Erf,
  Erfc, Expm1, Log1p, Asin, Acos, Atan, Asinh, Acosh,  // float math, as C's erfc, expm1, ...
  Sign, Floor, Ceil, Round, LogicalNot, IsNan, IsInf, IsFinite,
  CReal, CImag, Conj,  // complex64 -> float32 real / imaginary part; complex conjugate
  // binary elementwise
  Add, Sub, Mul, Div,
  FloorDiv,  // floor(a / b): Python's // (integers exact; b == 0 gives 0, as Div)
  FloorMod,  // a - floor(a / b) * b: Python's %, the sign of b (integers: b == 0 gives a)
  Mod,       // a - trunc(a / b) * b: C's fmod / %, the sign of a (integers: b == 0 gives a)
  Pow,
  Atan2,     // atan2(a, b) (floats)
  Maximum, Minimum, Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd,
  LogicalOr,
  Complex,  // (real, imag) float32 -> complex64
  PhiloxNormal,  // (counter, key) int64 -> a standard normal float value (ir/philox.h);
                 // the result's dtype is the output tensor's (a float type)
  // other elementwise
  Select,  // (cond, a, b)
  Cast,    // to the output tensor's dtype
  AddN,    // n-ary sum
  Assign,  // (dst, value): value, written into the input dst (an in-place output)
  // data movement and indexing
  BroadcastTo, Reshape, Transpose,
  Window,  // out[idx] = in[(idx[d] + begin[d]) mod in.shape[d]]: a slice, or a shifted crop
  Iota,    // no input; out[idx] = idx[axis] (the coordinate along one axis)
  Gather,  // (params, indices; axis): out[a.., i.., b..] = params[a.., indices[i..], b..],
           // 0 where the index is outside [0, params.shape[axis])
  ScatterAdd,  // (values, indices[, base]): out = base (or 0), then out[indices[i..], b..] +=
               // values[i.., b..]; the index addresses the first k axes of out flattened
               // (axes = {k}, default 1); indices outside them are dropped (a segment sum,
               // TensorScatterAdd, index_add: ir/graph.h, ScatterRows)
  // reduction (described by a Reduction: combiner, identity, accumulator type)
  Reduce,
  // a reduction's running fold along one axis (axes = {axis}): out[.., k, ..] folds
  // x[.., 0, ..] .. x[.., k, ..] in the accumulator type, cast to the output dtype;
  // exclusive: up to k - 1 (the identity at 0); reverse: from the end down to k
  Scan,
};

enum class OpCategory : uint8_t { Unary, Binary, OtherElementwise, Movement, Reduction };

OpCategory opCategory(OpKind k);
std::string_view opName(OpKind k);  // our canonical name, e.g. "Add", "Reduce"
bool isElementwise(OpKind k);       // Unary, Binary or OtherElementwise
bool isComparison(OpKind k);        // result is bool
bool isPredicate(OpKind k);         // IsNan/IsInf/IsFinite: float in, bool out
bool isLogical(OpKind k);           // LogicalNot/And/Or: bool in, bool out
bool isFloatMath(OpKind k);         // Exp, Log, Sqrt, ..., Atan2: float operands only
bool isComplexPart(OpKind k);       // CReal, CImag: complex64 in, float32 out
// The elementwise ops defined on complex64 operands (Add, Sub, Mul, Div, Neg, Abs,
// Conj, CReal, CImag, Select); every other op refuses them (graph verifier, exit 2).
bool acceptsComplex(OpKind k);
// Why elementwise op k is refused on operands of the wide unsigned dtype t (uint16,
// uint32, uint64), or nullopt where it is defined. Defined: arithmetic (Add, Sub, Mul,
// Pow wrap modulo 2^n), comparisons (unsigned), Div/Mod (unsigned; their floored forms
// are the same), Maximum/Minimum, Abs (the value), Sign, Select, Cast. Refused: Neg
// (no unsigned meaning), float math (as on every integer type), and on uint64 every op
// that reads an order or a quotient (its values past 2^63 have no int64 value on the host).
// uint8 keeps its own established semantics (not refused here).
std::optional<std::string> unsignedRefusal(OpKind k, DType t);
// The operands an op takes in a reduction's expression (a combiner, a tuple's lift,
// combine or finalize): 1 for a unary op, 2 for a binary one, 3 for Select; -1 for any
// other op, which such an expression cannot use (PhiloxNormal too: its operands and
// result differ in dtype).
int expressionArity(OpKind k);

// Evaluates an elementwise op (not Cast/Assign/AddN, which are trivial) on host
// scalars. Operands must already have the op's input dtype; the result has dtype
// `result`.
Scalar evalElementwise(OpKind k, std::span<const Scalar> args, DType result);

// Float Maximum / Minimum (and the max / min reductions): NaN if either operand is
// NaN; of two zeros, Maximum gives +0 and Minimum -0 whatever their order, so that
// results never depend on operand order or compiler flags. The device library
// implements the same (pr_max / pr_min, polyred_dev::Max / Min).
double floatMaximum(double a, double b);
double floatMinimum(double a, double b);

// Complex division (a + bi) / (c + di) as polyred defines it on host and device
// (pr_cdiv): Smith's algorithm, which scales by the larger of |c|, |d| so that no
// intermediate overflows where the quotient does not: if |c| >= |d|, r = d/c,
// t = c + d*r, ((a + b*r)/t, (b - a*r)/t); else r = c/d, t = c*r + d,
// ((a*r + b)/t, (b*r - a)/t). Division by 0 + 0i gives NaN parts (r = 0/0).
void complexDivide(double a, double b, double c, double d, double& re, double& im);

}  // namespace polyred
