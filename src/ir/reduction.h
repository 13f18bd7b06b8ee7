// A reduction is (combiner, identity, accumulator type) -- never a fixed enum.
//
// The combiner is a small scalar expression over two arguments, the accumulator (arg 0)
// and the incoming value (arg 1), written in the same op vocabulary as elementwise
// graph ops. The reference interpreter evaluates it with evalElementwise(), the CUDA
// emitter prints it, and the device library recognizes the built-in shapes (a+b,
// max(a,b), ...) to pick a hardware atomic. A user-defined reduction is just another
// combiner expression; it must be associative and commutative (not checked).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace polyred {

struct ScalarExpr;
using ScalarExprPtr = std::shared_ptr<const ScalarExpr>;

struct ScalarExpr {
  enum class Kind : uint8_t { Arg, Const, Op };
  Kind kind = Kind::Arg;
  int arg = 0;        // Kind::Arg: 0 = accumulator, 1 = incoming value
  Scalar value;       // Kind::Const
  OpKind op = OpKind::Add;  // Kind::Op (an elementwise op)
  std::vector<ScalarExprPtr> operands;

  static ScalarExprPtr argument(int n);
  static ScalarExprPtr constant(Scalar v);
  static ScalarExprPtr apply(OpKind op, std::vector<ScalarExprPtr> operands);
};

// Evaluates `e` with every intermediate value in dtype `t`.
Scalar evalScalarExpr(const ScalarExpr& e, const Scalar& acc, const Scalar& x, DType t);
std::string toString(const ScalarExpr& e);

// The combiners whose shape the code generator knows (for hardware atomics).
enum class BuiltinCombiner : uint8_t { None, Sum, Prod, Max, Min, And, Or };

struct Reduction {
  std::string name;        // for dumps and kernel names: "sum", "max", or a user name
  ScalarExprPtr combiner;  // acc' = combiner(acc, x)
  Scalar identity;         // combiner(identity, x) == x, in accType
  DType accType = DType::Float32;

  // Built-in reductions for an input of dtype `in`; accType is defaultAccType(in).
  static Reduction sum(DType in);
  static Reduction prod(DType in);
  static Reduction max(DType in);
  static Reduction min(DType in);
  static Reduction logicalAnd(DType in);
  static Reduction logicalOr(DType in);

  // Recognizes a + b, a * b, max(a,b), min(a,b), a && b, a || b (either argument order).
  BuiltinCombiner builtin() const;
  Scalar combine(const Scalar& acc, const Scalar& x) const;
};

// float16/bfloat16 accumulate in float32; bool/int8/uint8 in int32 (exact for
// sum and prod modulo wrapping to the output type, which is applied at the end).
DType defaultAccType(DType in);

}  // namespace polyred
