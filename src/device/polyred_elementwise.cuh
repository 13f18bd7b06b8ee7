// polyred elementwise semantics on the device: the CUDA twin of evalElementwise()
// in src/ir/ops.cc. Generated kernels compute every value in a "compute type"
// (bool; int for int8/uint8/int32; long long; float for float16/bfloat16/float32;
// double) and fit it back to its declared dtype after each op (pr_fit_*), so a
// float16 intermediate is rounded exactly where the framework would store it.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "polyred_division.cuh"

// A generated kernel's launch bound: its threads per block and, when the runtime fits
// its registers (runtime/register_fit.h, NVRTC option -DPOLYRED_MIN_BLOCKS_PER_SM=n),
// the blocks per SM ptxas must leave room for.
#ifdef POLYRED_MIN_BLOCKS_PER_SM
#define POLYRED_LAUNCH_BOUNDS(threads) __launch_bounds__(threads, POLYRED_MIN_BLOCKS_PER_SM)
#else
#define POLYRED_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
#endif

// Integer negation that ptxas cannot miscompile. ptxas of CUDA 13.0 (V13.0.88, sm_90)
// drops the negation of a 32-bit value that feeds two same-kind integer min or max:
// min(min(-a, b), c) comes out as min(-max(a, b), c), an unrolled min/max reduction of
// negated values likewise (found by tests/gpu/random_graphs_gpu_test.cc; reproduced
// with nvcc -O1..-O3, correct at -O0). It treats 0 - x, x * -1 and neg.s32 as one
// negation, so every 32-bit negation in generated code is ~x + 1 written in PTX, which
// it keeps as a NOT and an add. 64-bit negation was measured correct. docs/design/codegen-and-device.md,
// "Toolchain defects worked around".
__device__ __forceinline__ int pr_neg(int x) {
  int r;
  asm("{\n\t.reg .b32 t;\n\tnot.b32 t, %1;\n\tadd.s32 %0, t, 1;\n\t}" : "=r"(r) : "r"(x));
  return r;
}
__device__ __forceinline__ long long pr_neg(long long x) { return (long long)(0ull - (unsigned long long)x); }
template <class T>
__device__ __forceinline__ T pr_neg(T x) { return -x; }  // other index types (no 32-bit signed negation)

// Index helpers for isl's AST expressions. Operands may mix widths (a 64-bit
// iterator and a 32-bit literal or subexpression): each computes in the common type
// of its operands, as the built-in operators do, so no call depends on deduction of
// one template parameter from two different types.
template <class A, class B>
__device__ __forceinline__ auto polyred_floord(A a, B b) -> decltype(a / b) {  // isl's fdiv_q, any signs
  using T = decltype(a / b);
  const T n = a, d = b, q = n / d;
  return (q * d != n && ((n < 0) != (d < 0))) ? q - 1 : q;
}
template <class A, class B>
__device__ __forceinline__ auto polyred_min(A a, B b) -> decltype(a + b) {
  using T = decltype(a + b);
  return (T)a < (T)b ? (T)a : (T)b;
}
template <class A, class B>
__device__ __forceinline__ auto polyred_max(A a, B b) -> decltype(a + b) {
  using T = decltype(a + b);
  return (T)a > (T)b ? (T)a : (T)b;
}

