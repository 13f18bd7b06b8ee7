// Pow by a constant exponent (canon/constant_powers): the forms PyTorch computes, on
// edge values, for every float dtype and the integer ones; the lowered kernels equal the
// reference bit for bit, and the generated CUDA calls no pow for them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "interp/reference.h"
#include "lowering_helpers.h"

namespace polyred {
namespace {

using test_support::expectIdenticalOutputs;
using test_support::expectNvrtcCompiles;
using test_support::lowered;

constexpr double kInf = std::numeric_limits<double>::infinity();

Graph powGraph(DType t, const Scalar& exponent, int64_t n) {
  GraphBuilder b("pow");
  Value x = b.input("x", t, {n});
  b.output(b.binary(OpKind::Pow, x, b.constant(exponent)));
  return b.build();
}

bool hasPow(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::Pow) return true;
  return false;
}

// Edge values of a float dtype: zeros, infinities, NaN, negatives, a subnormal, one
// near the top of the range, ordinary ones.
std::vector<double> floatEdges(DType t) {
  const double subnormal = t == DType::Float16 ? 0x1p-20 : t == DType::Float64 ? 0x1p-1060 : 0x1p-140;
  const double large = t == DType::Float16 ? 60000 : t == DType::Float64 ? 1e300 : 1e30;
  return {0.0, -0.0, kInf, -kInf, NAN, -1.0, -2.5, 3.0, 0.7, subnormal, -subnormal, large, -large, 1e-3, 2.0};
}

// What PyTorch's CUDA pow computes for these exponents (aten/src/ATen/native/cuda/
// PowKernel.cu): in float for 16-bit floats, each product of Half rounded to the dtype.
double torchPow(double x, double c, DType t) {
  const bool dbl = t == DType::Float64;
  auto r = [&](double v) { return Scalar::convert(v, t).f; };
  auto mul = [&](double a, double b) { return r(dbl ? a * b : static_cast<double>(static_cast<float>(a) * static_cast<float>(b))); };
  auto inv = [&](double a) { return r(dbl ? 1.0 / a : static_cast<double>(1.0f / static_cast<float>(a))); };
  auto root = [&](double a) { return dbl ? std::sqrt(a) : static_cast<double>(std::sqrt(static_cast<float>(a))); };
  if (c == 0) return 1;
  if (c == 1) return x;
  if (c == 2) return mul(x, x);
  if (c == 3) return mul(mul(x, x), x);
  if (c == -1) return inv(x);
  if (c == -2) return inv(mul(x, x));
  if (c == 0.5) return r(root(x));
  return r(dbl ? 1.0 / root(x) : static_cast<double>(1.0f / static_cast<float>(root(x))));  // -0.5: polyred's Rsqrt
}

TEST(ConstantPowers, FloatFormsMatchPyTorchOnEdgeValues) {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    for (double c : {0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " ^ " + std::to_string(c));
      const std::vector<double> edges = floatEdges(t);
      const int64_t n = static_cast<int64_t>(edges.size());
      const CompiledGraph compiled = compileGraph(powGraph(t, Scalar::ofFloat(t, c), n), CompileOptions{});
      EXPECT_FALSE(hasPow(compiled.graph)) << compiled.graph.toString();
      const HostTensor x = HostTensor::fromValues(t, {n}, edges);
      const std::vector<HostTensor> want = evaluateReference(compiled.graph, {x});
      for (int64_t k = 0; k < n; ++k) {
        const Scalar expected = Scalar::convert(torchPow(x.get(k).f, c, t), t);
        EXPECT_TRUE(want[0].get(k).identical(expected))
            << "x = " << x.get(k).toString() << ": reference " << want[0].get(k).toString() << ", PyTorch "
            << expected.toString();
      }
      expectIdenticalOutputs(lowered(compiled, {x}), want, "CPU");
      expectNvrtcCompiles(compiled);
    }
  }
}

