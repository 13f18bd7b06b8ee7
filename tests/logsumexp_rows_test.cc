// canon/logsumexp_rows: logsumexp over rows one block reduces becomes max-then-sum.
// Which reductions are rewritten (by structure, x-reduces whose rows fit, nothing
// else), that the rewritten graph means what the online tuple means on every edge
// value (rows of -inf, +inf, NaN, huge and tiny magnitudes), and that the compiled
// kernel -- one row-resident kernel of two passes -- passes the CPU check and NVRTC;
// with lse=online the rows keep the tuple and fold their lanes in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "canon/logsumexp_rows.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "interp/reference.h"
#include "ir/tuple_reduction.h"
#include "runtime/nvrtc.h"
#include "support/budget.h"
#include "support/error.h"

namespace polyred {
namespace {

const RowsFitOneBlock kAlways = [](const CanonicalSpace&) { return true; };
const RowsFitOneBlock kNever = [](const CanonicalSpace&) { return false; };

bool hasTupleReduce(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::Reduce && n.reduction && n.reduction->isTuple()) return true;
  return false;
}

Graph lse(DType t, const Shape& shape, std::vector<int64_t> axes, bool keepDims = false) {
  GraphBuilder b("lse");
  b.output(b.logSumExp(b.input("x", t, shape), std::move(axes), keepDims));
  return b.build();
}

TEST(LogSumExpRows, RewritesOnlyXReducesWhoseRowsFitOneBlock) {
  constexpr SplitLogSumExpRows kSplit = SplitLogSumExpRows::Always;
  EXPECT_FALSE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float16, {64, 1000}, {1}), kAlways, kSplit)));
  EXPECT_FALSE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float32, {8, 6, 50}, {1, 2}, true), kAlways, kSplit)));
  EXPECT_TRUE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float16, {64, 1000}, {1}), kNever, kSplit)));  // long rows
  EXPECT_TRUE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float32, {1000, 64}, {0}), kAlways, kSplit)));  // y-reduce
  EXPECT_TRUE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float16, {64, 1000}, {1}), kAlways,
                                                SplitLogSumExpRows::Never)));
  // A tuple called logsumexp that sums its second field differently is not logsumexp.
  auto other = std::make_shared<TupleReduction>(*logSumExpTuple(DType::Float32));
  other->fields[1].combine = ScalarExpr::apply(OpKind::Add, {ScalarExpr::tupleArg(0, 1), ScalarExpr::tupleArg(1, 1)});
  GraphBuilder b("not_lse");
  b.output(b.reduceTuple({b.input("x", DType::Float32, {64, 1000})}, other, 0, {1}, false, DType::Float32));
  EXPECT_TRUE(hasTupleReduce(splitLogSumExpRows(b.build(), kAlways)));
}

// Rows: random values, all -inf, one +inf, one NaN, -inf with one finite value, huge
// and tiny magnitudes; both graphs through the reference interpreter.
TEST(LogSumExpRows, MeansWhatTheOnlineTupleMeansOnEdgeValues) {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16})
    for (bool keepDims : {false, true}) {
      const Graph g = lse(t, {8, 37}, {1}, keepDims);
      const Graph rewritten = splitLogSumExpRows(g, kAlways);
      ASSERT_FALSE(hasTupleReduce(rewritten));
      HostTensor x = HostTensor::zeros(t, {8, 37});
      std::mt19937 rng(3);
      std::normal_distribution<double> normal(0.0, 3.0);
      const double inf = INFINITY;
      for (int64_t j = 0; j < 37; ++j) {
        auto set = [&](int64_t row, double v) { x.set(row * 37 + j, Scalar::ofFloat(DType::Float64, v)); };
        set(0, normal(rng));
        set(1, -inf);
        set(2, j == 5 ? inf : normal(rng));
        set(3, j == 7 ? std::nan("") : normal(rng));
        set(4, j == 11 ? 2.5 : -inf);
        set(5, 60.0 + normal(rng));  // exp overflows f16/f32 without the shift
        set(6, -80.0 + normal(rng));
        set(7, j % 2 ? inf : -inf);
      }
      const HostTensor want = evaluateReference(g, {x}).at(0), got = evaluateReference(rewritten, {x}).at(0);
      ASSERT_EQ(want.size(), 8);
      ASSERT_EQ(got.size(), 8);
      for (int64_t i = 0; i < 8; ++i) {
        const double w = want.get(i).asDouble(), v = got.get(i).asDouble();
        SCOPED_TRACE(std::string(dtypeName(t)) + " row " + std::to_string(i));
        if (std::isnan(w) || std::isinf(w)) {
          EXPECT_EQ(std::isnan(v), std::isnan(w)) << v << " vs " << w;
          if (std::isinf(w)) {
            EXPECT_EQ(v, w);
          }
        } else {
          EXPECT_NEAR(v, w, (t == DType::Float16 ? 2e-3 : 1e-6) * std::max(1.0, std::abs(w)));
        }
      }
    }
}

