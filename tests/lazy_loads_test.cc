// Loads only a Select branch reads, issued only where the branch is taken
// (codegen/lazy_loads.h): Concat's inputs and a pad's inside, whose conditions are
// coordinates; never a load guarded by data (a dropout mask), one a store or a
// reduction also reads, or one of a row-resident kernel. Checked on the plans and the
// generated CUDA (NVRTC, CPU check); the GPU half is OpsGpu (tests/data/ops: Concat,
// Pad) and the corpus's PadAkg files.
#include <gtest/gtest.h>

#include <string>

#include "codegen/lazy_loads.h"
#include "composite_test_helpers.h"
#include "frontend/builder.h"
#include "one_op_graph.h"
#include "row_resident_graphs.h"

namespace polyred {
namespace {

using test_support::attr;
using test_support::desc;
using test_support::Json;

int guarded(const CompiledGraph& c, bool whenTrue) {
  int n = 0;
  for (const PolyKernel& k : c.kernels)
    for (const LoadGuard& g : loadGuards(k.plan)) n += g && g.whenTrue == whenTrue;
  return n;
}

std::string source(const CompiledGraph& c) {
  std::string s;
  for (const KernelSpec& k : c.program.kernels) s += k.source;
  return s;
}

TEST(LazyLoads, ConcatLoadsEachInputWhereItsPartIs) {
  Graph g = test_support::oneOp("Concat", {desc("a", {64, 96}, "float32"), desc("b", {64, 32}, "float32"),
                                           desc("c", {64, 128}, "float32")},
                                desc("y", {64, 256}, "float32"), {attr("axis", 1)});
  CompiledGraph c = compileGraph(g, CompileOptions{});
  EXPECT_EQ(guarded(c, true), 2);   // a: coordinate < 96; b: coordinate < 128
  EXPECT_EQ(guarded(c, false), 1);  // c: not below 128
  // Scalar code (this shape's rows take no vectors): a conditional expression per load.
  EXPECT_NE(source(c).find("(v2 ? pr_load(in0"), std::string::npos) << source(c);
  test_support::expectCheckPasses(g);
  // Lane code: the vector load when some lane takes the branch.
  Graph wide = test_support::oneOp("Concat", {desc("a", {64, 1024}, "float16"), desc("b", {64, 512}, "float16")},
                                   desc("y", {64, 1536}, "float16"), {attr("axis", 1)});
  CompiledGraph lanes = compileGraph(wide, CompileOptions{});
  EXPECT_EQ(guarded(lanes, true) + guarded(lanes, false), 2);
  EXPECT_NE(source(lanes).find("if (taken) pr_load_lanes"), std::string::npos) << source(lanes);
  test_support::expectCheckPasses(wide);
}

TEST(LazyLoads, DataDependentSelectsSharedLoadsAndRowKernelsLoadEverywhere) {
  GraphBuilder dropout("dropout");
  Value x = dropout.input("x", DType::Float32, {256, 1024});
  Value keep = dropout.input("keep", DType::Bool, {256, 1024});
  dropout.output(dropout.select(keep, x, dropout.constant(Scalar::ofFloat(DType::Float32, 0))));
  EXPECT_EQ(guarded(compileGraph(dropout.build(), CompileOptions{}), true), 0);

  // A coordinate condition, but the load also feeds a product: loaded everywhere.
  GraphBuilder shared("shared");
  Value y = shared.input("y", DType::Float32, {256, 1024});
  Value left = shared.binary(OpKind::Less, shared.iota({256, 1024}, 1), shared.constant(Scalar::ofInt(DType::Int64, 512)));
  shared.output(shared.select(left, y, shared.constant(Scalar::ofFloat(DType::Float32, 0))));
  shared.output(shared.mul(y, y));
  EXPECT_EQ(guarded(compileGraph(shared.build(), CompileOptions{}), true), 0);

  CompiledGraph rows = compileGraph(testgraphs::softmax(DType::Float32, {64, 1000}, 1), CompileOptions{});
  for (const PolyKernel& k : rows.kernels)
    if (k.plan.passes() > 1) EXPECT_EQ(guarded(rows, true) + guarded(rows, false), 0);
}

}  // namespace
}  // namespace polyred
