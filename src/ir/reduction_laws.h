// Sampled checks of the laws a parallel reduction relies on.
//
// Takes a user's reduction (a tuple declaration, or a scalar combiner that is not one
// of the built-ins) and gives nothing, or a polyred::Error (exit 2) naming the law that
// failed, the sample values and the two results. A kernel folds elements into each
// thread's accumulator, merges accumulators along a tree, and merges blocks' partials
// in the last block; the result equals the reference's left-to-right fold only if, on
// the partial results that fold can produce:
//   identity     combine(identity, p) == p == combine(p, identity)
//   associative  combine(combine(p, q), r) == combine(p, combine(q, r))
//   commutative  combine(p, q) == combine(q, p)  (scalar combiners always -- they merge
//                in any order, atomics included; tuples where they declare it)
//   one element  scalar combiners only: combine(p, combine(identity, x)) ==
//                combine(p, x) -- merging a one-element partial is folding the element
//                (refuses fold-only combiners such as acc + x * x, whose partials a
//                tree would square again).
// The partials are drawn from a fixed pseudo-random sequence of elements in small
// ranges (ties included) and built by the reduction itself (lift, combine, fold), so a
// law that holds only on reachable values (an identity below every partial) passes.
// Floats are compared in float64 within 1e-6 relative (1e-6 absolute below 1), NaN
// equal to NaN; integers and bools exactly. A sample check can miss a law that fails
// only on rare values; it cannot refuse a reduction whose laws hold (to that tolerance).
#pragma once

#include <string>

#include "ir/reduction.h"
#include "ir/tuple_reduction.h"

namespace polyred {

// Throws polyred::Error naming `where` if a sampled law fails.
void checkTupleLaws(const TupleReduction& t, const std::string& where);
// A scalar reduction of elements of dtype `element`; built-in combiners are not sampled.
void checkCombinerLaws(const Reduction& r, DType element, const std::string& where);

}  // namespace polyred