// --- complex64 ------------------------------------------------------------------------
// Two float32 words (real, imaginary), 8 bytes aligned 8: the layout of a complex64
// tensor element (std::complex<float>, MindSpore's complex64). It is its own compute
// type. Products, quotients and magnitudes are computed in double from the float32
// parts and rounded once, exactly as the host's evalElementwise (src/ir/ops.cc) does,
// so device and CPU agree bit for bit (products of two floats are exact in double).
// The reduction library sees a commutative tuple (shuffled word by word) that is
// also `polyred_complex`: a sum combines across blocks with two float atomicAdds.
struct alignas(8) pr_complex {
  float re, im;
  static constexpr bool polyred_tuple = true;
  static constexpr bool polyred_commutative = true;
  static constexpr bool polyred_complex = true;
};
__device__ __forceinline__ pr_complex pr_complex_of(float re, float im) {
  pr_complex z;
  z.re = re;
  z.im = im;
  return z;
}
__device__ __forceinline__ bool pr_cnonzero(pr_complex a) { return a.re != 0.0f || a.im != 0.0f; }
__device__ __forceinline__ pr_complex pr_conj(pr_complex a) { return pr_complex_of(a.re, -a.im); }
__device__ __forceinline__ pr_complex pr_cneg(pr_complex a) { return pr_complex_of(-a.re, -a.im); }
__device__ __forceinline__ float pr_cabs(pr_complex a) { return (float)hypot((double)a.re, (double)a.im); }
__device__ __forceinline__ pr_complex pr_cadd(pr_complex a, pr_complex b) { return pr_complex_of(a.re + b.re, a.im + b.im); }
__device__ __forceinline__ pr_complex pr_csub(pr_complex a, pr_complex b) { return pr_complex_of(a.re - b.re, a.im - b.im); }
__device__ __forceinline__ pr_complex pr_cmul(pr_complex a, pr_complex b) {
  const double ar = a.re, ai = a.im, br = b.re, bi = b.im;
  return pr_complex_of((float)(ar * br - ai * bi), (float)(ar * bi + ai * br));
}
// Smith's algorithm (the formula is in src/ir/ops.h, complexDivide).
__device__ __forceinline__ pr_complex pr_cdiv(pr_complex x, pr_complex y) {
  const double a = x.re, b = x.im, c = y.re, d = y.im;
  if (fabs(c) >= fabs(d)) {
    const double r = d / c, t = c + d * r;
    return pr_complex_of((float)((a + b * r) / t), (float)((b - a * r) / t));
  }
  const double r = c / d, t = c * r + d;
  return pr_complex_of((float)((a * r + b) / t), (float)((b * r - a) / t));
}
__device__ __forceinline__ pr_complex operator+(pr_complex a, pr_complex b) { return pr_cadd(a, b); }
__device__ __forceinline__ pr_complex operator*(pr_complex a, pr_complex b) { return pr_cmul(a, b); }
__device__ __forceinline__ pr_complex pr_load(const pr_complex* p, long long k) { return p[k]; }

