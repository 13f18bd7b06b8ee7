// Count fields of a tuple reduction, and divisions of counts.
//
// Takes a TupleReduction; gives which of its fields are counts and whether an
// expression over two tuples is a count. A count field is a float32 field whose
// identity is 0, whose lift is a whole-number constant in [1, 2^24] and whose combine
// (and later-combine) is a.fk + b.fk: Welford's count, any user tuple's element
// counter. Its values are whole numbers (floats from 2^24 on are whole, so a rounded
// sum of whole numbers stays one) no larger than 2^24 times the number of elements,
// below 2^87 for 2^63 elements. A count expression (countBound) is such a field of
// either side, a whole constant in [0, 2^24], or a sum of count expressions; its bound
// counts its terms, so a count expression of at most kCountTermsForDivision terms stays
// below 2^99.
//
// The CUDA emitter divides two count expressions of float32 with pr_div_counts
// (device/polyred_division.cuh): IEEE division's own fast path without its range check
// and slow-path branch, the same bits for operands in [0, 2^100]. The branch kept
// the compiler from batching a Welford loop's loads and put a call on every combine
// of the block's and blocks' trees (docs/design/pipeline-and-ir.md, "Tuple reductions").
#pragma once

#include <cstdint>
#include <vector>

#include "ir/tuple_reduction.h"

namespace polyred {

// countFields(t)[k]: whether field k is a count (above).
std::vector<bool> countFields(const TupleReduction& t);

// The number of count terms of `e`, an expression over sides 0 and 1 of the tuple
// (combine, later-combine, or finalize's side 0), or 0 when `e` is not a count
// expression. `counts` is countFields(t).
int64_t countBound(const ScalarExpr& e, const std::vector<bool>& counts);

// The most count terms a divided count expression may have (both operands).
inline constexpr int64_t kCountTermsForDivision = 4096;

// Whether Div(x, y) divides two count expressions that pr_div_counts divides exactly.
bool dividesCounts(const ScalarExpr& x, const ScalarExpr& y, const std::vector<bool>& counts);

}  // namespace polyred
