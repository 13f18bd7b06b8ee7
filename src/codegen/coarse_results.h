// Float32 values whose result is only rounded to a 16-bit float: an approximation finer
// than that rounding cannot show.
//
// Takes: a KernelPlan. Gives: whether body value v is used, and only as the operand of
// Casts to float16/bfloat16 (not stored, not reduced, read by nothing else); and which
// float Divs have a quotient that is rounded to 16 bits before anything reads it (their
// own dtype is float16/bfloat16, computed in float and rounded by cuda_expr's fit or by
// the store, or float32 only cast to 16 bits). Codegen then takes pr_expf_fast for such
// an Exp (codegen/exp_range.h) and, for such a division by an invariant divisor, the
// product by the reciprocal (pr_div_coarse, device/polyred_division.cuh): both within
// 2^-16 relative of the exact value where the 16-bit result is finite, against a half
// ulp of 2^-11 (float16) or 2^-8 (bfloat16).
#pragma once

#include <vector>

#include "canon/kernel_plan.h"

namespace polyred {

bool onlyRoundedTo16Bits(const KernelPlan& plan, int v);

// Per body value: a float Div (not float64) whose quotient is only rounded to 16 bits.
std::vector<bool> coarseQuotients(const KernelPlan& plan);

}  // namespace polyred