// --- PhiloxNormal: counter-based standard normal values (src/ir/philox.h) ------------
// Philox4x32-10 of the counter's block (low, high word, 0, 0) under (low, high word of
// the key), then Box-Muller on uniforms that are exact in the compute type, so device
// and host start from the same u1, u2: float results take one word each (4 values a
// block), double results 52 bits of two words each (2 values a block). sincospi(2 u2)
// is cos and sin of 2 pi u2 without rounding the angle. PrPhiloxMemo (one per thread,
// declared by the kernel) keeps the last block's words and the values of the pairs
// computed from them: a thread's consecutive counters (vector lanes) encrypt their
// block once and take a log and a sincos once per two values, as curand's normal4.
struct PrPhiloxWords {
  unsigned w[4];
};
struct PrPhiloxMemo {
  long long block = -1, key = 0;  // block -1: nothing drawn yet (blocks are >= 0)
  PrPhiloxWords words;
  unsigned floatPairs = 0;  // bit q: float pair q's values are in z[2q], z[2q + 1]
  bool doublePair = false;  // d0, d1 hold the block's double values
  float z0, z1, z2, z3;     // (named, not an array: selects keep them in registers)
  double d0, d1;
};
__device__ __forceinline__ PrPhiloxWords pr_philox4x32_10(unsigned long long c, long long key) {
  const unsigned long long k = (unsigned long long)key;
  PrPhiloxWords x = {{(unsigned)c, (unsigned)(c >> 32), 0u, 0u}};
  unsigned k0 = (unsigned)k, k1 = (unsigned)(k >> 32);
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned hi0 = __umulhi(0xD2511F53u, x.w[0]), lo0 = 0xD2511F53u * x.w[0];
    const unsigned hi1 = __umulhi(0xCD9E8D57u, x.w[2]), lo1 = 0xCD9E8D57u * x.w[2];
    x = {{hi1 ^ x.w[1] ^ k0, lo1, hi0 ^ x.w[3] ^ k1, lo0}};
  }
  return x;
}
// The memo's words for `block` (encrypted when it held another block or key).
__device__ __forceinline__ void pr_philox_block(PrPhiloxMemo& memo, long long block, long long key) {
  if (block == memo.block && key == memo.key) return;
  memo.words = pr_philox4x32_10((unsigned long long)block, key);
  memo.block = block;
  memo.key = key;
  memo.floatPairs = 0;
  memo.doublePair = false;
}
__device__ __forceinline__ float pr_philox_normal_float(PrPhiloxMemo& memo, long long counter, long long key) {
  pr_philox_block(memo, (long long)((unsigned long long)counter >> 2), key);
  const int lane = (int)(counter & 3), pair = lane >> 1;
  if (!((memo.floatPairs >> pair) & 1u)) {
    const PrPhiloxWords& x = memo.words;
    const unsigned a = pair ? x.w[2] : x.w[0], b = pair ? x.w[3] : x.w[1];  // selects: no local memory
    const float u1 = __uint2float_rn((a >> 8) | 1u) * 0x1p-24f;
    const float u2 = __uint2float_rn((b >> 8) | 1u) * 0x1p-24f;
    float s, c;
    sincospif(2.0f * u2, &s, &c);
    const float r = sqrtf(-2.0f * logf(u1));
    if (pair) memo.z2 = r * c, memo.z3 = r * s;
    else memo.z0 = r * c, memo.z1 = r * s;
    memo.floatPairs |= 1u << pair;
  }
  return lane == 0 ? memo.z0 : lane == 1 ? memo.z1 : lane == 2 ? memo.z2 : memo.z3;
}
__device__ __forceinline__ double pr_philox_normal_double(PrPhiloxMemo& memo, long long counter, long long key) {
  pr_philox_block(memo, (long long)((unsigned long long)counter >> 1), key);
  if (!memo.doublePair) {
    const PrPhiloxWords& x = memo.words;
    const auto uniform = [](unsigned a, unsigned b) {
      const unsigned long long m = ((unsigned long long)a << 20) | (b >> 12);
      return __ull2double_rn(2 * m + 1) * 0x1p-53;
    };
    double s, c;
    sincospi(2.0 * uniform(x.w[2], x.w[3]), &s, &c);
    const double r = sqrt(-2.0 * log(uniform(x.w[0], x.w[1])));
    memo.d0 = r * c;
    memo.d1 = r * s;
    memo.doublePair = true;
  }
  return counter & 1 ? memo.d1 : memo.d0;
}

