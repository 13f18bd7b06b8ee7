// polyred device library: division by a divisor that is the same for a whole loop.
//
// Compiles under NVRTC (__host__ __device__) and as plain C++, so the CPU tests run the
// very function the kernels call (tests/device_library_test.cc).
//
// pr_div_invariant(a, b) is a / b for a b the loop does not change (a row's total,
// softmax's denominator): the reciprocal r = 1/b, correctly rounded, once (the compiler
// hoists it out of the loop), then q = a * r and one Newton step on the exact residual
// a - q * b (Markstein) -- three instructions where a division is a sequence with a
// slow-path branch. A divisor whose reciprocal is 0, infinite or NaN, and a product that
// is 0 or not finite (zeros keep their sign, underflows and overflows round as IEEE),
// take the IEEE division, so every special value divides exactly as a / b does.
#pragma once

#if defined(__CUDACC__)
#define POLYRED_DIV_HD __host__ __device__
#else
#include <cmath>
#define POLYRED_DIV_HD
#endif

POLYRED_DIV_HD inline float pr_div_invariant(float a, float b) {
#if defined(__CUDA_ARCH__)
  const float r = __frcp_rn(b);
#else
  const float r = 1.0f / b;
  using std::fmaf;
  using std::isfinite;
#endif
  const float q = a * r;
  if (!(isfinite(r) && r != 0.f && isfinite(q) && q != 0.f)) return a / b;
  return fmaf(fmaf(-q, b, a), r, q);
}
