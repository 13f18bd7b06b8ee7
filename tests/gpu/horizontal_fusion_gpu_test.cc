// GPU half of the horizontal fusion tests (tests/launch_groups_test.cc is the CPU
// half): independent kernels in one launch -- parts of every form, multi-block parts
// with their own workspaces and tickets, a row-resident part, parts bound again with a
// larger block -- and a graph whose dependent kernels need several launches, each run
// three times in normal and deterministic mode and compared with the reference
// interpreter; the deterministic repeats must be bitwise equal. Without a GPU every
// test is skipped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "gpu/gpu_compile.h"
#include "parallel_graphs.h"
#include "runtime/executor.h"

namespace polyred {
namespace {

struct Case {
  std::string name;
  Graph graph;
  size_t launches;
};

Graph differentBlockSizes() {
  GraphBuilder b("blocks");
  b.output(b.reduceSum(b.input("a", DType::Float32, {2, 40}), {1}));
  b.output(b.reduceSum(b.input("c", DType::Float64, {5000, 3}), {1}));
  b.output(b.reduceMax(b.input("d", DType::Int64, {7, 3}), {0}));
  return b.build();
}

TEST(HorizontalFusionGpu, FusedLaunchesMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const std::vector<Case> cases = {{"four independent parts", testgraphs::fourIndependentParts(), 1},
                                   {"softmax beside other reductions", testgraphs::softmaxBesideOtherReductions(), 1},
                                   {"parts bound again with a larger block", differentBlockSizes(), 1},
                                   {"dependent kernels and independent ones", testgraphs::longRowLayerNormBesideIndependentOutputs(true), 0}};
  for (const Case& c : cases) {
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(c.name + (deterministic ? ", deterministic" : ""));
      CompiledGraph compiled = test_support::compileForGpu(c.graph, deterministic);
      if (c.launches) {
        EXPECT_EQ(compiled.program.kernels.size(), c.launches);
      }
      EXPECT_LT(compiled.program.kernels.size(), compiled.partition.kernels.size()) << "something was fused";
      GpuRunOptions run;
      run.repeatChecks = 3;
      test_support::expectMatchesOnGpu(compiled, deterministic, run);
    }
  }
}

}  // namespace
}  // namespace polyred
