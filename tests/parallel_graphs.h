// Sub-graphs of independent kernels, shared by the CPU (launch_groups_test.cc) and GPU
// (gpu/horizontal_fusion_gpu_test.cc) tests of horizontal fusion.
#pragma once

#include "frontend/builder.h"
#include "row_resident_graphs.h"

namespace polyred::testgraphs {

// Four independent reductions and elementwise outputs of different shapes, dtypes and
// forms; two of them multi-block (a cross-block combine inside a part).
inline Graph fourIndependentParts() {
  GraphBuilder b("parallel");
  Value x = b.input("x", DType::Float32, {300, 70});
  Value y = b.input("y", DType::Float16, {40001});
  Value z = b.input("z", DType::Int32, {33, 5});
  Value w = b.input("w", DType::Float32, {20000, 40});
  b.output(b.reduceSum(x, {1}));                                   // x-reduce, short rows
  b.output(b.reduceMax(y, {0}));                                   // all-reduce, multi-block
  b.output(b.mul(z, b.constant(Scalar::ofInt(DType::Int32, 3))));  // elementwise
  b.output(b.reduceSum(w, {0}));                                   // y-reduce, multi-block
  return b.build();
}

// A row-resident softmax (several passes, block-wide totals), an int8 sum of long rows
// split over blocks, and a bool and-reduce of narrow columns, side by side.
inline Graph softmaxBesideOtherReductions() {
  GraphBuilder b("softmax_and_more");
  Value x = b.input("x", DType::Float32, {300, 1000});
  Value m = b.reduceMax(x, {1}, /*keepDims=*/true);
  Value e = b.unary(OpKind::Exp, b.sub(x, m));
  b.output(b.binary(OpKind::Div, e, b.reduceSum(e, {1}, true)));
  b.output(b.reduce(b.input("q", DType::Int8, {3, 200000}), Reduction::sum(DType::Int8, DType::Int32), {1}, false,
                    DType::Int32));
  b.output(b.reduce(b.input("p", DType::Bool, {5000, 3}), Reduction::logicalAnd(DType::Bool), {0}));
  return b.build();
}

// A layer norm over long rows (its mean and variance are materialized and read by later
// kernels: dependent launches) beside an independent elementwise output, and, with
// `largeMax`, an independent bfloat16 max over 2^20 elements.
inline Graph longRowLayerNormBesideIndependentOutputs(bool largeMax) {
  GraphBuilder b(largeMax ? "layer_norm_long_rows_and_more" : "layer_norm_and_more");
  Value x = b.input("x", DType::Float32, {3, 70000});
  auto scalar = [&](double v) { return b.constant(Scalar::ofFloat(DType::Float32, v)); };
  Value mean = b.mul(b.reduceSum(x, {-1}, true), scalar(1.0 / 70000));
  Value centered = b.sub(x, mean);
  Value var = b.mul(b.reduceSum(b.mul(centered, centered), {-1}, true), scalar(1.0 / 70000));
  b.output(b.mul(centered, b.unary(OpKind::Rsqrt, b.add(var, scalar(1e-5)))));
  b.output(b.unary(OpKind::Neg, b.input("other", DType::Float16, {7, 9})));
  if (largeMax) b.output(b.reduceMax(b.input("big", DType::BFloat16, {1 << 20}), {0}));
  return b.build();
}

}  // namespace polyred::testgraphs
