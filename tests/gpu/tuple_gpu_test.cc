// Tuple reductions on the GPU: the generated Tuple<r> structs, the word-wise warp
// shuffles of the device library and the in-order cross-block combine, launched and
// compared with the reference interpreter -- argmax/argmin bit for bit (ties, NaN,
// every form, several blocks), Welford and logsumexp within the float tolerances --
// and repeated launches give identical bytes. The CPU half is tests/tuple_codegen_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "interp/reference.h"
#include "gpu/gpu_compile.h"
#include "runtime/executor.h"  // gpuAvailable

using namespace polyred;

namespace {

struct FormCase {
  const char* name;
  Shape shape;
  int64_t axis;
};
// Each form over several blocks per row (2048 elements a block), but small enough that
// the reference -- which interprets the tuple's combine, 1.4-3 us per element -- keeps
// each test well under a minute (at 10^6 elements per graph two tests ran past 25 s on
// the H100, 2026-11-23).
// The "lanes" forms have extents divisible by 8: for the tuples with a long combine
// (Welford, logsumexp) and those with a later-combine (argmax, argmin: whole vectors fold
// with it, masked ones with the combine), vector loads and the lifted
// lanes folded as a tree (codegen's tupleLaneTree). The odd x and all forms (and x-short,
// rows shorter than most vectors) get masked lanes: rows start anywhere inside a vector
// (poly/vectorize.h).
const FormCase kForms[] = {{"all", {200003}, 0},        {"x", {7, 60001}, 1},         {"y", {60001, 7}, 0},
                           {"x-short", {4096, 33}, 1},  {"x-lanes", {5, 40000}, 1}, {"all-lanes", {160000}, 0}};

HostTensor tiesAndNaNs(DType t, const Shape& s) {
  HostTensor h = HostTensor::zeros(t, s);
  for (int64_t k = 0; k < h.size(); ++k) {
    double v = static_cast<double>((k * 7919) % 13) - 6;
    if (t == DType::UInt8) v = std::abs(v);
    h.set(k, Scalar::convert(v, t));
  }
  if (isFloat(t))
    for (int64_t k = 77777; k < h.size(); k += 99991) h.set(k, Scalar::ofFloat(DType::Float64, std::nan("")));
  return h;
}

// Rows at the edges of argmax/argmin's order (the lane trees, the later-combine of
// whole vectors, the block and cross-block combines): row r of a [rows, n] float tensor is
//   0  all -inf                      (argmax: index 0, though -inf is the identity's value)
//   1  all +inf                      (argmin: index 0)
//   2  all NaN                       (index 0 for both)
//   3  -0 then +0 later, else -inf   (argmax: the -0, value -0; equal keys keep the first)
//   4  a NaN in the last element, +inf and -inf earlier (both: the NaN)
//   5  the maximum twice, in different vectors, the second at the row's end
//   6  a NaN, then a different NaN payload, then numbers (the first NaN, its bits)
//   7+ seeded uniform values in [-4, 4] rounded to t (rarely a new extreme per vector)
HostTensor extremeKeyRows(DType t, int64_t rows, int64_t n, unsigned seed) {
  HostTensor h = HostTensor::zeros(t, {rows, n});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-4, 4);
  const double inf = INFINITY, nan = std::nan("");
  auto set = [&](int64_t r, int64_t c, double v) { h.set(r * n + c, Scalar::ofFloat(DType::Float64, v)); };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double v = uniform(rng);
      switch (r) {
        case 0: v = -inf; break;
        case 1: v = inf; break;
        case 2: v = nan; break;
        case 3: v = c == n / 3 ? -0.0 : c == n / 3 + 17 ? 0.0 : -inf; break;
        case 4: v = c == n - 1 ? nan : c == 5 ? inf : c == 9 ? -inf : v; break;
        case 5: v = c == 11 || c == n - 1 ? 9.0 : v; break;
        default: break;
      }
      set(r, c, v);
    }
  if (rows > 6 && n > 40) {  // row 6: two NaN payloads; the first must win with its own bits
    for (int64_t c = 0; c < n; ++c) set(6, c, uniform(rng));
    const uint32_t quiet = 0x7fc00001u, other = 0xffc00002u;
    float a, b;
    std::memcpy(&a, &quiet, 4);
    std::memcpy(&b, &other, 4);
    h.set(6 * n + 21, Scalar::convert(static_cast<double>(a), t));
    h.set(6 * n + 37, Scalar::convert(static_cast<double>(b), t));
  }
  return h;
}

