// GPU half of the row-resident kernel tests (tests/row_resident_test.cc is the CPU
// half): softmax and layer norm compiled into one kernel of several passes, launched on
// the GPU in normal and deterministic mode, three launches each (the repeats must be
// bitwise equal to the first), compared with the reference interpreter (compare.h's
// per-dtype tolerances). The shapes cover every block-reduction path the passes use:
// rows of at most a warp (xor butterfly: every lane already holds the total), longer
// rows (the total published through shared memory), y-reduces (columns) and
// all-reduces, several i-tiles per block (more rows than grid.y), and long rows that
// stay in one block because there are enough of them to fill the GPU. Without a GPU
// every test is skipped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "row_resident_graphs.h"
#include "runtime/executor.h"

namespace polyred {
namespace {

struct Case {
  std::string name;
  Graph graph;
};

std::vector<Case> cases() {
  using testgraphs::layerNorm;
  using testgraphs::softmax;
  return {
      {"softmax f32 [4096,32] (butterfly rows of 32)", softmax(DType::Float32, {4096, 32}, 1)},
      {"softmax f16 [24576,128] (bert attention rows)", softmax(DType::Float16, {24576, 128}, 1)},
      {"softmax f32 [300,1000] (shared-memory totals)", softmax(DType::Float32, {300, 1000}, 1)},
      {"softmax bf16 [77,2048] (longest one-block rows)", softmax(DType::BFloat16, {77, 2048}, 1)},
      {"softmax f32 [50,40] axis 0 (y-reduce)", softmax(DType::Float32, {50, 40}, 0)},
      {"softmax f32 [300,3] axis 0 (narrow y-reduce)", softmax(DType::Float32, {300, 3}, 0)},
      {"softmax f32 [2000] (all-reduce)", softmax(DType::Float32, {2000}, 0)},
      {"softmax f32 [17000000,2] (more row tiles than grid.y)", softmax(DType::Float32, {17000000, 2}, 1)},
      {"softmax f16 [4096,50257] (long rows, many of them)", softmax(DType::Float16, {4096, 50257}, 1)},
      {"softmax f32 [64,70001] axis 0 (long columns, many of them)", softmax(DType::Float32, {64, 70001}, 0)},
      {"layer norm f16 [4096,768]", layerNorm(DType::Float16, {4096, 768})},
      {"layer norm f32 [1000,1024]", layerNorm(DType::Float32, {1000, 1024})},
  };
}

// Launches `compiled` 1 + `repeats` times: the first result matches the reference, the
// repeats are bitwise equal to it.
void expectMatchesAndRepeats(const CompiledGraph& compiled, int repeats) {
  GpuRunOptions run;
  run.time = false;
  run.repeatChecks = repeats;
  GpuRunReport r = runOnGpu(compiled, run);
  EXPECT_TRUE(r.ok) << r.check;
  EXPECT_TRUE(r.bitwiseRepeatable) << r.check;
}

TEST(RowResidentGpu, SoftmaxAndLayerNormAreOneKernelAndMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (const Case& c : cases()) {
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(c.name + (deterministic ? ", deterministic" : ""));
      CompileOptions options;
      options.target = currentTarget();
      options.deterministic = deterministic;
      CompiledGraph compiled = compileGraph(c.graph, options);
      ASSERT_EQ(compiled.program.kernels.size(), 1u) << compiled.partition.toString(compiled.graph);
      EXPECT_GT(compiled.partition.kernels[0].passes(), 1);
      expectMatchesAndRepeats(compiled, 3);
    }
  }
}

// The same kernels with their row kept in shared memory for the later passes
// (codegen/row_cache.h, `cache=on`): x- and all-reduces read it back, y-reduces keep
// their global loads; either way the result matches the reference.
TEST(RowResidentGpu, RowCacheMatchesTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name + ", cache=on");
    CompileOptions options;
    options.target = currentTarget();
    options.config.rowCache = RowCacheMode::On;
    CompiledGraph compiled = compileGraph(c.graph, options);
    ASSERT_EQ(compiled.program.kernels.size(), 1u);
    const KernelSpec& k = compiled.program.kernels[0];
    const bool rows = compiled.partition.kernels[0].form != CanonicalForm::YReduce;
    EXPECT_EQ(k.launch.dynamicSharedBytes > 0, rows);
    EXPECT_EQ(k.source.find("_cached") != std::string::npos, rows) << k.source;
    expectMatchesAndRepeats(compiled, 2);
  }
}

}  // namespace
}  // namespace polyred
