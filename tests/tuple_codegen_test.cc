// Tuple reductions lowered to kernels: the CPU executor runs the generated loop program
// (per-thread tuple accumulation, the tuple block reduction, the cross-block combine of
// the partials in block order) and must reproduce the reference interpreter -- bit for
// bit for argmax/argmin, within the float tolerances for Welford and logsumexp -- in
// every reduction form, with rows long enough to span several blocks; every kernel
// compiles with NVRTC; the composite files under tests/data/tuple pass the CPU check;
// results do not depend on the order in which blocks run.
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "codegen/cpu_executor.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "interp/reference.h"
#include "runtime/nvrtc.h"
#include "support/error.h"
#include "lowering_helpers.h"

namespace polyred {
namespace {

using test_support::blocksAlongJ;
using test_support::expectNvrtcCompiles;
using test_support::lowered;

namespace fs = std::filesystem;

struct FormCase {
  const char* name;
  Shape shape;
  int64_t axis;
  CanonicalForm form;
};
const FormCase kForms[] = {{"all", {70001}, 0, CanonicalForm::AllReduce},
                           {"x", {3, 30001}, 1, CanonicalForm::XReduce},
                           {"y", {30001, 3}, 0, CanonicalForm::YReduce},
                           // extents divisible by 8 (lanes for the tuples whose combine
                           // is long, vectorize.cc; the odd all and x forms above get masked
                           // lanes: rows start inside a vector)
                           {"x-lanes", {3, 32000}, 1, CanonicalForm::XReduce},
                           {"all-lanes", {96000}, 0, CanonicalForm::AllReduce}};

// Values with many ties (k * 7919 mod 13), NaNs in floats (sparse, in some rows /
// columns only), the extreme repeated far apart, and -0 / +0 next to each other.
HostTensor tiesAndNaNs(DType t, const Shape& s) {
  HostTensor h = HostTensor::zeros(t, s);
  const int64_t n = h.size();
  for (int64_t k = 0; k < n; ++k) {
    double v = static_cast<double>((k * 7919) % 13) - 6;
    if (t == DType::UInt8 || t == DType::Bool) v = std::abs(v);
    h.set(k, Scalar::convert(v, t));
  }
  if (isFloat(t)) {
    for (int64_t k = 5; k < n; k += 9973) h.set(k, Scalar::ofFloat(DType::Float64, std::nan("")));
    h.set(1, Scalar::ofFloat(DType::Float64, -0.0));
  }
  return h;
}

TEST(TupleKernels, ArgExtremaMatchTheReferenceBitForBitInEveryForm) {
  for (const FormCase& f : kForms)
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Int32, DType::Int8, DType::UInt8}) {
      GraphBuilder b("arg");
      Value x = b.input("x", t, f.shape);
      auto [imax, vmax] = b.argmaxWithValue(x, f.axis);
      auto [imin, vmin] = b.argminWithValue(x, f.axis);
      b.output(imax);
      b.output(vmax);
      b.output(imin);
      b.output(vmin);
      b.output(b.argmax(x, f.axis, DType::Int64));
      const Graph g = b.build();
      const std::string what = std::string(f.name) + " " + std::string(dtypeName(t));
      CompiledGraph c = compileGraph(g, CompileOptions{});
      ASSERT_EQ(c.kernels.size(), 1u) << what;
      EXPECT_EQ(c.kernels[0].plan.form, f.form) << what;
      EXPECT_GT(blocksAlongJ(c), 1) << what << ": the cross-block combine is not exercised";
      // x- and all-reduces fold lanes with the later-combine (whole vectors) and the
      // combine (vectors masked at the row's ends); y-reduces stay scalar.
      EXPECT_EQ(c.kernels[0].vector.width > 1, f.form != CanonicalForm::YReduce) << what;
      std::vector<HostTensor> inputs = {tiesAndNaNs(t, f.shape)};
      std::vector<HostTensor> want = evaluateReference(g, inputs), got = lowered(c, inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < want.size(); ++o) {
        ASSERT_EQ(got[o].bytes.size(), want[o].bytes.size()) << what;
        for (int64_t k = 0; k < want[o].size(); ++k)
          ASSERT_TRUE(got[o].get(k).identical(want[o].get(k)))
              << what << " output " << o << " element " << k << ": lowered " << got[o].get(k).toString()
              << ", reference " << want[o].get(k).toString();
      }
      if (t == DType::Float32 || t == DType::Float16 || t == DType::Int8) expectNvrtcCompiles(c, what);
    }
}

