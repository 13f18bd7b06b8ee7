// Comparing a computed tensor with the reference, with per-dtype tolerances.
//
// Takes two HostTensors (got, expected) and a Tolerance; gives a CompareResult that
// says whether they match and, if not, where and by how much. toleranceFor() picks the
// tolerance from the output dtype and the number of elements a reduction combined.
//
// An element matches when |got - expected| <= atol + rtol * |expected|. NaN matches
// NaN and an infinity matches the same infinity; integers and bool match exactly.
//
// Tolerance table (u = unit roundoff of the type; inputs are O(1), as makeRandomInputs
// makes them):
//
//   output     rtol     why
//   float64    1e-12    ~9000 u (1.1e-16): libm vs CUDA double math (<= 2 ulp) and
//                       blocked vs sequential accumulation of millions of terms.
//   float32    1e-5     ~170 u (6e-8), ~84 ulp: CUDA float math functions are off by
//                       up to 2-4 ulp, errors compound over a chain of ~10 fused
//                       ops, and a GPU accumulates in float32 what the reference
//                       accumulates in double.
//   float16    2e-3     2 ulp (1 ulp <= 2^-10 = 9.8e-4 relative): the reference rounds
//                       once from double, a kernel from float32 math that may sit
//                       on the other side of a rounding boundary; one more ulp for
//                       an operand that itself came out one ulp off.
//   bfloat16   1.6e-2   2 ulp (1 ulp <= 2^-7 = 7.8e-3 relative), same reasoning.
//   products   max(rtol above, 4 sqrt(P) u(acc)) for an output downstream of a product
//              of P factors (toleranceFor): its relative error grows with P.
//   narrow     max(rtol above, rtol(N)) and atol at least 4 rtol(N) for an output
//   intermediates        downstream of a float16/bfloat16 value N that float math, Div,
//                       Pow or PhiloxNormal computed: the kernel's float32 result and the
//                       reference's double one may round to neighbouring N values (the
//                       ulps of logf, sincospif, ...), and an output cannot be more precise
//                       than its least precise rounding. (Seen: a float32 sum over 129
//                       bfloat16 normals, 14 of 30001 rows one bfloat16 ulp apart.)
//   integers   0        exact: integer math wraps identically everywhere.
//   bool       0        exact.
//
//   atol = 4 * max(rtol(output), rtol(acc) * sqrt(L)), acc = float32 for float16,
//   bfloat16 and float32 outputs (the accumulator type a kernel uses), float64 for
//   float64. The first term covers cancellation: a result near 0 computed from O(1)
//   operands is off by ~rtol in absolute terms. The second covers accumulation: a sum
//   of L O(1) terms of random sign has magnitude ~sqrt(L) and its rounding errors grow
//   with it; 4 is the headroom for a tree or blocked order vs the reference's
//   sequential double sum. For a float16/bfloat16 output the final rounding
//   (rtol(output), relative) dominates the float32 accumulation error.
//
// Operands that are not O(1): atol assumes terms of magnitude about 1. An element
// outside the bound gets a second look when the caller can say how large the numbers
// behind it were (m = PointReference::magnitude: the sum of the magnitudes of a sum's
// terms, propagated through the ops; see interp/point_reference.h): the bound becomes
//   atol * max(1, m / L) + rtol * |expected|,
// i.e. atol scaled by the mean magnitude of the L accumulated terms. A sum of
// x * 2^63 that cancels is then judged against errors of size 2^63 * u * sqrt(L), as
// float32 arithmetic makes them, while a wrong result over O(1) terms (m / L <= 1)
// meets exactly the bound above.
//
// Overflow: the reference accumulates float sums and products in double, a kernel in
// its accumulator type, where a partial result can overflow although the exact one
// does not ([3e38, 3e38, -3e38] in float32 is inf summed left to right, 3e38 in
// another order). When m reaches the largest finite value of the accumulator type
// (float32 for float16/bfloat16/float32 outputs), an infinite or NaN result is
// accepted for that element: it is what IEEE arithmetic in that type may give.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "interp/host_tensor.h"
#include "ir/graph.h"

namespace polyred {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
  int64_t length = 1;  // L: elements accumulated per value (scales magnitudes)
  double overflowAt = 0;  // magnitude from which a non-finite result is accepted (0: never)
};

// The magnitude m of the numbers behind element k of the expected tensor.
using MagnitudeAt = std::function<double(int64_t)>;

// The tolerance for an output of dtype `outputType` that combines up to
// `accumulationLength` elements per value (1 for elementwise-only results), of which up
// to `productLength` are factors of one product. A product's rounding errors are
// relative and grow with it: P factors multiplied in the accumulator type (unit
// roundoff u) are off by about sqrt(P) * u relative (a random walk of P roundings; a
// complex multiply rounds about sqrt(5) times as much, inside the headroom), however
// large the product is, so rtol becomes max(rtol(output), 4 * sqrt(P) * u(acc)).
// (A float32 product of 300001 factors near 1 drifts 3e-5 from the float64 one: within
// 4 * sqrt(300001) * 2^-24 = 1.3e-4, outside the plain 1e-5.)
Tolerance toleranceFor(DType outputType, int64_t accumulationLength, int64_t productLength = 1);

// toleranceFor(dtype of t, accumulationLength(g, t), productLength(g, t)): what every
// comparison of an output tensor uses.
Tolerance toleranceOf(const Graph& g, TensorId t);

// The largest number of elements combined per output value by any inexact reduction
// upstream of `t` (sum, prod and user combiners); 1 if none. Max/min/and/or
// reductions are exact and count as 1.
int64_t accumulationLength(const Graph& g, TensorId t);

// The least precise of float16 and bfloat16 among the values upstream of `t` that an
// inexact op (float math, Div, Pow, PhiloxNormal) produces, if any: toleranceOf widens
// t's tolerance to that type's.
std::optional<DType> inexactlyRoundedUpstream(const Graph& g, TensorId t);

// The largest number of factors a product reduction (the built-in prod, of any dtype)
// upstream of `t` multiplies per output value; 1 if none.
int64_t productLength(const Graph& g, TensorId t);

struct CompareResult {
  bool ok = false;
  int64_t mismatches = 0;
  int64_t firstBadIndex = -1;  // flat row-major index, -1 if none
  double maxAbsError = 0;      // over all elements; +inf when a NaN/inf did not match
  double maxRelError = 0;      // over elements whose expected value is nonzero
  std::string message;         // one line: the verdict, the first mismatch, the maxima
};

// Compares elementwise; a dtype or shape difference is a mismatch of the whole tensor
// (ok = false, mismatches = expected.size()).
// `magnitude`, when given, is asked only about elements outside the plain bound.
// `only`, when given (one flag per element), restricts the comparison to the flagged
// elements: a sampled check compares what it ran without touching the rest.
CompareResult compareTensors(const HostTensor& got, const HostTensor& expected, Tolerance tol,
                             const MagnitudeAt& magnitude = {}, const std::vector<bool>* only = nullptr);

}  // namespace polyred