// --- fitting a computed value to its declared dtype --------------------------------
__device__ __forceinline__ float pr_fit_float16(float x) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ float pr_fit_bfloat16(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
__device__ __forceinline__ int pr_fit_int8(int x) { return (int)(signed char)x; }
__device__ __forceinline__ int pr_fit_uint8(int x) { return (int)(unsigned char)x; }
__device__ __forceinline__ int pr_fit_uint16(int x) { return (int)(unsigned short)x; }

// --- loads and stores (storage type <-> compute type) ------------------------------
__device__ __forceinline__ float pr_load(const __half* p, long long k) { return __half2float(__ldg(p + k)); }
__device__ __forceinline__ float pr_load(const __nv_bfloat16* p, long long k) { return __bfloat162float(__ldg(p + k)); }
__device__ __forceinline__ float pr_load(const float* p, long long k) { return __ldg(p + k); }
__device__ __forceinline__ double pr_load(const double* p, long long k) { return __ldg(p + k); }
__device__ __forceinline__ int pr_load(const int* p, long long k) { return __ldg(p + k); }
__device__ __forceinline__ long long pr_load(const long long* p, long long k) { return __ldg(p + k); }
__device__ __forceinline__ int pr_load(const signed char* p, long long k) { return p[k]; }
__device__ __forceinline__ int pr_load(const unsigned char* p, long long k) { return p[k]; }
__device__ __forceinline__ int pr_load(const unsigned short* p, long long k) { return __ldg(p + k); }
__device__ __forceinline__ unsigned pr_load(const unsigned* p, long long k) { return __ldg(p + k); }
__device__ __forceinline__ unsigned long long pr_load(const unsigned long long* p, long long k) { return __ldg(p + k); }
__device__ __forceinline__ bool pr_load(const bool* p, long long k) { return p[k]; }
// A Gather's element: p[k + index * stride], or 0 where the index is outside [0, extent)
// (nothing is read there).
template <class S>
__device__ __forceinline__ auto pr_gather(const S* p, long long k, long long index, long long stride, long long extent)
    -> decltype(pr_load(p, k)) {
  return index >= 0 && index < extent ? pr_load(p, k + index * stride) : decltype(pr_load(p, k))(0);
}

__device__ __forceinline__ void pr_store(__half* p, long long k, float v) { p[k] = __float2half_rn(v); }
__device__ __forceinline__ void pr_store(__nv_bfloat16* p, long long k, float v) { p[k] = __float2bfloat16_rn(v); }
template <class S, class V>
__device__ __forceinline__ void pr_store(S* p, long long k, V v) { p[k] = (S)v; }

// A ScatterAdd's store (canon/flatten): v added atomically at p[k + index * stride],
// dropped where the index is outside [0, extent). 32- and 64-bit elements only: the
// other types are written as masked sums (canon/scatter_fallback), so a call for them
// is a compile error here, not a silent fallback.
__device__ __forceinline__ void pr_atomic_add(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void pr_atomic_add(long long* p, long long v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));  // wraps as int64 does
}
__device__ __forceinline__ void pr_atomic_add(unsigned* p, unsigned v) { atomicAdd(p, v); }
__device__ __forceinline__ void pr_atomic_add(unsigned long long* p, unsigned long long v) { atomicAdd(p, v); }
__device__ __forceinline__ void pr_atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void pr_atomic_add(double* p, double v) { atomicAdd(p, v); }
template <class S, class V>
__device__ __forceinline__ void pr_scatter_add(S* p, long long k, long long index, long long stride, long long extent,
                                               V v) {
  if (index >= 0 && index < extent) pr_atomic_add(p + k + index * stride, (S)v);
}

// Zero where the value just loaded from p + k is not: a scatter's temporary left zero
// for the next launch by the kernel that reads it (canon/temporary_reset). A sparse
// scatter's temporary is mostly zero, so few of these stores happen.
template <class S, class V>
__device__ __forceinline__ void pr_zero_where_set(S* p, long long k, V loaded) {
  if (loaded != V(0) || loaded != loaded) p[k] = S(0);
}

// --- conversions (Cast) -------------------------------------------------------------
// Float to integer: truncate toward zero, saturate to int64, NaN -> 0, then wrap to
// the target (matches Scalar::convert on the host).
// Float to an integer type of range [lo, hi]: truncates toward zero, saturates out of
// range values and infinities, NaN -> 0 (as the host's Scalar::convert and CUDA's cvt).
__device__ __forceinline__ long long pr_f2int(double x, long long lo, long long hi) {
  if (x != x) return 0;
  if (x >= (double)hi) return hi;
  if (x <= (double)lo) return lo;
  return (long long)x;
}

// Float to uint64: as pr_f2int over [0, 2^64 - 1], whose top is no long long.
__device__ __forceinline__ unsigned long long pr_f2uint64(double x) {
  if (x != x || x <= 0) return 0;
  if (x >= 18446744073709551616.0) return ~0ull;
  return (unsigned long long)x;
}

// An integer to bfloat16 precision, rounded once: truncate to float (round toward
// zero), mark an inexact result in the last bit (round to odd), then round to
// nearest even; a plain (float) then bfloat16 conversion would round twice.
__device__ __forceinline__ float pr_int_to_bfloat16(long long v) {
  float t = __ll2float_rz(v);
  unsigned bits = __float_as_uint(t);
  if (__float2ll_rz(t) != v) bits |= 1u;
  return pr_fit_bfloat16(__uint_as_float(bits));
}
// The same for a uint64 (its values past 2^63 have no long long).
__device__ __forceinline__ float pr_uint_to_bfloat16(unsigned long long v) {
  float t = __ull2float_rz(v);
  unsigned bits = __float_as_uint(t);
  if (__float2ull_rz(t) != v) bits |= 1u;
  return pr_fit_bfloat16(__uint_as_float(bits));
}