TEST(TupleKernels, NaNRowsAndTiesGiveTheFirstIndex) {
  // Row 0: NaN at 40000 and 50000; row 1: all equal; row 2: the maximum at 7 and 45000.
  const int64_t n = 60000;
  GraphBuilder b("arg");
  Value x = b.input("x", DType::Float32, {3, n});
  b.output(b.argmax(x, 1));
  b.output(b.argmin(x, 1));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  EXPECT_GT(blocksAlongJ(c), 1);
  HostTensor in = HostTensor::zeros(DType::Float32, {3, n});
  for (int64_t k = 0; k < n; ++k) {
    in.set(k, Scalar::ofFloat(DType::Float64, std::sin(0.01 * static_cast<double>(k))));
    in.set(n + k, Scalar::ofFloat(DType::Float64, 2.5));
    in.set(2 * n + k, Scalar::ofFloat(DType::Float64, std::cos(0.001 * static_cast<double>(k))));
  }
  in.set(40000, Scalar::ofFloat(DType::Float64, std::nan("")));
  in.set(50000, Scalar::ofFloat(DType::Float64, std::nan("")));
  in.set(2 * n + 7, Scalar::ofFloat(DType::Float64, 9));
  in.set(2 * n + 45000, Scalar::ofFloat(DType::Float64, 9));
  std::vector<HostTensor> got = lowered(c, {in});
  EXPECT_EQ(got[0].get(0).i, 40000);
  EXPECT_EQ(got[0].get(1).i, 0);
  EXPECT_EQ(got[0].get(2).i, 7);
  EXPECT_EQ(got[1].get(0).i, 40000);
  EXPECT_EQ(got[1].get(1).i, 0);
}

// The lane fold does use the later-combine, and the ties test above would catch a wrong
// one: a later-combine that lets the later element win ties (put into the built graph
// behind the verifier's back) gives other indices than the reference.
TEST(TupleKernels, AWrongLaterCombineIsCaught) {
  GraphBuilder b("arg");
  Value x = b.input("x", DType::Float16, {3, 32000});
  b.output(b.argmax(x, 1));
  const Graph g = b.build();
  Graph forced = g;
  for (Node& n : forced.nodes)
    if (n.reduction && n.reduction->isTuple()) {
      auto wrong = std::make_shared<TupleReduction>(*n.reduction->tuple);
      for (TupleField& f : wrong->fields) {
        const ScalarExprPtr a = ScalarExpr::tupleArg(0, static_cast<int>(&f - wrong->fields.data()));
        const ScalarExprPtr bf = ScalarExpr::tupleArg(1, static_cast<int>(&f - wrong->fields.data()));
        const ScalarExprPtr laterAtLeast =
            ScalarExpr::apply(OpKind::GreaterEqual, {ScalarExpr::tupleArg(1, 0), ScalarExpr::tupleArg(0, 0)});
        f.combineLater = ScalarExpr::apply(OpKind::Select, {laterAtLeast, bf, a});
      }
      n.reduction->tuple = wrong;
    }
  CompiledGraph c = compileGraph(forced, CompileOptions{});
  ASSERT_GT(c.kernels.at(0).vector.width, 1);
  const std::vector<HostTensor> inputs = {tiesAndNaNs(DType::Float16, {3, 32000})};
  const HostTensor got = lowered(c, inputs).at(0), want = evaluateReference(g, inputs).at(0);
  bool differs = false;
  for (int64_t k = 0; k < want.size(); ++k) differs = differs || !got.get(k).identical(want.get(k));
  EXPECT_TRUE(differs) << "a later-combine that breaks ties the wrong way went unnoticed";
}

