// Pow by a constant exponent, computed as PyTorch computes it.
//
// Takes: a verified Graph. Gives: the same graph, except that every Pow whose exponent
// is a scalar constant (a Constant tensor, as composite files write `x ** 2`) of a value
// PyTorch's CUDA pow special-cases, and whose result has the base's shape, is written as
// the ops PyTorch runs for it (aten/src/ATen/native/Pow.cpp, native/cuda/PowKernel.cu):
//     x^0 -> 1 (NaN^0 too)      x^1 -> x               x^2 -> x*x
//     x^3 -> (x*x)*x            x^-1 -> 1/x            x^-2 -> 1/(x*x)
//     x^0.5 -> sqrt(x)          x^-0.5 -> 1/sqrt(x) (polyred's Rsqrt)
// Each product is an op of the base's dtype, so a float16/bfloat16 product is rounded
// to it before the next, as PyTorch's Half arithmetic rounds; the reciprocals divide
// in float and round once, which equals PyTorch's division in double (a quotient
// rounded to 24 bits, then to 11 or 8, rounds as it would directly). The forms differ
// from C's pow on edge values, as PyTorch does: sqrt(-0) = -0 where powf gives +0,
// sqrt(-inf) = NaN where powf gives +inf, 1/sqrt(-0) = -inf. Integer bases take the
// exponents 0..3 (x*x wraps as pr_ipow does; PyTorch refuses negative integer powers,
// polyred's integer Pow keeps its own rule for them). Other exponents (4, 1.5, ...)
// and tensor exponents keep pow: PyTorch computes powf there too.
//
// Why a graph rewrite: the exponent's constancy is a graph fact, and the forms are ops
// polyred defines already, so the reference (which checks c.graph, this pass's output),
// the CPU executor and the CUDA emitter agree bit for bit without a second formula;
// a Pow of a tensor exponent keeps C's pow in all three.
#pragma once

#include "ir/graph.h"

namespace polyred {

Graph strengthReduceConstantPowers(const Graph& g);

}  // namespace polyred
