// canon/logsumexp_rows: logsumexp over rows one block reduces becomes max-then-sum.
// Which reductions are rewritten (by structure, x-reduces whose rows fit, nothing
// else), that the rewritten graph means what the online tuple means on every edge
// value (rows of -inf, +inf, NaN, huge and tiny magnitudes), and that the compiled
// kernel -- one row-resident kernel of two passes -- passes the CPU check and NVRTC.
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
  EXPECT_FALSE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float16, {64, 1000}, {1}), kAlways)));
  EXPECT_FALSE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float32, {8, 6, 50}, {1, 2}, true), kAlways)));
  EXPECT_TRUE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float16, {64, 1000}, {1}), kNever)));  // long rows
  EXPECT_TRUE(hasTupleReduce(splitLogSumExpRows(lse(DType::Float32, {1000, 64}, {0}), kAlways)));  // y-reduce
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
      const Graph g = lse(t, {300, 1001}, {1});  // short rows: one block each
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

}  // namespace
}  // namespace polyred
