// Vector lanes (poly/vectorize): which kernels get them, how isl classifies each load
// along the lanes, and that vectorized kernels match the reference on the CPU and
// compile through NVRTC. Shapes are above the 2^16-element threshold.
#include <gtest/gtest.h>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "runtime/nvrtc.h"

namespace polyred {
namespace {

CompiledGraph compileAndCheck(const Graph& g, bool deterministic = false, KernelConfig config = {}) {
  CompileOptions o;
  o.deterministic = deterministic;
  o.config = config;
  CompiledGraph c = compileGraph(g, o);
  CpuCheckReport r = checkOnCpu(c, 7, 1 << 20, deterministic);
  EXPECT_TRUE(r.ok) << r.message;
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0));
  return c;
}

TEST(Vectorize, ElementwiseBiasAddClassifiesEveryLoad) {
  GraphBuilder b("bias");
  Value x = b.input("x", DType::Float16, {512, 768});
  Value bias = b.input("bias", DType::Float16, {768});
  Value scale = b.input("scale", DType::Float16, {512, 1});
  Value xt = b.input("xt", DType::Float16, {768, 512});
  b.output(b.add(b.mul(b.add(x, bias), scale), b.transpose(xt, {1, 0})));
  CompiledGraph c = compileAndCheck(b.build());
  const Vectorization& v = c.kernels.at(0).vector;
  ASSERT_EQ(v.width, 8);  // 8 halves: 16-byte stores
  ASSERT_EQ(v.accesses.size(), 4u);
  EXPECT_EQ(v.accesses[0], LaneAccess::Contiguous);  // x[i]
  EXPECT_EQ(v.accesses[1], LaneAccess::Contiguous);  // bias[i mod 768]: 768 is a multiple of 8
  EXPECT_EQ(v.accesses[2], LaneAccess::Invariant);   // scale[i / 768]
  EXPECT_EQ(v.accesses[3], LaneAccess::Gather);      // xt transposed
  EXPECT_NE(c.program.kernels[0].source.find("pr_load_lanes<8>"), std::string::npos);
}

TEST(Vectorize, XReduceLanesRunAlongTheReducedAxis) {
  for (DType t : {DType::Float16, DType::Bool, DType::Float32}) {
    GraphBuilder b("rows");
    Value x = b.input("x", t, {300, 1024});
    b.output(t == DType::Bool ? b.reduce(x, Reduction::logicalAnd(t), {1}) : b.reduceSum(x, {1}));
    CompiledGraph c = compileAndCheck(b.build());
    const Vectorization& v = c.kernels.at(0).vector;
    EXPECT_EQ(v.axis, 'j') << dtypeName(t);
    EXPECT_EQ(v.width, t == DType::Float32 ? 4 : 8) << dtypeName(t);
  }
}

TEST(Vectorize, NoLanesWhereTheyCannotApply) {
  auto width = [](const Graph& g) { return compileAndCheck(g).kernels.at(0).vector.width; };
  GraphBuilder odd("odd");  // the reduced extent is not a multiple of any width
  odd.output(odd.reduceSum(odd.input("x", DType::Float32, {300, 1023}), {1}));
  EXPECT_EQ(width(odd.build()), 1);
  GraphBuilder column("column");  // y-reduce: 301 kept columns, not a multiple of 2
  column.output(column.reduceSum(column.input("x", DType::Float32, {1024, 301}), {0}));
  EXPECT_EQ(width(column.build()), 1);
  GraphBuilder tiny("tiny");  // launch-bound size
  tiny.output(tiny.reduceSum(tiny.input("x", DType::Float32, {4096}), {0}));
  EXPECT_EQ(width(tiny.build()), 1);
}

// y-reduce: the lanes (a variant: the analytic policy keeps y-reduces scalar, tuning
// picks lanes where they win) run along the kept, contiguous axis and each is a column
// with its own accumulator, block reduction, cross-block combine and epilogue (here a
// per-column scale read at the column: the epilogue offsets are per lane). Single- and
// multi-block grids, atomics and the deterministic combine, 16-byte loads of every width.
TEST(Vectorize, YReduceLanesAreColumnsOfTheirOwn) {
  KernelConfig lanes;
  lanes.maxVectorWidth = 16;
  struct Case {
    DType t;
    int64_t rows, cols;
    int width;
  };
  for (Case k : {Case{DType::Float32, 8192, 768, 4}, Case{DType::Float16, 4096, 256, 8},
                 Case{DType::BFloat16, 64, 2048, 8}, Case{DType::Int32, 2000, 96, 4}, Case{DType::Float64, 512, 130, 2}})
    for (bool deterministic : {false, true}) {
      GraphBuilder b("columns");
      Value x = b.input("x", k.t, {k.rows, k.cols});
      Value scale = b.input("scale", k.t, {k.cols});
      b.output(b.mul(b.reduceSum(x, {0}), scale));
      b.output(b.reduceMax(x, {0}));
      const Graph g = b.build();
      EXPECT_EQ(compileGraph(g, CompileOptions{}).kernels.at(0).vector.width, 1) << "the default is scalar";
      CompiledGraph c = compileAndCheck(g, deterministic, lanes);
      ASSERT_EQ(c.kernels.size(), 1u);
      const Vectorization& v = c.kernels[0].vector;
      EXPECT_EQ(v.axis, 'i') << dtypeName(k.t);
      EXPECT_EQ(v.width, k.width) << dtypeName(k.t);
      EXPECT_EQ(v.accumulatorLanes, k.width) << dtypeName(k.t);
      EXPECT_NE(c.program.kernels[0].source.find("pr_load_lanes<" + std::to_string(k.width) + ">"), std::string::npos);
    }
}

}  // namespace
}  // namespace polyred