TEST(LogSumExpRows, CompilesToOneRowResidentKernelOfTwoPasses) {
  for (DType t : {DType::Float16, DType::Float32})
    for (bool deterministic : {false, true}) {
      const Graph g = lse(t, {300, 501}, {1});  // short rows: split by the policy
      CompileOptions o;
      o.deterministic = deterministic;
      CompiledGraph c = compileGraph(g, o);
      ASSERT_EQ(c.kernels.size(), 1u);
      EXPECT_EQ(c.kernels[0].plan.passes(), 2);
      EXPECT_FALSE(hasTupleReduce(c.graph));
      CpuCheckReport r = checkOnCpu(c, 3, 1 << 20, deterministic);
      EXPECT_TRUE(r.ok) << r.message;
      for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0));
    }
}

// Rows of -inf, +inf, NaN, -inf among finite values, values near the float32 limit,
// a shift that cancels (1e4), equal values and random spreads up to 300.
HostTensor edgeRows(DType t, int64_t rows, int64_t n) {
  const double inf = INFINITY;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const double v = (r % 2 ? 300.0 : 3.0) * u(rng);
      const double edge[] = {-inf, j == 17 ? inf : v, j == 400 ? std::nan("") : v, 0.25, j % 3 ? -inf : v,
                             j % 2 ? 3e38 : -3e38, 1e4 + u(rng), v};
      x[static_cast<size_t>(r * n + j)] = edge[r % 8];
    }
  return HostTensor::fromValues(t, {rows, n}, x);
}

// lse=online: rows one block reduces keep the online tuple -- one kernel, one pass -- and
// fold their lanes in the closed form (codegen/lane_folds.h); the CPU executor, folding
// as the kernel does, matches the reference on edge rows, aligned (1000) and masked
// (1001) rows alike, and the kernel compiles under NVRTC.
TEST(LogSumExpRows, OnlineRowsFoldTheirLanesInClosedForm) {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32})
    for (int64_t n : {1000, 1001}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " rows of " + std::to_string(n));
      const Graph g = lse(t, {80, n}, {1});  // lanes from 2^16 elements
      CompileOptions o;
      o.config = KernelConfig::parse("lse=online", "test");
      const CompiledGraph c = compileGraph(g, o);
      ASSERT_EQ(c.kernels.size(), 1u);
      EXPECT_EQ(c.kernels[0].plan.passes(), 1);
      EXPECT_TRUE(hasTupleReduce(c.graph));
      ASSERT_NE(c.program.kernels.at(0).source.find("pr_fold_logsumexp_lanes("), std::string::npos);
      const std::vector<HostTensor> in = {edgeRows(t, 80, n)};
      CpuCheckOptions all;
      all.maxPoints = 0;
      Deadline unlimited = Deadline::none();
      const LoweredRun got = runLoweredOnCpu(c, in, all, unlimited);
      CpuCheckReport r = compareOutputs(c.graph, got.outputs, {}, evaluateReference(c.graph, in));
      EXPECT_TRUE(r.ok) << r.message;
      for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0));
    }
  EXPECT_EQ(KernelConfig::parse("lse=online", "test").toString(), "threads=256,items=auto,vector=auto,lse=online");
  EXPECT_EQ(KernelConfig::parse("lse=auto", "test").logSumExpRows, LogSumExpRowsMode::Auto);
  EXPECT_EQ(KernelConfig::parse("lse=split", "test").logSumExpRows, LogSumExpRowsMode::Split);
  EXPECT_THROW(KernelConfig::parse("lse=on", "test"), Error);
}

