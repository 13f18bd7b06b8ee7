// polyred device library: closed forms that join one thread's vector of V lanes to a
// tuple accumulator in fewer operations than the lane tree of combines
// (codegen/tuple_emitter.h, tupleLaneTree). The generator calls them for the tuples
// codegen/lane_folds.h names; the CPU executor folds the same way
// (codegen/lane_folds.cc, foldLanesOnHost).
#pragma once

#include "polyred_elementwise.cuh"  // pr_max of floats

// logsumexp's online tuple (max M, sum S of exp(x - M); ir/tuple_reduction.h,
// logSumExpTuple), V lanes at once. The vector's own pair is m = the lanes' maximum
// (NaN if a lane is NaN) and s = the sum of exp(x_l - z), z = m where finite, else 0
// (a vector of -inf adds nothing; one holding +inf sums to +inf); then
//     M' = max(M, m),  S' = S * exp(M - z') + s * exp(m - z'),  z' = M' where finite, else 0
// -- what the lane tree of V combines (each an Exp, compares and selects) gives, up to
// rounding, for V + 2 Exps and V maxima. Every exponent is at most 0 where the maximum
// is finite (one term of each sum exactly 1), so the MUFU unit's error stays below
// 2^-22 absolute per term (the pr_expf_fast rule of codegen/exp_range.h).
// exp(x_l - z) is 2^(x_l * log2(e) - z * log2(e)): one FFMA a lane, z * log2(e) once a
// vector. That product overflows for a finite |z| past 2^128 * ln(2) (a row near the
// float32 limit gave -inf that way; H200, 2026-11-29): there s is 1 -- every other lane
// is at least an ulp of z (2^104) below it, its term 0, the lanes equal to z count 1
// each, and the log of their count (at most V) is far under half an ulp of z, so the
// finalized z + log(s) is the same float (a branch on |z| instead cost 3%).
// Edge values as the tuple's combine: M' = -inf (nothing but -inf yet) keeps S' = 0 or
// S; +inf anywhere makes S' = +inf; NaN makes both NaN. Lanes outside the row come in
// as -inf.
template <int V>
__device__ __forceinline__ void pr_fold_logsumexp_lanes(const float (&x)[V], float& M, float& S) {
  static_assert(V >= 1 && (V & (V - 1)) == 0, "polyred: lanes come in powers of two");
  constexpr float kLog2e = 1.4426950408889634f;
  float m[V];
#pragma unroll
  for (int l = 0; l < V; ++l) m[l] = x[l];
#pragma unroll
  for (int step = 1; step < V; step *= 2)
#pragma unroll
    for (int l = 0; l + step < V; l += 2 * step) m[l] = pr_max(m[l], m[l + step]);
  const float shift = isinf(m[0]) ? 0.0f : m[0];
  const float zl = shift * kLog2e;
  float e[V];
#pragma unroll
  for (int l = 0; l < V; ++l) asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e[l]) : "f"(fmaf(x[l], kLog2e, -zl)));
#pragma unroll
  for (int step = 1; step < V; step *= 2)
#pragma unroll
    for (int l = 0; l + step < V; l += 2 * step) e[l] += e[l + step];
  // A finite shift past 2^128 * ln(2) overflows zl (its terms 0 or inf): s is 1 (above).
  e[0] = isinf(zl) ? 1.0f : e[0];
  const float joined = pr_max(M, m[0]);
  const float z = isinf(joined) ? 0.0f : joined;
  S = S * pr_expf_fast(M - z) + e[0] * pr_expf_fast(m[0] - z);
  M = joined;
}
