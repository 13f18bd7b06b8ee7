// Values that a pass loop does not change, computed once before the loop.
//
// Takes: a KernelPlan, the subtree of a pass loop (its statements' passes), the names
// of the totals and what codegen knows of each value (OperandFacts). Gives: the ops the
// loop evaluates from earlier passes' totals and constants alone (softmax via
// logsumexp's log(sum) + max, a normalization's 1 / sqrt(var + eps)), emitted before
// the loop as scalars `inv<k>` that the loop's lanes copy (codegen/lane_values); and
// for each float Div by such a divisor (a row's sum), `const PrInvariantDivisor
// div<v>` (device/polyred_division.cuh: the divisor, its reciprocal and whether a
// quotient may go through it), which the loop's division names (cuda_expr,
// lane_values). Each value is the same expression with the same facts as in the loop,
// so the kernel's results are bit for bit what they were.
// Why: per vector, the compiler recomputed them -- a division's reciprocal and its test
// were about 12 instructions a vector of 8, softmax via logsumexp's logf about 20
// (SASS, sm_90, 2026-11-29); it does not hoist code with branches out of the loop.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "codegen/cuda_expr.h"
#include "poly/loop_ast.h"

namespace polyred {

// Per body value: computed from earlier passes' totals and constants alone.
std::vector<bool> valuesOfTotals(const KernelPlan& plan);
// Whether body value v is a Div by such a value (`ofTotals`: valuesOfTotals).
bool dividesByTotals(const KernelPlan& plan, const std::vector<bool>& ofTotals, size_t v);

// The scalar of a hoisted value, and the PrInvariantDivisor of a division.
std::string hoistedValueName(size_t v);
std::string hoistedDivisorName(size_t v);

struct InvariantHoist {
  const KernelPlan& plan;
  const std::vector<bool>& ofTotals;              // valuesOfTotals(plan)
  std::function<bool(size_t)> invariantDivision;  // per body value: divides by an invariant divisor
  std::function<std::string(int)> total;          // a Reduced value: that reduction's total
  std::function<OperandFacts(size_t)> facts;      // per body value (facts.divisor empty: not yet hoisted)
};

struct LoopInvariants {
  std::vector<bool> values;      // per body value: an op of totals and constants, as inv<k>
  std::vector<size_t> divisions;  // the other invariant divisions, with their div<v>
};

// What the statements under `loop` evaluate that the loop does not change.
LoopInvariants loopInvariantsUnder(const InvariantHoist& h, const AstNode& loop);

// Their declarations (one line each, indented by `indent`).
std::string hoistInvariants(const InvariantHoist& h, const LoopInvariants& inv, const std::string& indent);

}  // namespace polyred
