// Row access: whether a load reads each row of its kernel as one contiguous run.
//
// Takes: a load's flat element offset (isl text over i and j) and the kernel's extents
// M (kept) and N (reduced). Gives: base(i), the offset of the row's element j = 0, as an
// AST expression over the identifier `i` -- when offset(i, j) = base(i) + j at every
// point 0 <= i < M, 0 <= j < N (checked exactly by isl, not sampled); else nothing.
// The row stage (codegen/row_stage.h) copies rows [base(i), base(i) + N) as a block.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "poly/loop_ast.h"

namespace polyred {

std::optional<AstExpr> contiguousRowBase(const std::string& offset, int64_t M, int64_t N);

}  // namespace polyred
