// GPU half of the row-resident kernel tests (tests/row_resident_test.cc is the CPU
// half): softmax and layer norm compiled into one kernel of several passes, launched on
// the GPU in normal and deterministic mode, three launches each (the repeats must be
// bitwise equal to the first), compared with the reference interpreter (compare.h's
// per-dtype tolerances). The shapes cover every block-reduction path the passes use:
// rows of at most a warp (xor butterfly: every lane already holds the total), longer
// rows (the total published through shared memory), y-reduces (columns) and
// all-reduces, several i-tiles per block (more rows than grid.y), and long rows that
// stay in one block because there are enough of them (from a quarter wave of one-row
// blocks, poly/binding.cc). Without a GPU
// every test is skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "frontend/builder.h"
#include "gpu/gpu_compile.h"
#include "interp/reference.h"
#include "lowering_helpers.h"
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
      {"softmax f32 [200,16384] (long rows, under a wave of one-row blocks)", softmax(DType::Float32, {200, 16384}, 1)},
      {"softmax f32 [64,70001] axis 0 (long columns, many of them)", softmax(DType::Float32, {64, 70001}, 0)},
      {"layer norm f16 [4096,768]", layerNorm(DType::Float16, {4096, 768})},
      {"layer norm f16 [8192,1024] (row in registers)", layerNorm(DType::Float16, {8192, 1024})},
      {"softmax f16 [8192,1024] (row in registers)", softmax(DType::Float16, {8192, 1024}, 1)},
      {"softmax f16 [4096,197] (rows ending inside a vector, in registers)", softmax(DType::Float16, {4096, 197}, 1)},
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
      CompiledGraph compiled = test_support::compileForGpu(c.graph, deterministic);
      ASSERT_EQ(compiled.program.kernels.size(), 1u) << compiled.partition.toString(compiled.graph);
      EXPECT_GT(compiled.partition.kernels[0].passes(), 1);
      expectMatchesAndRepeats(compiled, 3);
    }
  }
}

// `g` compiled for this GPU with the row cache mode asked for.
CompiledGraph compileWithRowCache(const Graph& g, RowCacheMode mode) {
  CompileOptions options;
  options.target = currentTarget();
  options.config.rowCache = mode;
  return compileGraph(g, options);
}

// The same kernels with their row kept in shared memory for the later passes
// (codegen/row_cache.h, `cache=on`): x- and all-reduces read it back, y-reduces keep
// their global loads; either way the result matches the reference.
TEST(RowResidentGpu, RowCacheMatchesTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name + ", cache=on");
    CompiledGraph compiled = compileWithRowCache(c.graph, RowCacheMode::On);
    ASSERT_EQ(compiled.program.kernels.size(), 1u);
    const KernelSpec& k = compiled.program.kernels[0];
    const bool rows = compiled.partition.kernels[0].form != CanonicalForm::YReduce;
    EXPECT_EQ(k.launch.dynamicSharedBytes > 0, rows);
    EXPECT_EQ(k.source.find("_cached") != std::string::npos, rows) << k.source;
    expectMatchesAndRepeats(compiled, 2);
  }
}

// The same kernels with their row kept in registers (`cache=regs`) where every slot is
// a constant once the pass loops are unrolled (rows ending inside a thread's share
// too); the rest keep their loads.
TEST(RowResidentGpu, RowInRegistersMatchesTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  int inRegisters = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name + ", cache=regs");
    CompiledGraph compiled = compileWithRowCache(c.graph, RowCacheMode::Registers);
    ASSERT_EQ(compiled.program.kernels.size(), 1u);
    const KernelSpec& k = compiled.program.kernels[0];
    EXPECT_EQ(k.source.find("pr_row_cache"), std::string::npos);  // never in shared memory
    inRegisters += k.source.find("pr_register_slot(") != std::string::npos;
    expectMatchesAndRepeats(compiled, 2);
  }
  EXPECT_GE(inRegisters, 5);  // f32 [4096,32], f16 [24576,128], [4096,768], [8192,1024] x 2 at least
}

