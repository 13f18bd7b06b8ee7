// Tuple reductions: an accumulator that is a tuple of typed fields.
//
// A TupleReduction is the user-visible description of argmax, Welford mean/variance,
// online max-and-sum (logsumexp) or any user-defined tuple reduction:
//   fields    each with a dtype, an identity, a lift and a combine expression
//   lift      field k of the tuple an element contributes, an expression over the
//             element's inputs (ScalarExpr::tupleArg(2, m) = element input m; the
//             reduced coordinate is passed as an input, an Iota tensor)
//   combine   field k of combine(a, b), an expression over a.fieldK and b.fieldK
//             (tupleArg(0, k), tupleArg(1, k)); `a` holds elements that come before
//             those of `b` in row-major order of the reduced elements
//   combineLater  optional, every field or none: field k of combine(a, b) where every
//             element of `b` comes after every element of `a` and neither is the
//             identity -- a cheaper form the kernels use to fold the lanes of one
//             vector (argmax: a later element never wins a tie, no index compare)
//   results   finalize: output r is an expression over the total's fields (side 0)
//   commutative  whether combine(a, b) == combine(b, a); combine must be associative.
//             A non-commutative tuple is evaluated strictly in order.
// The identity must satisfy combine(identity, t) == t == combine(t, identity).
//
// Typing: an expression computes in the types of its operands, promoted as in C++
// without the 16-bit floats: any float64 -> float64, else any float -> float32, else
// any int64 -> int64, else int32; comparisons, IsNan/IsInf/IsFinite and logical ops
// give bool; Select gives its branches' promoted type. Each field is then converted to
// its dtype. Field dtypes are bool, int32, int64, float32 or float64 (no 16-bit floats
// in accumulators: a float16 input is lifted to float32). The CUDA emitter prints the
// same types, and the reference interpreter evaluates with `widen` (float32 computed as
// float64: a more exact oracle, within compare.h's tolerances of the kernels).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/reduction.h"

namespace polyred {

struct TupleField {
  std::string name;
  DType dtype = DType::Float32;
  Scalar identity;
  ScalarExprPtr lift;
  ScalarExprPtr combine;
  ScalarExprPtr combineLater = nullptr;  // optional (see above)
};

struct TupleResult {
  std::string name;
  ScalarExprPtr finalize;  // over the total's fields (side 0)
};

struct TupleReduction {
  std::string name;
  std::vector<TupleField> fields;
  std::vector<TupleResult> results;
  std::vector<DType> inputs;  // the element inputs' dtypes (the Reduce node's inputs)
  bool commutative = true;

  bool hasCombineLater() const { return !fields.empty() && fields.front().combineLater != nullptr; }
  // Throws polyred::Error (naming `where`) if a field type is not allowed, an operand
  // names a missing field or input, an op is not elementwise or has the wrong arity,
  // or an expression does not type (a float-only op on an integer, ...).
  void validate(const std::string& where) const;
  std::string toString() const;
};

using TupleValue = std::vector<Scalar>;

// Evaluates with `widen`: float32 fields and intermediates computed in float64.
TupleValue tupleIdentity(const TupleReduction& t, bool widen = false);
TupleValue liftTuple(const TupleReduction& t, std::span<const Scalar> inputs, bool widen = false);
TupleValue combineTuples(const TupleReduction& t, const TupleValue& a, const TupleValue& b, bool widen = false);
// combineLater (t.hasCombineLater()): every element of `b` after those of `a`, neither
// the identity.
TupleValue combineLaterTuples(const TupleReduction& t, const TupleValue& a, const TupleValue& b, bool widen = false);
Scalar finalizeTuple(const TupleReduction& t, const TupleValue& total, int result, bool widen = false);
// The dtype finalize result `result` has (before the Reduce node casts it to its output).
DType tupleResultType(const TupleReduction& t, int result);

// The type rules above, shared with the CUDA emitter: the promoted operand type of two
// dtypes, and the type an expression gives for given field and input types.
DType promoteTupleTypes(DType a, DType b, bool widen = false);
// The type a value of dtype `t` is computed in: float64 for float32 with `widen`.
inline DType widenedTupleType(DType t, bool widen) { return widen && t == DType::Float32 ? DType::Float64 : t; }
// An op's result type over operands of `types` (with `widen`, float32 computed as
// float64, as the reference does), and the type its operands are
// converted to (Select: that of its branches; its condition is converted to bool).
struct TupleOpTyping {
  DType result;
  DType operand;
};
TupleOpTyping tupleOpTyping(OpKind op, std::span<const DType> types, bool widen = false);
DType tupleExprType(const ScalarExpr& e, std::span<const DType> a, std::span<const DType> b,
                    std::span<const DType> in);

// ---- Built-in tuple reductions ----------------------------------------------------
// The reduced coordinate comes in as element input 1 (an Iota along the one reduced
// axis). Ties go to the smallest index; NaN wins over every number and the first NaN's
// index is taken (PyTorch's argmax/argmin). Fields (value, index); results: 0 = index,
// 1 = value. The value field is defaultAccType(in). The index field (and the Iota that
// feeds it: element input 1's dtype) is `index`, except that an int64 index over an
// axis of fewer than 2^31 - 1 elements is carried in int32 (argIndexType): every index
// and the identity fit, the combine only compares and selects it, and the result is
// widened where it is stored -- 64-bit compares and selects were a fifth of argmax's
// instructions per element. combineLater: `b` wins only if `a` is not NaN and `b` is
// better or NaN (no tie test, no index compare).
std::shared_ptr<const TupleReduction> argExtremumTuple(bool max, DType in, DType index, int64_t extent);
// The dtype in which argExtremumTuple carries the index of an `extent`-long axis.
DType argIndexType(DType index, int64_t extent);
// Welford: fields (count, mean, m2) in float32 (float64 for float64 input), merged with
// Chan et al.'s parallel formula; results 0 = variance m2 / (count - correction),
// 1 = mean. Counts are exact to 2^24 per row in float32.
std::shared_ptr<const TupleReduction> welfordTuple(DType in, int64_t correction);
// Online logsumexp: fields (max m, sum s of exp(x - m)); result 0 = m + log(s).
std::shared_ptr<const TupleReduction> logSumExpTuple(DType in);
// Whether t is logSumExpTuple of a float input: compared by structure (input and field
// types, identities, lifts, combines, finalizes), not by name -- a composite file's
// declaration of the same tuple is one, a user's tuple called logsumexp that means
// something else is not.
bool isLogSumExpTuple(const TupleReduction& t);

}  // namespace polyred
