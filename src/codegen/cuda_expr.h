// CUDA expressions for the IR's values.
//
// Takes: dtypes, literals, ops with already-emitted operand expressions, and a user
// combiner's scalar expression. Gives: CUDA C++ expression text in the compute type
// (float for f16/bf16, int for the narrow integers, with pr_fit_* rounding or wrapping
// back to the dtype where the IR's semantics need it; docs/format.md). The kernel
// emitter (codegen/cuda_emitter) and the tests use these; the device-side helpers they
// call (pr_add, pr_f2int, ...) are in src/device/polyred_elementwise.cuh.
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "ir/dtype.h"
#include "ir/ops.h"
#include "ir/reduction.h"

namespace polyred {

// The C condition `a && b`, the literals "true" and "false" folded away.
std::string conjunction(const std::string& a, const std::string& b);
// The elements of the graph input a Load reads (0: a temporary, or not a load).
int64_t loadedTensorElements(const Graph& g, const BodyValue& load);
// The kernel parameter a load reads: "in<k>" (graph input k) or "tmp<k>" (a result an
// earlier kernel materialized).
std::string loadPointer(const BodyValue& load);
// Where a body store goes: graph output "out<n>", or the temporary "tmp<n>" a later
// kernel reads (a scan's result, gathered params).
std::string storePointer(const ElementwiseOutput& store);
// The C++ type a dtype computes in.
std::string computeType(DType t);
// An exact literal (hexadecimal floats; NaN and infinities through bit patterns).
std::string emitLiteral(const Scalar& v);
// `e` (a `from` value in its compute type) converted to `to` with the IR's rules.
std::string emitCast(const std::string& e, DType from, DType to);
// What an analysis proved about an op's operands, for a cheaper device function.
struct OperandFacts {
  bool fastExp = false;  // (Exp) its approximation cannot show: codegen/exp_range.h
  // (f32 Div) the divisor is the same for every element of a loop (a row's total):
  // pr_div_invariant, whose reciprocal the loop computes once (codegen/loop_invariants.h).
  bool invariantDivisor = false;
  // ... its PrInvariantDivisor, declared before the loop ("": taken apart at the division)
  std::string divisor;
  // ... and the quotient is only rounded to 16 bits: pr_div_coarse (codegen/coarse_results.h)
  bool coarseQuotient = false;
  // (a float16/bfloat16 result) only stores read it: left in float, as the store rounds
  // it (codegen/store_rounding.h)
  bool roundedByStore = false;
  // (f32 Div in a tuple's expressions) both operands are counts: pr_div_counts
  // (ir/tuple_counts.h)
  bool divisionOfCounts = false;
};
// Whether a Div of `operand`-typed values takes pr_div_invariant (a float divisor the
// loop does not change; float64 keeps the IEEE division): the scalar form and codegen's
// lanes (pr_div_invariant_lanes) decide alike.
inline bool dividesByInvariant(DType operand, const OperandFacts& facts) {
  return facts.invariantDivisor && isFloat(operand) && operand != DType::Float64;
}
// The division's device function, "pr_div_invariant" or "pr_div_coarse", and its
// divisor argument: the hoisted PrInvariantDivisor, else one made of `divisor`.
inline std::string invariantDivisionFunction(const OperandFacts& facts) {
  return facts.coarseQuotient ? "pr_div_coarse" : "pr_div_invariant";
}
inline std::string invariantDivisorArgument(const OperandFacts& facts, const std::string& divisor) {
  return facts.divisor.empty() ? "pr_invariant_divisor(" + divisor + ")" : facts.divisor;
}
// The per-thread PrPhiloxMemo (device/polyred_elementwise.cuh) that PhiloxNormal's
// device function reads and fills; a kernel using the op declares it (cuda_emitter).
inline constexpr const char* kPhiloxMemo = "pr_philox_memo";
std::string emitElementwise(OpKind op, const std::vector<std::string>& operands,
                            const std::vector<DType>& operandTypes, DType result, OperandFacts facts = {});
// The device library's functor for a built-in combiner in accumulator type `acc`
// ("polyred_dev::Sum<float>"); "" for BuiltinCombiner::None (a user combiner).
std::string builtinFunctor(BuiltinCombiner c, const std::string& acc);
// A user combiner over a (arg 0) and b (arg 1), in accumulator type t.
std::string scalarExprToCuda(const ScalarExpr& e, DType t);

}  // namespace polyred
