// Graphs with dependent reductions, shared by the CPU (row_resident_test.cc) and GPU
// (gpu/row_resident_gpu_test.cc) tests of row-resident kernels.
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <vector>

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

// x - extremum(x) over the last axis: the extremum's sign of zero shows in the
// differences of the row's zeros, its NaN in every element.
inline Graph shiftByExtremum(DType t, const Shape& shape, bool minimum) {
  GraphBuilder b("shift_by_extremum");
  Value x = b.input("x", t, shape);
  b.output(b.sub(x, b.reduce(x, minimum ? Reduction::min(t) : Reduction::max(t), {-1}, true)));
  return b.build();
}

// Rows for a maximum or minimum: zeros of both signs, NaN at the head, the tail (masked
// lanes) and inside, infinities, subnormal halves and ordinary values (row r % 8 picks).
inline std::vector<double> extremumEdgeRows(int64_t rows, int64_t n) {
  std::mt19937 gen(40);
  std::normal_distribution<double> normal(0.0, 3.0);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<double> v(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double& x = v[static_cast<size_t>(r * n + j)];
      const bool odd = ((j * 2654435761LL + r) >> 7) & 1;
      switch (r % 8) {
        case 0: x = odd ? -0.0 : 0.0; break;
        case 1: x = j == (r * 7919) % n ? nan : normal(gen); break;
        case 2: x = j == r % n ? inf : j == (r * 31) % n ? -inf : normal(gen); break;
        case 3: x = j == n - 1 ? nan : normal(gen); break;
        case 4: x = j == 0 ? nan : normal(gen); break;
        case 5: x = j % 97 == 0 ? (odd ? -0.0 : 0.0) : -std::abs(normal(gen)) - 1e-3; break;
        case 6: x = -0.0; break;
        default: x = odd ? 6e-8 * (1 + j % 5) : -6e-8 * (1 + j % 3); break;
      }
    }
  return v;
}

}  // namespace polyred::testgraphs