// Rows that stretch the approximate Exp of x - max(x) (codegen/exp_range.h): spreads
// up to 300 (arguments whose exact results are subnormal or 0), offsets of 1e4 (the
// subtraction cancels), values near the float32 limit, and rows of -inf, +inf, NaN and
// equal values. Softmax and logsumexp (split into two passes, and online: the closed
// form of codegen/lane_folds.h) of every float dtype match the reference within
// compare.h's tolerances, subnormal results flushed to 0 included.
std::vector<double> stretchedRows(int64_t rows, int64_t n) {
  const double inf = std::numeric_limits<double>::infinity();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double scales[] = {1, 10, 30, 60, 100, 150, 300};
  std::vector<double> x(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double& v = x[static_cast<size_t>(r * n + j)];
      v = scales[r % 7] * u(rng);
      switch (r) {
        case 0: v = -inf; break;                                  // every element -inf
        case 1: v = j == 17 ? inf : v; break;                     // one +inf
        case 2: v = j == 400 ? std::nan("") : v; break;           // one NaN
        case 3: v = 0.25; break;                                  // all equal
        case 4: v = j % 3 ? -inf : v; break;                      // -inf among finite values
        case 5: v = j % 2 ? 3e38 : -3e38; break;                  // x - max overflows to -inf
        case 6: v = 1e4 + u(rng); break;                          // the shift cancels
        default: break;
      }
    }
  return x;
}

TEST(RowResidentGpu, FastExpRowsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (const Shape& shape : {Shape{80, 1000}, Shape{80, 1001}}) {  // aligned rows, masked lanes (lanes from 2^16 elements)
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
      GraphBuilder b("lse");
      b.output(b.logSumExp(b.input("x", t, shape), {1}));
      const Graph logSumExp = b.build();
      struct Case {
        std::string name, knobs, marker;  // marker: the approximate Exp's call in the kernel
        const Graph& graph;
      };
      const Graph softmax = testgraphs::softmax(t, shape, 1);
      const Case cases[] = {{"softmax", "", "pr_expf_fast(", softmax},
                            {"logsumexp split", "lse=split", "pr_expf_fast(", logSumExp},
                            {"logsumexp online", "lse=online", "pr_fold_logsumexp_lanes(", logSumExp}};
      for (const Case& c : cases) {
        const Graph& g = c.graph;
        SCOPED_TRACE(c.name + " " + std::string(dtypeName(t)) + " rows of " + std::to_string(shape[1]));
        CompileOptions options;
        options.target = currentTarget();
        options.config = KernelConfig::parse(c.knobs, "test");
        CompiledGraph compiled = compileGraph(g, options);
        ASSERT_NE(compiled.program.kernels.at(0).source.find(c.marker), std::string::npos);
        const std::vector<HostTensor> inputs = {HostTensor::fromValues(t, shape, stretchedRows(shape[0], shape[1]))};
        CpuCheckReport r = compareOutputs(compiled.graph, launchOnGpu(compiled, inputs), {},
                                          evaluateReference(compiled.graph, inputs));
        EXPECT_TRUE(r.ok) << r.message;
      }
    }
  }
}

