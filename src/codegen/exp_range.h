// Exps whose approximation error cannot show: the argument is x - max(x) over the row,
// or the result is only rounded to a 16-bit float.
//
// Takes: a KernelPlan. Gives: per body value, whether it is an f32 Exp the kernel may
// compute with pr_expf_fast (the MUFU unit, 2 instructions, as CUDA's __expf: error at
// most 2 + floor(1.173|x|) ulp; expf is about 10 instructions) because
//  - its argument is Sub(a, s), s a row total of max over the same body value a (a
//    Reduced value of an earlier pass of a row-resident kernel), or the logsumexp
//    rewrite's Select(IsInf(m), c, m) of such a total (canon/logsumexp_rows.h): where
//    the row's max is finite the argument is at most 0 (a <= max(a), and the
//    subtraction keeps the sign), the result at most 1 and the error below 2^-22
//    absolute (+ 2^-126 for results flushed to 0), far under the float32 tolerance
//    (interp/compare.h: atol >= 4e-5). Rows whose max is not finite get the exact
//    answers: max -inf makes every argument -inf (result 0), max +inf makes the row's
//    sum +inf, NaN stays NaN. This is what softmax, logsumexp and cross-entropy rows
//    spend their Exp on;
//  - or every use of its result is a Cast to float16/bfloat16 and it is not stored or
//    reduced itself: below 2^-16 relative for arguments with a finite 16-bit result,
//    against a half ulp of 2^-11 (float16) or 2^-8 (bfloat16).
// (An Exp whose own dtype is 16-bit is rounded the same way: codegen/cuda_expr takes it
// fast without this analysis.)
//
// Decision (docs/design/runtime.md, "Runtime"): proven cases only -- the unit's error grows with
// |x|, which only a bounded argument or a coarse result hides; any other f32 Exp stays
// expf unless the user asks for --fast-exp.
#pragma once

#include <vector>

#include "canon/kernel_plan.h"

namespace polyred {

std::vector<bool> fastExps(const KernelPlan& plan);

}  // namespace polyred
