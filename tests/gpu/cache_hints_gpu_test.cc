// GPU half of the cache-hint tests (tests/cache_hints_test.cc is the CPU half): the
// single-pass reductions whose loads stream (`ld.global.cs`, poly/cache_hints.h) match
// the reference interpreter on the GPU, in every form and in deterministic mode. The
// L2 size is set to 1 MiB so that small inputs fall in the window (a quarter of the L2
// to four times it); one case reads 65 MB with the device's own L2. Without a GPU every
// test is skipped.
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

Graph reduced(DType t, const Shape& shape, const std::vector<int64_t>& axes, Reduction r) {
  return test_support::singleReduction("streamed", t, shape, axes, r);
}

std::vector<Case> cases() {
  GraphBuilder weighted("weighted_row_sum");
  Value x = weighted.input("x", DType::Float32, {96, 4097});
  Value w = weighted.input("w", DType::Float32, {4097});
  weighted.output(weighted.reduceSum(weighted.mul(x, w), {1}, false));
  return {
      {"sum f32 [300001] (all-reduce)", reduced(DType::Float32, {300001}, {0}, Reduction::sum(DType::Float32))},
      {"max f16 [200,3001] over the rows", reduced(DType::Float16, {200, 3001}, {1}, Reduction::max(DType::Float16))},
      {"sum i32 [64,4096] over the rows", reduced(DType::Int32, {64, 4096}, {1}, Reduction::sum(DType::Int32))},
      {"and bool [512,2048] over the rows", reduced(DType::Bool, {512, 2048}, {1}, Reduction::logicalAnd(DType::Bool))},
      {"sum f32 [40,16384] over the columns (y-reduce lanes)",
       reduced(DType::Float32, {40, 16384}, {0}, Reduction::sum(DType::Float32))},
      {"min f32 [8,96,32,32] over (0,2,3)",
       reduced(DType::Float32, {8, 96, 32, 32}, {0, 2, 3}, Reduction::min(DType::Float32))},
      {"sum of x * w over rows of 4097 (w stays plain)", weighted.build()},
  };
}

void expectStreamsAndMatches(const Graph& g, const CompileOptions& options) {
  CompiledGraph compiled = compileGraph(g, options);
  ASSERT_EQ(compiled.program.kernels.size(), 1u);
  ASSERT_NE(compiled.program.kernels[0].source.find("PrLoadHint::Streaming>("), std::string::npos)
      << compiled.program.kernels[0].source;
  GpuRunOptions run;
  run.repeatChecks = 2;
  test_support::expectMatchesOnGpu(compiled, options.deterministic, run);
}

TEST(CacheHintsGpu, StreamedReductionsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (const Case& c : cases())
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(c.name + (deterministic ? ", deterministic" : ""));
      CompileOptions options;
      options.target = currentTarget();
      options.target.l2Bytes = int64_t{1} << 20;
      options.deterministic = deterministic;
      expectStreamsAndMatches(c.graph, options);
    }
}

TEST(CacheHintsGpu, A65MegabyteSumStreamsWithTheDevicesL2) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  CompileOptions options;
  options.target = currentTarget();
  const int64_t bytes = int64_t{16226304} * 4;
  if (bytes < options.target.l2Bytes / 4 || bytes > 4 * options.target.l2Bytes)
    GTEST_SKIP() << "65 MB is outside this GPU's window (L2 " << options.target.l2Bytes << " bytes)";
  expectStreamsAndMatches(reduced(DType::Float32, {16226304}, {0}, Reduction::sum(DType::Float32)), options);
}

}  // namespace
}  // namespace polyred