TEST(ConstantPowers, EdgeValuesDifferFromCsPowAsPyTorchsDo) {
  auto at = [](double x, double c) {
    const Graph g = powGraph(DType::Float32, Scalar::ofFloat(DType::Float32, c), 1);
    const CompiledGraph compiled = compileGraph(g, CompileOptions{});
    return evaluateReference(compiled.graph, {HostTensor::fromValues(DType::Float32, {1}, {x})})[0].get(0).f;
  };
  EXPECT_TRUE(std::signbit(at(-0.0, 0.5)));  // sqrt(-0) = -0; powf gives +0
  EXPECT_TRUE(std::isnan(at(-kInf, 0.5)));   // sqrt(-inf) = NaN; powf gives +inf
  EXPECT_EQ(at(NAN, 0.0), 1.0);              // NaN^0 = 1
  EXPECT_EQ(at(-0.0, -0.5), -kInf);          // 1/sqrt(-0); powf gives +inf
  EXPECT_EQ(at(-0.0, -1.0), -kInf);
  EXPECT_EQ(at(-0.0, -2.0), kInf);
}

TEST(ConstantPowers, IntegerFormsEqualTheIntegerPow) {
  for (DType t : {DType::Int8, DType::UInt8, DType::Int32, DType::Int64}) {
    for (int64_t c : {0, 1, 2, 3}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " ^ " + std::to_string(c));
      const Graph g = powGraph(t, Scalar::ofInt(t, c), 8);
      const CompiledGraph compiled = compileGraph(g, CompileOptions{});
      EXPECT_FALSE(hasPow(compiled.graph));
      const IntRange range = intRange(t);
      HostTensor x = HostTensor::zeros(t, {8});
      const int64_t values[] = {0, 1, -1, 7, -9, range.hi, range.lo, range.hi / 3};
      for (int k = 0; k < 8; ++k) x.set(k, Scalar::convert(values[k], t));
      // The rewritten forms wrap as the integer Pow does (repeated squaring).
      const std::vector<HostTensor> want = evaluateReference(g, {x});
      expectIdenticalOutputs(evaluateReference(compiled.graph, {x}), want, "rewritten reference");
      expectIdenticalOutputs(lowered(compiled, {x}), want, "CPU");
      expectNvrtcCompiles(compiled);
    }
  }
  // Negative integer exponents keep the integer Pow's own rule.
  EXPECT_TRUE(hasPow(compileGraph(powGraph(DType::Int32, Scalar::ofInt(DType::Int32, -1), 8), CompileOptions{}).graph));
}

TEST(ConstantPowers, SquareCallsNoPow) {
  const CompiledGraph c = compileGraph(powGraph(DType::Float32, Scalar::ofFloat(DType::Float32, 2), 1 << 20), CompileOptions{});
  for (const KernelSpec& k : c.program.kernels) {
    EXPECT_EQ(k.source.find("powf("), std::string::npos) << k.source;
    EXPECT_EQ(k.source.find(" pow("), std::string::npos) << k.source;
  }
}

TEST(ConstantPowers, OtherExponentsAndTensorExponentsKeepPow) {
  for (double c : {5.0, 1.5, -3.0, 0.25}) {
    const CompiledGraph compiled =
        compileGraph(powGraph(DType::Float32, Scalar::ofFloat(DType::Float32, c), 64), CompileOptions{});
    EXPECT_TRUE(hasPow(compiled.graph)) << c;
    EXPECT_NE(compiled.program.kernels.at(0).source.find("powf("), std::string::npos) << c;
  }
  GraphBuilder b("tensor_exponent");
  Value x = b.input("x", DType::Float32, {64});
  b.output(b.binary(OpKind::Pow, x, b.input("e", DType::Float32, {64})));
  EXPECT_TRUE(hasPow(compileGraph(b.build(), CompileOptions{}).graph));
}

}  // namespace
}  // namespace polyred