// Rows staged in shared memory by bulk copies (codegen/row_stage.h, sm_90): odd rows
// off the 16-byte boundary, scalar loads, two staged inputs, an i-tile loop that
// restages each of its rows, rows of -inf, +inf, NaN and huge values through the
// staged loads and the invariant division; every kernel must be staged (the test
// asserts it), match the reference and repeat bitwise.
TEST(RowResidentGpu, StagedRowsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const Target target = currentTarget();
  if (target.ccMajor < 9) GTEST_SKIP() << "bulk copies need sm_90; this GPU is " << target.name;
  GraphBuilder b("softmax_of_a_sum");
  Value x = b.input("x", DType::Float32, {100, 9001}), y = b.input("y", DType::Float32, {100, 9001});
  Value e = b.unary(OpKind::Exp, b.sub(b.add(x, y), b.reduce(b.add(x, y), Reduction::max(DType::Float32), {1}, true)));
  b.output(b.binary(OpKind::Div, e, b.reduceSum(e, {1}, true)));
  struct Staged {
    std::string name, knobs;
    Graph graph;
  };
  const Staged staged[] = {
      {"softmax bf16 [100,30001]", "", testgraphs::softmax(DType::BFloat16, {100, 30001}, 1)},
      {"softmax f16 [300,20001]", "", testgraphs::softmax(DType::Float16, {300, 20001}, 1)},
      {"softmax f32 [300,16385], scalar loads", "vector=1", testgraphs::softmax(DType::Float32, {300, 16385}, 1)},
      {"softmax of x + y, f32 [100,9001]", "", b.build()},
      {"softmax f16 [70000,2048], an i-tile loop", "items=1", testgraphs::softmax(DType::Float16, {70000, 2048}, 1)},
  };
  for (const Staged& c : staged) {
    SCOPED_TRACE(c.name);
    CompileOptions options;
    options.target = target;
    options.config = KernelConfig::parse(c.knobs, "test");
    CompiledGraph compiled = compileGraph(c.graph, options);
    ASSERT_EQ(compiled.program.kernels.size(), 1u);
    ASSERT_NE(compiled.program.kernels[0].source.find("pr_stage_row("), std::string::npos);
    expectMatchesAndRepeats(compiled, 2);
  }
  const Shape shape = {80, 9000};
  for (DType t : {DType::Float32, DType::Float16}) {
    SCOPED_TRACE("stretched rows " + std::string(dtypeName(t)));
    CompileOptions options;
    options.target = target;
    CompiledGraph compiled = compileGraph(testgraphs::softmax(t, shape, 1), options);
    ASSERT_NE(compiled.program.kernels.at(0).source.find("pr_stage_row("), std::string::npos);
    const std::vector<HostTensor> inputs = {HostTensor::fromValues(t, shape, stretchedRows(shape[0], shape[1]))};
    CpuCheckReport r = compareOutputs(compiled.graph, launchOnGpu(compiled, inputs), {},
                                      evaluateReference(compiled.graph, inputs));
    EXPECT_TRUE(r.ok) << r.message;
  }
}

// Staged float16 rows fold their extrema on half pairs (codegen/lane_values.h,
// pr_fold_max_pairs): bit for bit the reference's maximum and minimum, signed zeros and
// NaN included, in vectors of 8, 4 and 2.
TEST(RowResidentGpu, StagedHalfExtremaMatchBitForBit) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const Target target = currentTarget();
  if (target.ccMajor < 9) GTEST_SKIP() << "bulk copies need sm_90; this GPU is " << target.name;
  const Shape shape = {100, 20001};
  const std::vector<HostTensor> inputs = {
      HostTensor::fromValues(DType::Float16, shape, testgraphs::extremumEdgeRows(shape[0], shape[1]))};
  for (const bool minimum : {true, false})
    for (const int width : {8, 4, 2}) {
      SCOPED_TRACE(std::string(minimum ? "min" : "max") + ", vectors of " + std::to_string(width));
      CompileOptions options;
      options.target = target;
      options.config = KernelConfig::parse("vector=" + std::to_string(width), "test");
      CompiledGraph compiled = compileGraph(testgraphs::shiftByExtremum(DType::Float16, shape, minimum), options);
      ASSERT_EQ(compiled.program.kernels.size(), 1u);
      ASSERT_NE(compiled.program.kernels[0].source.find(minimum ? "pr_fold_min_pairs" : "pr_fold_max_pairs"),
                std::string::npos);
      test_support::expectIdenticalOutputs(launchOnGpu(compiled, inputs), evaluateReference(compiled.graph, inputs),
                                           "GPU");
    }
}

}  // namespace
}  // namespace polyred
