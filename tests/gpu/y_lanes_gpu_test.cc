// Multi-block y-reduces whose threads own several columns each (vector lanes): every
// block hands each column's total to the cross-block combine from the thread of that
// column (device/polyred_reduce.cuh, contribute_y_lanes) -- atomics (integer ones on
// the bit patterns of float maxima and minima) and the partials of the deterministic
// protocol. The cases cover a last tile of columns shorter than the block's (1100 columns
// in tiles of 128, 1030 in tiles of 64, 16500 in tiles of 128) and each lane width
// (2, 4, 8 and 16 bytes a thread). Each must match the reference interpreter twice over
// (the workspace restored between launches), bitwise where the protocol is
// deterministic. Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "frontend/builder.h"
#include "gpu/gpu_compile.h"
#include "runtime/executor.h"

namespace polyred {
namespace {

struct Case {
  std::string name;
  Graph graph;
};

Graph columns(DType t, const Shape& shape, Reduction r) {
  return test_support::singleReduction("y_lanes", t, shape, {0}, std::move(r));
}

std::vector<Case> cases() {
  return {
      {"sum f32 [8200,1100]", columns(DType::Float32, {8200, 1100}, Reduction::sum(DType::Float32))},
      {"sum i32 [8192,1028]", columns(DType::Int32, {8192, 1028}, Reduction::sum(DType::Int32))},
      {"sum f32 [8192,1030] (2 lanes)", columns(DType::Float32, {8192, 1030}, Reduction::sum(DType::Float32))},
      {"sum f32 [300,16500]", columns(DType::Float32, {300, 16500}, Reduction::sum(DType::Float32))},
      {"max i8 [9000,1040]", columns(DType::Int8, {9000, 1040}, Reduction::max(DType::Int8))},
      {"max f16 [8192,1032] (32-bit atomics on float bits)", columns(DType::Float16, {8192, 1032}, Reduction::max(DType::Float16))},
      {"min f64 [8192,1026] (64-bit atomics on double bits)", columns(DType::Float64, {8192, 1026}, Reduction::min(DType::Float64))},
  };
}

TEST(YLanesGpu, ColumnByColumnContributionsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (const Case& c : cases())
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(c.name + (deterministic ? ", deterministic" : ""));
      CompiledGraph compiled = test_support::compileForGpu(c.graph, deterministic);
      ASSERT_EQ(compiled.program.kernels.size(), 1u);
      const std::string& source = compiled.program.kernels[0].source;
      ASSERT_GT(compiled.program.kernels[0].launch.grid[0], 1u) << compiled.kernels[0].binding.toString();
      ASSERT_TRUE(source.find("block_contribute_y_lanes<") != std::string::npos ||
                  source.find("block_store_y_lanes<") != std::string::npos)
          << source;
      GpuRunOptions run;
      run.repeatChecks = 2;
      test_support::expectMatchesOnGpu(compiled, deterministic, run);
    }
}

}  // namespace
}  // namespace polyred