// --- integer arithmetic that wraps (no signed-overflow UB) --------------------------
__device__ __forceinline__ int pr_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
// (a - b as a + (~b + 1), and a product by a literal -1 as its negation: a graph's
// Sub(0, x) and Mul(x, -1) would otherwise reach ptxas as a plain negation, pr_neg.)
__device__ __forceinline__ int pr_sub(int a, int b) { return (int)((unsigned)a + (unsigned)pr_neg(b)); }
__device__ __forceinline__ int pr_mul(int a, int b) {
  return b == -1 ? pr_neg(a) : a == -1 ? pr_neg(b) : (int)((unsigned)a * (unsigned)b);
}
__device__ __forceinline__ long long pr_add(long long a, long long b) {
  return (long long)((unsigned long long)a + (unsigned long long)b);
}
__device__ __forceinline__ long long pr_sub(long long a, long long b) {
  return (long long)((unsigned long long)a - (unsigned long long)b);
}
__device__ __forceinline__ long long pr_mul(long long a, long long b) {
  return (long long)((unsigned long long)a * (unsigned long long)b);
}
// uint32 and uint64 (computed as unsigned and unsigned long long) wrap natively.
__device__ __forceinline__ unsigned pr_add(unsigned a, unsigned b) { return a + b; }
__device__ __forceinline__ unsigned pr_sub(unsigned a, unsigned b) { return a - b; }
__device__ __forceinline__ unsigned pr_mul(unsigned a, unsigned b) { return a * b; }
__device__ __forceinline__ unsigned long long pr_add(unsigned long long a, unsigned long long b) { return a + b; }
__device__ __forceinline__ unsigned long long pr_sub(unsigned long long a, unsigned long long b) { return a - b; }
__device__ __forceinline__ unsigned long long pr_mul(unsigned long long a, unsigned long long b) { return a * b; }
// Unsigned quotient and remainder (by 0: quotient 0, remainder a, as pr_idiv / pr_imod);
// they are also the floored ones.
template <class T>
__device__ __forceinline__ T pr_udiv(T a, T b) { return b == 0 ? (T)0 : a / b; }
template <class T>
__device__ __forceinline__ T pr_umod(T a, T b) { return b == 0 ? a : a % b; }
template <class T>
__device__ __forceinline__ T pr_idiv(T a, T b) { return b == 0 ? (T)0 : (b == (T)-1 ? pr_neg(a) : a / b); }
// Remainders (ir/ops.h: Mod truncates, FloorMod floors; by 0 the quotient is 0, so the
// remainder is a) and Python's floor division.
template <class T>
__device__ __forceinline__ T pr_imod(T a, T b) { return b == 0 ? a : (b == (T)-1 ? (T)0 : a % b); }
template <class T>
__device__ __forceinline__ T pr_ifloormod(T a, T b) {
  const T r = pr_imod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? (T)(r + b) : r;
}
template <class T>
__device__ __forceinline__ T pr_ifloordiv(T a, T b) {
  const T q = pr_idiv(a, b);
  return b != 0 && pr_imod(a, b) != 0 && (a < 0) != (b < 0) ? (T)(q - 1) : q;
}
// Python's % on floats: fmod (exact), plus b once where the signs differ.
__device__ __forceinline__ float pr_floormod(float a, float b) {
  const float r = fmodf(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
__device__ __forceinline__ double pr_floormod(double a, double b) {
  const double r = fmod(a, b);
  return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
template <class T>
__device__ __forceinline__ T pr_ipow(T base, T e) {
  if (e < 0) return base == 1 ? (T)1 : (base == (T)-1 ? ((e & 1) ? (T)-1 : (T)1) : (T)0);
  T r = 1;
  while (e) {
    if (e & 1) r = pr_mul(r, base);
    base = pr_mul(base, base);
    e >>= 1;
  }
  return r;
}

// --- NaN-propagating max/min (torch.maximum / amax semantics) -----------------------
// NaN if either is NaN; of two zeros, max is +0 and min -0 in either order (as the
// host's floatMaximum / floatMinimum): never dependent on fmaxf's choice. Also the
// combiner of Max/Min reductions of floats (polyred_block_reduce.cuh).
// f32, sm_90: one max.NaN / min.NaN, which orders the zeros (measured on the H100,
// docs/results/notes-2026-11-25.md). sm_80..89: max.NaN / min.NaN, then for equal operands
// -- identical bits, or zeros of both signs -- their bits ANDed (max) or ORed (min),
// since the zero order was not measured there. Older targets and f64: a chain of
// selects, not nested conditionals (nvcc turned those into branches, five per call,
// which made max-heavy kernels issue-bound).
__device__ __forceinline__ float pr_max(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float m;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(b));
#if __CUDA_ARCH__ < 900
  m = a == b ? __int_as_float(__float_as_int(a) & __float_as_int(b)) : m;
#endif
  return m;
#else
  float m = a > b ? a : b;
  m = a == b ? __int_as_float(__float_as_int(a) & __float_as_int(b)) : m;
  m = b != b ? b : m;
  return a != a ? a : m;
#endif
}
__device__ __forceinline__ float pr_min(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float m;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(b));
#if __CUDA_ARCH__ < 900
  m = a == b ? __int_as_float(__float_as_int(a) | __float_as_int(b)) : m;
#endif
  return m;
#else
  float m = a < b ? a : b;
  m = a == b ? __int_as_float(__float_as_int(a) | __float_as_int(b)) : m;
  m = b != b ? b : m;
  return a != a ? a : m;
#endif
}
__device__ __forceinline__ double pr_max(double a, double b) {
  double m = a > b ? a : b;
  m = a == b ? __longlong_as_double(__double_as_longlong(a) & __double_as_longlong(b)) : m;
  m = b != b ? b : m;
  return a != a ? a : m;
}
__device__ __forceinline__ double pr_min(double a, double b) {
  double m = a < b ? a : b;
  m = a == b ? __longlong_as_double(__double_as_longlong(a) | __double_as_longlong(b)) : m;
  m = b != b ? b : m;
  return a != a ? a : m;
}
template <class T>
__device__ __forceinline__ T pr_max(T a, T b) { return a > b ? a : b; }
template <class T>
__device__ __forceinline__ T pr_min(T a, T b) { return a < b ? a : b; }

// exp(x) on the MUFU unit: ex2.approx.ftz of x*log2(e), two instructions (expf is about
// ten), as CUDA's __expf: error at most 2 + floor(1.173|x|) ulp (CUDA C++ Programming
// Guide, intrinsic functions), results below 2^-126 flushed to 0; infinities, NaN and
// overflow to inf as expf's. Codegen calls it only where that error cannot show:
//  - an Exp whose result is rounded to float16 or bfloat16 (below 2^-16 relative for
//    the arguments with a finite 16-bit result, |x| <= 89, against a half ulp of
//    2^-11 or 2^-8);
//  - an Exp of x - max(x) (codegen/exp_range.h): at most 1, so the error is below
//    2^-22 absolute;
//  - every f32 Exp when the user asks for it (POLYRED_FAST_EXP, `--fast-exp`).
__device__ __forceinline__ float pr_expf_fast(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x * 1.4426950408889634f));
  return r;
}

// Exp of f32: expf (IEEE-careful, the CPU reference's reading to an ulp or two) unless
// the translation unit defines POLYRED_FAST_EXP.
__device__ __forceinline__ float pr_expf(float x) {
#ifdef POLYRED_FAST_EXP
  return pr_expf_fast(x);
#else
  return expf(x);
#endif
}

template <class T>
__device__ __forceinline__ T pr_sign(T x) { return (T)((x > 0) - (x < 0)); }  // NaN -> 0

// The vector accesses (V lanes), built on the scalar accesses above.
#include "polyred_lanes.cuh"
