// Edge-value cases for every elementwise op, every cast and the exact reductions,
// shared by the CPU test (tests/numeric_semantics_test.cc: the reference against the
// lowered code run by the CPU executor) and the GPU test (tests/gpu/
// edge_values_gpu_test.cc: the reference against the kernels). Both compare bit for
// bit (NaN matching NaN): every choice of docs/format.md's "Numeric semantics" is
// made once and must come out the same on the host and the device.
//
// Inputs hold NaN, +-inf, +-0, denormals, x.5 ties, the largest finite values,
// out-of-range values for every cast, INT_MIN, INT_MAX and -1 (for INT_MIN / -1), and
// integers past float's significand; binary ops see every pair.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "frontend/builder.h"
#include "interp/host_tensor.h"
#include "ir/ops.h"

namespace polyred::edge {

struct EdgeCase {
  std::string name;
  Graph graph;
  std::vector<HostTensor> inputs;
  // False for float transcendental functions (Exp, Log, Rsqrt, Tanh, Sin, Cos, Erf,
  // Pow): CUDA's are within a few ulp, not correctly rounded, so the GPU matches them
  // within compare.h's tolerance (NaN and infinities still exactly). Everything else,
  // the host's choices included, must match bit for bit.
  bool exact = true;
};

inline bool isTranscendental(OpKind k) {
  return (isFloatMath(k) && k != OpKind::Sqrt && k != OpKind::Reciprocal) || k == OpKind::Pow;
}

inline constexpr DType kFloatTypes[] = {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64};
inline constexpr DType kIntTypes[] = {DType::Int8, DType::UInt8, DType::Int32, DType::Int64};

inline std::vector<double> floatEdges() {
  const double inf = std::numeric_limits<double>::infinity();
  return {0.0, -0.0, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 1e-40, -1e-40, 1e-310, 6e-8, 65504, 65520,
          3.3895313892515355e38, 3.4028234663852886e38, -3.4028234663852886e38, 1e300, 255.9, 256, -128.5, 127.9,
          3e9, -3e9, 2147483647.5, 9.3e18, -9.3e18, 16842753, inf, -inf, std::nan("")};
}

inline std::vector<int64_t> intEdges() {
  return {0, 1, -1, 2, -2, 7, -7, 100, 127, -128, 128, 255, 256, 65504, 65520, 16777217, 16842753,
          2147483647, -2147483647 - 1, int64_t{1} << 40, 9007199791611905, -9007199791611905,
          std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
}

// `values` (or the integers) as a tensor of dtype t; each rounded or wrapped to t.
inline HostTensor floatTensor(DType t, const std::vector<double>& values) {
  HostTensor h = HostTensor::zeros(t, {static_cast<int64_t>(values.size())});
  for (size_t k = 0; k < values.size(); ++k) h.set(static_cast<int64_t>(k), Scalar::convert(values[k], t));
  return h;
}
inline HostTensor intTensor(DType t, const std::vector<int64_t>& values) {
  HostTensor h = HostTensor::zeros(t, {static_cast<int64_t>(values.size())});
  for (size_t k = 0; k < values.size(); ++k) h.set(static_cast<int64_t>(k), Scalar::convert(values[k], t));
  return h;
}
inline HostTensor edgeTensor(DType t) {
  if (t == DType::Bool) return intTensor(t, {0, 1, 1, 0});
  return isFloat(t) ? floatTensor(t, floatEdges()) : intTensor(t, intEdges());
}

// Every pair (a, b) of the edge tensor's elements, as two tensors.
inline std::pair<HostTensor, HostTensor> allPairs(const HostTensor& e) {
  const int64_t n = e.size();
  HostTensor a = HostTensor::zeros(e.dtype, {n * n}), b = a;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      a.set(i * n + j, e.get(i));
      b.set(i * n + j, e.get(j));
    }
  return {a, b};
}

inline std::vector<EdgeCase> edgeCases() {
  std::vector<EdgeCase> cases;
  std::vector<DType> all(std::begin(kFloatTypes), std::end(kFloatTypes));
  all.insert(all.end(), std::begin(kIntTypes), std::end(kIntTypes));
  all.push_back(DType::Bool);
  for (DType t : all) {
    const std::string type(dtypeName(t));
    for (int op = 0; op <= static_cast<int>(OpKind::LogicalOr); ++op) {
      auto k = static_cast<OpKind>(op);
      if (isComplexPart(k) || k == OpKind::Conj) continue;  // complex64 only: tests/complex_test.cc
      bool logical = isLogical(k);
      if (logical != (t == DType::Bool)) continue;  // logical ops take bool; others not
      if (isFloatMath(k) && !isFloat(t)) continue;  // refused by the verifier
      GraphBuilder b(std::string(opName(k)) + "_" + type);
      std::vector<HostTensor> inputs;
      if (opCategory(k) == OpCategory::Unary) {
        b.output(b.unary(k, b.input("x", t, edgeTensor(t).shape)));
        inputs = {edgeTensor(t)};
      } else {
        auto [x, y] = allPairs(edgeTensor(t));
        b.output(b.binary(k, b.input("x", t, x.shape), b.input("y", t, y.shape)));
        inputs = {x, y};
      }
      cases.push_back({std::string(opName(k)) + "/" + type, b.build(), inputs, !(isFloat(t) && isTranscendental(k))});
    }
    for (DType to : all) {  // every cast
      if (to == t) continue;
      GraphBuilder b("cast");
      HostTensor x = edgeTensor(t);
      b.output(b.cast(b.input("x", t, x.shape), to));
      cases.push_back({"Cast/" + type + "->" + std::string(dtypeName(to)), b.build(), {x}});
    }
    if (t != DType::Bool) {  // exact reductions: max / min of every pair (NaN, signed zeros)
      auto [x, y] = allPairs(edgeTensor(t));
      const int64_t n = edgeTensor(t).size();
      HostTensor pairs = HostTensor::zeros(t, {n * n, 2});
      for (int64_t k = 0; k < n * n; ++k) {
        pairs.set(2 * k, x.get(k));
        pairs.set(2 * k + 1, y.get(k));
      }
      GraphBuilder b("extrema");
      Value v = b.input("x", t, pairs.shape);
      b.output(b.reduce(v, Reduction::max(t), {1}));
      b.output(b.reduce(v, Reduction::min(t), {1}));
      cases.push_back({"ReduceMaxMin/" + type, b.build(), {pairs}});
      // Rows of 64 repeating x, y, y, x: vectorized rows fold whole vectors, float16
      // ones as half pairs (pr_fold_max_pairs: the pair maximum of (x, y) with (y, x),
      // NaN and signed zeros in either order).
      HostTensor rows = HostTensor::zeros(t, {n * n, 64});
      for (int64_t k = 0; k < n * n; ++k)
        for (int64_t l = 0; l < 64; ++l) rows.set(64 * k + l, l % 4 == 0 || l % 4 == 3 ? x.get(k) : y.get(k));
      GraphBuilder r("extrema_rows");
      Value w = r.input("x", t, rows.shape);
      r.output(r.reduce(w, Reduction::max(t), {1}));
      r.output(r.reduce(w, Reduction::min(t), {1}));
      cases.push_back({"ReduceMaxMin64/" + type, r.build(), {rows}});
    }
  }
  return cases;
}

}  // namespace polyred::edge
