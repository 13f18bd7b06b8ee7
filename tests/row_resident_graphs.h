// Graphs with dependent reductions, shared by the CPU (row_resident_test.cc) and GPU
// (gpu/row_resident_gpu_test.cc) tests of row-resident kernels.
#pragma once

#include "frontend/builder.h"

namespace polyred::testgraphs {

// softmax(x) over `axis` of x: max, then the sum of exp(x - max), then the quotient.
inline Graph softmax(DType t, const Shape& shape, int64_t axis) {
  GraphBuilder b("softmax");
  Value x = b.input("x", t, shape);
  Value m = b.reduceMax(x, {axis}, /*keepDims=*/true);
  Value e = b.unary(OpKind::Exp, b.sub(x, m));
  Value s = b.reduce(b.cast(e, DType::Float32), Reduction::sum(DType::Float32), {axis}, true);
  b.output(b.binary(OpKind::Div, e, b.cast(s, t)));
  return b.build();
}

// Layer norm over the last axis (statistics in float32), with its mean and variance as
// outputs too.
inline Graph layerNorm(DType t, const Shape& shape) {
  GraphBuilder b("layer_norm");
  Value x = b.cast(b.input("x", t, shape), DType::Float32);
  auto scalar = [&](double v) { return b.constant(Scalar::ofFloat(DType::Float32, v)); };
  double n = static_cast<double>(shape.back());
  Value mean = b.mul(b.reduceSum(x, {-1}, true), scalar(1.0 / n));
  Value centered = b.sub(x, mean);
  Value var = b.mul(b.reduceSum(b.mul(centered, centered), {-1}, true), scalar(1.0 / n));
  Value y = b.mul(centered, b.unary(OpKind::Rsqrt, b.add(var, scalar(1e-5))));
  b.output(b.cast(y, t));
  b.output(mean);
  b.output(var);
  return b.build();
}

}  // namespace polyred::testgraphs
