// polyred device library: division by a divisor that is the same for a whole loop, and
// division of tuple counts.
//
// Compiles under NVRTC (__host__ __device__) and as plain C++, so the CPU tests run the
// very function the kernels call (tests/device_division_test.cc).
//
// The divisor is taken apart once, before the loop (codegen/loop_invariants.h):
// pr_invariant_divisor(b) holds b, its reciprocal r = 1/b correctly rounded and whether
// a / b may go through r (r finite and not 0). Inside a function called per vector the
// compiler did not hoist the reciprocal out of the pass loop (SASS, sm_90, 2026-11-29):
// about 12 instructions a vector of 8.
//
// pr_div_invariant(a, d) is a / b: p = a * r and one Newton step on the exact residual
// a - p * b (Markstein) -- three instructions where a division is a sequence with a
// slow-path branch. A divisor whose reciprocal is 0, infinite or NaN takes the IEEE
// division; a product p that is 0 or not finite is the quotient itself, selected
// without a branch: zeros (with their sign), infinities and NaN of `a` divide exactly
// as a / b does. Within an ulp of the IEEE quotient everywhere: p is a / b to within
// 2^-24 relative, so where p alone underflows to 0 or overflows to infinity a / b is at
// most the next float (the smallest subnormal, the largest float) -- the only quotients
// that differ from before 2026-11-29, which took the IEEE division there. That branch,
// once per element with the convergence barriers the compiler puts around it, was half
// of a staged softmax's instructions per element in its last pass (SASS, sm_90,
// 2026-11-29).
//
// pr_div_coarse(a, d) is a / b for a quotient that is only rounded to float16 or
// bfloat16 (codegen/coarse_results.h): the product a * r alone, one instruction. r is
// 1/b to 2^-24 relative and the product adds 2^-24, so p is a / b to within 2^-23
// relative (as a / b itself when that is 0, infinite or NaN: r is finite and not 0) --
// against the half ulp of 2^-11 (float16) or 2^-8 (bfloat16) of the rounding that
// follows: the 16-bit result is the correctly rounded one, or its neighbour where a / b
// lies within 2^-23 relative of a rounding boundary (the pr_expf_fast rule for Exps,
// docs/design/runtime.md "Runtime"). Below float32's normal range (where p's error is absolute,
// 2^-149) the 16-bit types' own steps are 2^-24 (float16) and 2^-133 (bfloat16); past
// float32's largest finite value a / b rounds to infinity in both types anyway.
//
// The _lanes forms divide the V lanes of one vector, bit for bit as each lane alone,
// with the divisor's test once for the vector.
//
// pr_div_counts(a, b) is a / b, bit for bit, for a and b whole numbers in [0, 2^100]
// (tuple count fields, ir/tuple_counts.h): the sequence the compiler emits for IEEE
// division -- the approximate reciprocal, one Newton step on it, the product and one
// correction from the exact residual -- without the range check (FCHK) that sends
// operands of extreme exponents, zeros and specials to a slow-path call. A divisor in
// [1, 2^100] and a dividend in [0, 2^100] never need it: the reciprocal, the quotient
// and the residual are normal floats or zero. A zero divisor is selected apart (0 / 0
// is NaN, else +inf, as IEEE). Checked against a / b on the GPU over every a <= b <
// 2^13 and 2^30 random pairs to 2^100 in either order, zero divisors among them
// (tests/gpu/device_division_gpu_test.cc). In a Welford combine the check's branch kept
// the compiler from batching the loop's loads and put a call on every level of the
// block's tree: var_mean f32 [32,64,56,56] 15.6 -> 14.2 us with it gone (H200, 2026-11-29,
// with the combine's shared operations printed once).
#pragma once

#if defined(__CUDACC__)
#define POLYRED_DIV_HD __host__ __device__
#else
#include <cmath>
#define POLYRED_DIV_HD
#endif
#if defined(__CUDA_ARCH__)
#define POLYRED_DIV_UNROLL _Pragma("unroll")
#else
#define POLYRED_DIV_UNROLL
#endif

// 1/b correctly rounded: the reciprocal both forms divide by.
POLYRED_DIV_HD inline float pr_reciprocal_rn(float b) {
#if defined(__CUDA_ARCH__)
  return __frcp_rn(b);
#else
  return 1.0f / b;
#endif
}

// Whether a / b may go through the reciprocal r = 1/b: r is finite and not 0.
POLYRED_DIV_HD inline bool pr_usable_reciprocal(float r) {
#if !defined(__CUDA_ARCH__)
  using std::isfinite;
#endif
  return isfinite(r) & (r != 0.f);
}

// a / b from a usable reciprocal r: the product p, then one Newton step on the exact
// residual, unless p is 0 or not finite (then p is the quotient, without a branch).
POLYRED_DIV_HD inline float pr_div_by_reciprocal(float a, float b, float r) {
#if !defined(__CUDA_ARCH__)
  using std::fmaf;
  using std::isfinite;
#endif
  const float p = a * r;
  const float f = fmaf(fmaf(-p, b, a), r, p);
  return (isfinite(p) & (p != 0.f)) ? f : p;
}

// A divisor the loop does not change, taken apart once.
struct PrInvariantDivisor {
  float b;      // the divisor
  float r;      // 1/b, correctly rounded
  bool usable;  // whether a / b may go through r
};

POLYRED_DIV_HD inline PrInvariantDivisor pr_invariant_divisor(float b) {
  const float r = pr_reciprocal_rn(b);
  return {b, r, pr_usable_reciprocal(r)};
}

POLYRED_DIV_HD inline float pr_div_invariant(float a, PrInvariantDivisor d) {
  return d.usable ? pr_div_by_reciprocal(a, d.b, d.r) : a / d.b;
}

template <int V>
POLYRED_DIV_HD inline void pr_div_invariant_lanes(float (&q)[V], const float (&a)[V], PrInvariantDivisor d) {
  if (d.usable) {
    POLYRED_DIV_UNROLL
    for (int l = 0; l < V; ++l) q[l] = pr_div_by_reciprocal(a[l], d.b, d.r);
  } else {
    POLYRED_DIV_UNROLL
    for (int l = 0; l < V; ++l) q[l] = a[l] / d.b;
  }
}

POLYRED_DIV_HD inline float pr_div_coarse(float a, PrInvariantDivisor d) { return d.usable ? a * d.r : a / d.b; }

template <int V>
POLYRED_DIV_HD inline void pr_div_coarse_lanes(float (&q)[V], const float (&a)[V], PrInvariantDivisor d) {
  if (d.usable) {
    POLYRED_DIV_UNROLL
    for (int l = 0; l < V; ++l) q[l] = a[l] * d.r;
  } else {
    POLYRED_DIV_UNROLL
    for (int l = 0; l < V; ++l) q[l] = a[l] / d.b;
  }
}

POLYRED_DIV_HD inline float pr_div_counts(float a, float b) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(b));
  r = __fmaf_rn(r, __fmaf_rn(-b, r, 1.0f), r);
  const float q = __fmul_rn(a, r);
  const float rounded = __fmaf_rn(r, __fmaf_rn(-b, q, a), q);
  const float by_zero = a == 0.0f ? __int_as_float(0x7fffffff) : __int_as_float(0x7f800000);
  return b == 0.0f ? by_zero : rounded;
#else
  return a / b;
#endif
}