// The policy (logsumexp_rows.h): rows up to 512 elements split, longer ones online; the
// knob overrides it both ways.
TEST(LogSumExpRows, ShortRowsSplitLongerOnesStayOnline) {
  auto passesOf = [](int64_t n, const std::string& knobs) {
    CompileOptions o;
    o.config = KernelConfig::parse(knobs, "test");
    const CompiledGraph c = compileGraph(lse(DType::Float16, {512, n}, {1}), o);
    EXPECT_EQ(c.kernels.size(), 1u);
    EXPECT_EQ(hasTupleReduce(c.graph), c.kernels.at(0).plan.passes() == 1);
    return c.kernels.at(0).plan.passes();
  };
  EXPECT_EQ(passesOf(256, ""), 2);
  EXPECT_EQ(passesOf(512, ""), 2);
  EXPECT_EQ(passesOf(513, ""), 1);
  EXPECT_EQ(passesOf(32000, ""), 1);
  EXPECT_EQ(passesOf(256, "lse=online"), 1);
  EXPECT_EQ(passesOf(32000, "lse=split"), 2);
}

// A logsumexp whose result feeds a pass over its rows (softmax via logsumexp) splits
// whatever its rows' length: three passes, the row read once more; lse=online keeps the
// tuple in two passes, its lanes in closed form. Both match the reference. A logsumexp
// read only by ops over the reduced shape (cross-entropy's lse - x[label]) stays online.
TEST(LogSumExpRows, ResultsThatFeedARowPassSplit) {
  GraphBuilder b("softmax_via_lse");
  Value x = b.input("x", DType::Float32, {80, 5000});
  b.output(b.unary(OpKind::Exp, b.sub(x, b.logSumExp(x, {1}, true))));
  const Graph softmax = b.build();
  for (const std::string knobs : {"", "lse=online"}) {
    SCOPED_TRACE(knobs);
    CompileOptions o;
    o.config = KernelConfig::parse(knobs, "test");
    const CompiledGraph c = compileGraph(softmax, o);
    ASSERT_EQ(c.kernels.size(), 1u);
    EXPECT_EQ(c.kernels[0].plan.passes(), knobs.empty() ? 3 : 2);
    EXPECT_EQ(hasTupleReduce(c.graph), !knobs.empty());
    EXPECT_EQ(c.program.kernels.at(0).source.find("pr_fold_logsumexp_lanes(") != std::string::npos, !knobs.empty());
    CpuCheckReport r = checkOnCpu(c, 3, 1 << 20, false);
    EXPECT_TRUE(r.ok) << r.message;
  }
  GraphBuilder ce("lse_minus_a_sum");
  Value y = ce.input("y", DType::Float32, {80, 5000});
  ce.output(ce.sub(ce.logSumExp(y, {1}), ce.reduceSum(y, {1})));
  const CompiledGraph online = compileGraph(ce.build(), CompileOptions{});
  EXPECT_TRUE(hasTupleReduce(online.graph));
  EXPECT_EQ(online.kernels.at(0).plan.passes(), 1);
  CpuCheckReport r = checkOnCpu(online, 5, 1 << 20, false);
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace
}  // namespace polyred