// x ~ N(1e4, 1) in float32: the numerics test, through the generated kernel.
TEST(TupleKernels, WelfordKernelKeepsTheVarianceWhereTheNaiveFormulaLosesIt) {
  const int64_t rows = 2, n = 40000;
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(1e4, 1.0);
  HostTensor in = HostTensor::zeros(DType::Float32, {rows, n});
  for (int64_t k = 0; k < in.size(); ++k) in.set(k, Scalar::ofFloat(DType::Float64, normal(rng)));
  std::vector<double> exact(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, m2 = 0;
    for (int64_t k = 0; k < n; ++k) mean += in.get(r * n + k).f;
    mean /= static_cast<double>(n);
    for (int64_t k = 0; k < n; ++k) m2 += (in.get(r * n + k).f - mean) * (in.get(r * n + k).f - mean);
    exact[static_cast<size_t>(r)] = m2 / static_cast<double>(n);
  }

  GraphBuilder w("welford");
  Value x = w.input("x", DType::Float32, {rows, n});
  auto [var, mean] = w.varMean(x, {1}, 0);
  w.output(var);
  w.output(mean);
  CompiledGraph cw = compileGraph(w.build(), CompileOptions{});
  EXPECT_GT(blocksAlongJ(cw), 1);
  expectNvrtcCompiles(cw, "welford");
  std::vector<HostTensor> got = lowered(cw, {in});

  GraphBuilder v("naive");
  Value y = v.input("x", DType::Float32, {rows, n});
  const Value inv = v.constant(Scalar::ofFloat(DType::Float32, 1.0 / static_cast<double>(n)));
  Value ex = v.mul(v.reduceSum(y, {1}), inv), ex2 = v.mul(v.reduceSum(v.mul(y, y), {1}), inv);
  v.output(v.sub(ex2, v.mul(ex, ex)));
  std::vector<HostTensor> naive = lowered(compileGraph(v.build(), CompileOptions{}), {in});

  for (int64_t r = 0; r < rows; ++r) {
    const double e = exact[static_cast<size_t>(r)];
    EXPECT_LT(std::abs(got[0].get(r).f - e) / e, 1e-3) << "Welford row " << r << ": " << got[0].get(r).f << " vs " << e;
    EXPECT_GT(std::abs(naive[0].get(r).f - e) / e, 1e-3) << "naive row " << r << ": " << naive[0].get(r).f << " vs " << e;
  }
}

TEST(TupleKernels, WelfordAndLogSumExpPassTheCpuCheckInEveryForm) {
  for (const FormCase& f : kForms)
    for (DType t : {DType::Float32, DType::Float16}) {
      GraphBuilder b("stats");
      Value x = b.input("x", t, f.shape);
      auto [var, mean] = b.varMean(x, {f.axis}, 1);
      b.output(var);
      b.output(mean);
      b.output(b.logSumExp(x, {f.axis}));
      const std::string what = std::string(f.name) + " " + std::string(dtypeName(t));
      CompiledGraph c = compileGraph(b.build(), CompileOptions{});
      EXPECT_GT(blocksAlongJ(c), 1) << what;
      CpuCheckReport r = checkOnCpu(c, /*seed=*/5, /*maxPoints=*/0, false);
      EXPECT_TRUE(r.ok) << what << "\n" << r.message;
      if (t == DType::Float32) expectNvrtcCompiles(c, what);
    }
}

TEST(TupleKernels, ResultsDoNotDependOnTheBlockOrder) {
  GraphBuilder b("order");
  Value x = b.input("x", DType::Float32, {2, 50000});
  auto [var, mean] = b.varMean(x, {1}, 1);
  b.output(var);
  b.output(mean);
  b.output(b.logSumExp(x, {1}));
  b.output(b.argmax(x, 1));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  EXPECT_GT(blocksAlongJ(c), 2);
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(100.0, 30.0);
  HostTensor in = HostTensor::zeros(DType::Float32, {2, 50000});
  for (int64_t k = 0; k < in.size(); ++k) in.set(k, Scalar::ofFloat(DType::Float64, normal(rng)));
  const std::vector<HostTensor> first = lowered(c, {in}, 1);
  for (uint64_t seed : {2u, 3u, 17u, 1234u}) {
    std::vector<HostTensor> again = lowered(c, {in}, seed);
    for (size_t o = 0; o < first.size(); ++o) EXPECT_EQ(again[o].bytes, first[o].bytes) << "output " << o << " seed " << seed;
  }
}

TEST(TupleKernels, CompositeFilesPassTheCpuCheckAndCompile) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(POLYRED_SOURCE_DIR) / "tests" / "data" / "tuple")) {
    if (e.path().extension() != ".info") continue;
    // The default policy (vector lanes where they apply), and scalar code spread over
    // four blocks along j (the cross-block combine; the policy gives some of these rows
    // one wide block).
    CompileOptions scalar;
    scalar.config.maxVectorWidth = 1;
    scalar.config.splitBlocks = 4;
    for (const CompileOptions& options : {CompileOptions{}, scalar}) {
      CompiledGraph c = compileGraph(readCompositeFile(e.path().string()), options);
      for (bool deterministic : {false, true}) {
        CpuCheckReport r = checkOnCpu(c, /*seed=*/9, /*maxPoints=*/0, deterministic);
        EXPECT_TRUE(r.ok) << e.path() << " " << options.config.toString() << "\n" << r.message;
      }
      expectNvrtcCompiles(c, e.path().string());
      if (options.config.maxVectorWidth == 1) {
        EXPECT_GT(blocksAlongJ(c), 1) << e.path();
      }
    }
    ++files;
  }
  EXPECT_GE(files, 4);
}

