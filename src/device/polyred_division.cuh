// polyred device library: division by a divisor that is the same for a whole loop.
//
// Compiles under NVRTC (__host__ __device__) and as plain C++, so the CPU tests run the
// very function the kernels call (tests/device_library_test.cc).
//
// pr_div_invariant(a, b) is a / b for a b the loop does not change (a row's total,
// softmax's denominator): the reciprocal r = 1/b, correctly rounded (in a vectorized
// pass once per vector: the compiler does not hoist it out of the pass loop -- SASS,
// sm_90, session 40), then p = a * r and one Newton step on the exact residual
// a - p * b (Markstein) -- three instructions where a division is a sequence with a
// slow-path branch. A divisor whose reciprocal is 0, infinite or NaN takes the IEEE
// division; a product p that is 0 or not finite is the quotient itself, selected
// without a branch: zeros (with their sign), infinities and NaN of `a` divide exactly
// as a / b does. Within an ulp of the IEEE quotient everywhere: p is a / b to within
// 2^-24 relative, so where p alone underflows to 0 or overflows to infinity a / b is at
// most the next float (the smallest subnormal, the largest float) -- the only quotients
// that differ from before session 37, which took the IEEE division there. That branch,
// once per element with the convergence barriers the compiler puts around it, was half
// of a staged softmax's instructions per element in its last pass (SASS, sm_90,
// 2026-11-29).
//
// pr_div_invariant_lanes(q, a, b) is pr_div_invariant(a[l], b) for the V lanes of one
// vector, bit for bit, with the divisor's test once for the vector.
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

POLYRED_DIV_HD inline float pr_div_invariant(float a, float b) {
  const float r = pr_reciprocal_rn(b);
  return pr_usable_reciprocal(r) ? pr_div_by_reciprocal(a, b, r) : a / b;
}

template <int V>
POLYRED_DIV_HD inline void pr_div_invariant_lanes(float (&q)[V], const float (&a)[V], float b) {
  const float r = pr_reciprocal_rn(b);
  if (pr_usable_reciprocal(r)) {
    POLYRED_DIV_UNROLL
    for (int l = 0; l < V; ++l) q[l] = pr_div_by_reciprocal(a[l], b, r);
  } else {
    POLYRED_DIV_UNROLL
    for (int l = 0; l < V; ++l) q[l] = a[l] / b;
  }
}
