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

CompiledGraph compileAndCheck(const Graph& g) {
  CompiledGraph c = compileGraph(g, CompileOptions{});
  CpuCheckReport r = checkOnCpu(c, 7, 1 << 20, false);
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
  ASSERT_EQ(v.loads.size(), 4u);
  EXPECT_EQ(v.loads[0], LaneAccess::Contiguous);  // x[i]
  EXPECT_EQ(v.loads[1], LaneAccess::Contiguous);  // bias[i mod 768]: 768 is a multiple of 8
  EXPECT_EQ(v.loads[2], LaneAccess::Invariant);   // scale[i / 768]
  EXPECT_EQ(v.loads[3], LaneAccess::Gather);      // xt transposed
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
  GraphBuilder column("column");  // y-reduce: lanes would need one accumulator each
  column.output(column.reduceSum(column.input("x", DType::Float32, {1024, 300}), {0}));
  EXPECT_EQ(width(column.build()), 1);
  GraphBuilder tiny("tiny");  // launch-bound size
  tiny.output(tiny.reduceSum(tiny.input("x", DType::Float32, {4096}), {0}));
  EXPECT_EQ(width(tiny.build()), 1);
}

}  // namespace
}  // namespace polyred