// Normally distributed values (seeded), rounded to t.
HostTensor normalValues(DType t, const Shape& s, unsigned seed, double mean, double stddev) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(mean, stddev);
  HostTensor h = HostTensor::zeros(t, s);
  for (int64_t k = 0; k < h.size(); ++k) h.set(k, Scalar::ofFloat(DType::Float64, normal(rng)));
  return h;
}

using test_support::compileForGpu;

}  // namespace

TEST(TupleGpu, ArgExtremaAgreeWithTheReferenceBitForBit) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  for (const FormCase& f : kForms)
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int32, DType::Int8,
                    DType::UInt8, DType::Int64}) {
      GraphBuilder b("arg");
      Value x = b.input("x", t, f.shape);
      auto [imax, vmax] = b.argmaxWithValue(x, f.axis);
      auto [imin, vmin] = b.argminWithValue(x, f.axis, DType::Int64);
      b.output(imax);
      b.output(vmax);
      b.output(imin);
      b.output(vmin);
      const Graph g = b.build();
      const std::vector<HostTensor> inputs = {tiesAndNaNs(t, f.shape)};
      const std::vector<HostTensor> want = evaluateReference(g, inputs);
      const std::vector<HostTensor> got = launchOnGpu(compileForGpu(g), inputs);
      const std::string what = std::string(f.name) + " " + std::string(dtypeName(t));
      for (size_t o = 0; o < want.size(); ++o)
        for (int64_t k = 0; k < want[o].size(); ++k)
          if (!got[o].get(k).identical(want[o].get(k))) {
            ADD_FAILURE() << what << " output " << o << " element " << k << ": GPU " << got[o].get(k).toString()
                          << ", reference " << want[o].get(k).toString();
            break;
          }
    }
}

// argmax/argmin of the edge rows above against the reference, bit for bit: rows equal
// to the identity's value, infinities, signed zeros, NaN payloads, late ties; rows whose
// length is a multiple of the vector (every vector whole) and rows that start inside a
// vector (masked vectors).
TEST(TupleGpu, ArgExtremaOfEdgeRowsAgreeBitForBit) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  for (int64_t n : {int64_t{40000}, int64_t{40003}, int64_t{4103}})
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64}) {
      GraphBuilder b("arg_edges");
      Value x = b.input("x", t, {12, n});
      auto [imax, vmax] = b.argmaxWithValue(x, 1);
      auto [imin, vmin] = b.argminWithValue(x, 1, DType::Int64);
      b.output(imax);
      b.output(vmax);
      b.output(imin);
      b.output(vmin);
      const Graph g = b.build();
      const std::vector<HostTensor> inputs = {extremeKeyRows(t, 12, n, static_cast<unsigned>(n))};
      const std::vector<HostTensor> want = evaluateReference(g, inputs);
      const std::vector<HostTensor> got = launchOnGpu(compileForGpu(g), inputs);
      for (size_t o = 0; o < want.size(); ++o)
        for (int64_t k = 0; k < want[o].size(); ++k)
          EXPECT_TRUE(got[o].get(k).identical(want[o].get(k)))
              << "n " << n << " " << dtypeName(t) << " output " << o << " row " << k << ": GPU "
              << got[o].get(k).toString() << ", reference " << want[o].get(k).toString();
    }
}

TEST(TupleGpu, WelfordAndLogSumExpWithinTolerance) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  for (const FormCase& f : kForms)
    for (DType t : {DType::Float32, DType::Float16, DType::Float64}) {
      GraphBuilder b("stats");
      Value x = b.input("x", t, f.shape);
      auto [var, mean] = b.varMean(x, {f.axis}, 1);
      b.output(var);
      b.output(mean);
      b.output(b.logSumExp(x, {f.axis}));
      const Graph g = b.build();
      const HostTensor in = normalValues(t, f.shape, 11, 3.0, 2.0);
      const std::vector<HostTensor> got = launchOnGpu(compileForGpu(g), {in});
      CpuCheckReport r = compareOutputs(g, got, {}, evaluateReference(g, {in}));
      EXPECT_TRUE(r.ok) << f.name << " " << dtypeName(t) << "\n" << r.message;
    }
}