// A tuple total read by a later pass of the same kernel (layer norm from Welford: the
// block allreduce of a tuple) and by a later kernel through a temporary (a y-reduce).
TEST(TupleKernels, TupleTotalsFeedLaterPassesAndKernels) {
  int rowResident = 0, materialized = 0;
  for (Shape shape : {Shape{64, 1024}, Shape{8, 30000}, Shape{5000, 24}}) {
    for (int64_t axis : {int64_t{1}, int64_t{0}}) {
      GraphBuilder b("norm");
      Value x = b.input("x", DType::Float32, shape);
      auto [var, mean] = b.varMean(x, {axis}, 0, true);
      Value eps = b.constant(Scalar::ofFloat(DType::Float32, 1e-5));
      Value y = b.mul(b.sub(x, mean), b.unary(OpKind::Rsqrt, b.add(var, eps)));
      b.output(y);
      Value idx = b.argmax(y, axis, DType::Int32, true);
      b.output(b.add(idx, b.constant(Scalar::ofInt(DType::Int32, 1))));
      const std::string what = toString(shape) + " axis " + std::to_string(axis);
      CompiledGraph c = compileGraph(b.build(), CompileOptions{});
      CpuCheckReport r = checkOnCpu(c, /*seed=*/4, /*maxPoints=*/0, false);
      EXPECT_TRUE(r.ok) << what << "\n" << r.message << c.partition.toString(c.graph);
      expectNvrtcCompiles(c, what);
      for (const PolyKernel& k : c.kernels) rowResident += k.plan.passes() > 1 && k.plan.hasTupleReduction();
      materialized += !c.partition.temporaries.empty();
    }
  }
  EXPECT_GT(rowResident, 0);
  EXPECT_GT(materialized, 0);
}

// The dtypes the CPU tests above do not run (float64, int64, bf16 and uint8 fields or
// inputs) still give kernels NVRTC accepts (tests/gpu/tuple_gpu_test.cc runs them).
TEST(TupleKernels, EveryAccumulatorTypeCompilesWithNvrtc) {
  for (DType t : {DType::Float64, DType::Int64, DType::BFloat16, DType::UInt8, DType::Int32, DType::Bool}) {
    GraphBuilder b("arg");
    Value x = b.input("x", t, {5, 70001});
    auto [imax, vmax] = b.argmaxWithValue(x, 1);
    b.output(imax);
    b.output(vmax);
    b.output(b.argmin(x, 1, DType::Int64));
    if (isFloat(t)) {
      auto [var, mean] = b.varMean(x, {1}, 1);
      b.output(var);
      b.output(b.logSumExp(x, {1}));
    }
    CompiledGraph c = compileGraph(b.build(), CompileOptions{});
    EXPECT_GT(blocksAlongJ(c), 1) << dtypeName(t);
    expectNvrtcCompiles(c, std::string(dtypeName(t)));
  }
}

// The results of one tuple over the same values (ArgMaxWithValue, varMean) share one
// accumulator: one Tuple struct, one block reduction, one workspace.
TEST(TupleKernels, ResultsOfOneTupleShareTheAccumulator) {
  GraphBuilder b("share");
  Value x = b.input("x", DType::Float32, {4, 50000});
  auto [idx, val] = b.argmaxWithValue(x, 1);
  auto [var, mean] = b.varMean(x, {1}, 1);
  for (Value v : {idx, val, var, mean}) b.output(v);
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  ASSERT_EQ(c.kernels.size(), 1u);
  const KernelPlan& p = c.kernels[0].plan;
  ASSERT_EQ(p.reductions.size(), 4u);
  EXPECT_EQ(p.reductions[0].sharesAccumulatorOf, -1);
  EXPECT_EQ(p.reductions[1].sharesAccumulatorOf, 0);
  EXPECT_EQ(p.reductions[2].sharesAccumulatorOf, -1);
  EXPECT_EQ(p.reductions[3].sharesAccumulatorOf, 2);
  const std::string& source = c.program.kernels.at(0).source;
  EXPECT_EQ(source.find("struct alignas(8) Tuple1"), std::string::npos);
  EXPECT_EQ(source.find("struct alignas(8) Tuple3"), std::string::npos);
  EXPECT_EQ(c.program.kernels[0].workspaces.size(), 3u);  // two tuples' partials and the tickets
  CpuCheckReport r = checkOnCpu(c, /*seed=*/8, /*maxPoints=*/0, false);
  EXPECT_TRUE(r.ok) << r.message;
  expectNvrtcCompiles(c, "share");
}

// Ordered (non-commutative) tuples: tests/tuple_ordered_test.cc.

}  // namespace
}  // namespace polyred
