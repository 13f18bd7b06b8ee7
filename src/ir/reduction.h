// A reduction is (combiner, identity, accumulator type) -- never a fixed enum.
//
// The combiner is a small scalar expression over two arguments, the accumulator (arg 0)
// and the incoming value (arg 1), written in the same op vocabulary as elementwise
// graph ops. The reference interpreter evaluates it with evalElementwise(), the CUDA
// emitter prints it, and the device library recognizes the built-in shapes (a+b,
// max(a,b), ...) to pick a hardware atomic. A user-defined reduction is just another
// combiner expression; it must be associative and commutative on its partials, with a
// neutral identity (sampled by the graph verifier: ir/reduction_laws.h).
//
// Tuple reductions (argmax, Welford mean/variance, online logsumexp, ...) sit beside
// the scalar path rather than replacing it: a Reduction whose `tuple` is set combines a
// tuple of typed fields (ir/tuple_reduction.h) and yields its finalize result number
// `result`; combiner/identity/accType then describe nothing and builtin() is None. The
// scalar path is untouched, so every built-in reduction keeps its typed fast paths and
// hardware atomics; a tuple is never a 1-field scalar in disguise.
#pragma once

#include <memory>
#include <optional>
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
  int arg = 0;        // Kind::Arg: 0 = accumulator, 1 = incoming value (tuples: 2 = element input)
  int field = 0;      // Kind::Arg of a tuple expression: the field (or element input) number
  Scalar value;       // Kind::Const
  OpKind op = OpKind::Add;  // Kind::Op (an elementwise op)
  std::vector<ScalarExprPtr> operands;

  static ScalarExprPtr argument(int n);
  // A tuple expression's operand: side 0 (a, the earlier partial), 1 (b, the later one)
  // or 2 (the element's input number `field`), field `field`.
  static ScalarExprPtr tupleArg(int side, int field);
  static ScalarExprPtr constant(Scalar v);
  static ScalarExprPtr apply(OpKind op, std::vector<ScalarExprPtr> operands);
};

// Evaluates `e` with every intermediate value in dtype `t`.
Scalar evalScalarExpr(const ScalarExpr& e, const Scalar& acc, const Scalar& x, DType t);
std::string toString(const ScalarExpr& e);

// The combiners whose shape the code generator knows (for hardware atomics).
enum class BuiltinCombiner : uint8_t { None, Sum, Prod, Max, Min, And, Or };

struct TupleReduction;

struct Reduction {
  std::string name;        // for dumps and kernel names: "sum", "max", or a user name
  ScalarExprPtr combiner;  // acc' = combiner(acc, x)
  Scalar identity;         // combiner(identity, x) == x, in accType
  DType accType = DType::Float32;
  // Set for a tuple reduction (see the header comment): the node's inputs are the
  // tuple's element inputs, and its output is finalize result number `result`.
  std::shared_ptr<const TupleReduction> tuple;
  int result = 0;
  bool isTuple() const { return tuple != nullptr; }

  // Built-in reductions for an input of dtype `in` whose result is stored as `out`
  // (default: `in`); accType is accumulatorType(combiner, in, out).
  static Reduction sum(DType in, std::optional<DType> out = std::nullopt);
  static Reduction prod(DType in, std::optional<DType> out = std::nullopt);
  static Reduction max(DType in, std::optional<DType> out = std::nullopt);
  static Reduction min(DType in, std::optional<DType> out = std::nullopt);
  static Reduction logicalAnd(DType in, std::optional<DType> out = std::nullopt);
  static Reduction logicalOr(DType in, std::optional<DType> out = std::nullopt);

  // Recognizes a + b, a * b, max(a,b), min(a,b), a && b, a || b (either argument order).
  BuiltinCombiner builtin() const;
  Scalar combine(const Scalar& acc, const Scalar& x) const;
};

// float16/bfloat16 accumulate in float32; bool/int8/uint8/uint16 in int32 (exact for
// sum and prod modulo wrapping to the output type, which is applied at the end);
// uint32 in int64 (its maxima and minima exact); uint64 in int64 (its bit patterns).
DType defaultAccType(DType in);

// The accumulator of a built-in reduction of `in` stored as `out`. Max, min, and, or
// are exact: defaultAccType(in). Sum and prod honour the wider of input and output:
// integer inputs accumulate in int64 when input or output is int64 or uint64, or the
// output is a float type (an exact integer sum, rounded once), else in int32; float inputs in float64 when
// input or output is float64, else in float32 (never narrower than float32).
DType accumulatorType(BuiltinCombiner c, DType in, DType out);

// Whether a reduction accumulating in `acc` can store its result as `out` without
// having wrapped or rounded in a type narrower than `out`: an integer output needs an
// integer accumulator at least as wide, or a float one (a float sum cast to ints); a
// float output needs a float accumulator at least as wide, or int64.
bool accumulatorHolds(DType acc, DType out);

// Why a reduction (combiner c, or a tuple reduction) of the wide unsigned dtype `in`
// (uint16, uint32, uint64) stored as `out` is refused, or nullopt where it is defined.
// uint16 and uint32 reduce as the other integers (their values are exact in the int32 /
// int64 accumulators); tuple reductions of them are refused. uint64 sums and products
// accumulate its bit patterns in int64 and are defined into uint64 or int64 only;
// every other reduction of uint64 reads an order and is refused.
std::optional<std::string> unsignedReductionRefusal(BuiltinCombiner c, bool tuple, DType in, DType out);

}  // namespace polyred