// --fast-exp (ex2.approx): logsumexp and a sum of exponentials stay within the float
// tolerances of the reference's exp, on aligned and masked rows.
TEST(TupleGpu, FastExpStaysWithinTheFloatTolerances) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  for (const FormCase& f : kForms)
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      GraphBuilder b("fast_exp");
      Value x = b.input("x", t, f.shape);
      b.output(b.logSumExp(x, {f.axis}));
      b.output(b.reduceSum(b.unary(OpKind::Exp, x), {f.axis}));
      const Graph g = b.build();
      const HostTensor in = normalValues(t, f.shape, 5, 0.0, 4.0);
      CompileOptions o;
      o.target = currentTarget();
      o.fastExp = true;
      const CompiledGraph c = compileGraph(g, o);
      ASSERT_NE(c.program.kernels.at(0).source.find("#define POLYRED_FAST_EXP"), std::string::npos);
      const std::vector<HostTensor> got = launchOnGpu(c, {in});
      CpuCheckReport r = compareOutputs(g, got, {}, evaluateReference(g, {in}));
      EXPECT_TRUE(r.ok) << f.name << " " << dtypeName(t) << "\n" << r.message;
    }
}

TEST(TupleGpu, WelfordKeepsTheVarianceOfLargeMeans) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  const int64_t rows = 4, n = 1 << 20;
  GraphBuilder b("welford");
  Value x = b.input("x", DType::Float32, {rows, n});
  b.output(b.varMean(x, {1}, 0).first);
  const Graph g = b.build();
  const HostTensor in = normalValues(DType::Float32, {rows, n}, 5, 1e4, 1.0);
  const std::vector<HostTensor> got = launchOnGpu(compileForGpu(g), {in});
  const std::vector<HostTensor> exact = evaluateReference(g, {in});  // float64 fields
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_LT(std::abs(got[0].get(r).f - exact[0].get(r).f) / exact[0].get(r).f, 1e-3) << "row " << r;
}

TEST(TupleGpu, RepeatedLaunchesGiveIdenticalBytes) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  GraphBuilder b("repeat");
  Value x = b.input("x", DType::Float32, {3, 2000003});
  auto [var, mean] = b.varMean(x, {1}, 1);
  b.output(var);
  b.output(mean);
  b.output(b.logSumExp(x, {1}));
  b.output(b.argmax(x, 1));
  const Graph g = b.build();
  const HostTensor in = normalValues(DType::Float32, {3, 2000003}, 2, 0.0, 5.0);
  CompiledGraph c = compileForGpu(g);
  const std::vector<HostTensor> first = launchOnGpu(c, {in});
  for (int run = 0; run < 100; ++run) {  // #13: bitwise repeatable over 100 runs
    const std::vector<HostTensor> again = launchOnGpu(c, {in});
    for (size_t o = 0; o < first.size(); ++o) EXPECT_EQ(again[o].bytes, first[o].bytes) << "output " << o << " run " << run;
  }
}

TEST(TupleGpu, CompositeFilesAgreeWithTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  namespace fs = std::filesystem;
  for (const auto& e : fs::directory_iterator(fs::path(POLYRED_SOURCE_DIR) / "tests" / "data" / "tuple")) {
    if (e.path().extension() != ".info") continue;
    const Graph g = readCompositeFile(e.path().string());
    std::vector<HostTensor> inputs;
    for (TensorId id : g.inputs) inputs.push_back(tiesAndNaNs(g.tensor(id).dtype, g.tensor(id).shape));
    const std::vector<HostTensor> got = launchOnGpu(compileForGpu(g), inputs);
    CpuCheckReport r = compareOutputs(g, got, {}, evaluateReference(g, inputs));
    EXPECT_TRUE(r.ok) << e.path() << "\n" << r.message;
  }
}
