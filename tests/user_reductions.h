// User-defined reductions shared by the tests.
#pragma once

#include "ir/reduction.h"

namespace polyred::test_support {

// acc' = max(|acc|, |x|) from 0 in float32: associative and commutative on its partials
// (never negative), and no built-in shape (Reduction::builtin() is None).
inline Reduction maxAbsReduction() {
  Reduction r;
  r.name = "max_abs";
  r.accType = DType::Float32;
  r.identity = Scalar::ofFloat(DType::Float32, 0);
  r.combiner = ScalarExpr::apply(OpKind::Maximum, {ScalarExpr::apply(OpKind::Abs, {ScalarExpr::argument(0)}),
                                                  ScalarExpr::apply(OpKind::Abs, {ScalarExpr::argument(1)})});
  return r;
}

}  // namespace polyred::test_support
