// Horizontal fusion (canon/launch_groups, codegen/horizontal_fusion): independent
// kernels of one sub-graph share one launch, each part on its own range of blocks with
// its own binding, workspaces and tickets; dependent kernels (through a temporary or an
// in-place buffer) stay in separate launches, in dependence order. Every fused program
// is compiled by NVRTC (no GPU needed) and its parts pass the CPU check; the GPU tests
// (gpu/runtime_gpu_test.cc) and `polyred corpus` on the GPU run the fused launches.
#include <gtest/gtest.h>

#include <string>

#include "canon/launch_groups.h"
#include "driver/cpu_check.h"
#include "codegen/shared_memory.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "parallel_graphs.h"
#include "runtime/nvrtc.h"
#include "lowering_helpers.h"

namespace polyred {
namespace {

using test_support::expectNvrtcCompiles;

CompiledGraph compile(const Graph& g, bool deterministic, bool horizontalFusion = true) {
  CompileOptions o;
  o.deterministic = deterministic;
  o.horizontalFusion = horizontalFusion;
  return compileGraph(g, o);
}

using testgraphs::fourIndependentParts;

TEST(LaunchGroups, IndependentKernelsShareOneLaunch) {
  Graph g = fourIndependentParts();
  for (bool deterministic : {false, true}) {
    CompiledGraph c = compile(g, deterministic);
    ASSERT_EQ(c.partition.kernels.size(), 4u);
    ASSERT_EQ(c.program.kernels.size(), 1u) << toString(groupIndependentKernels(c.partition, g), c.partition);
    const KernelSpec& k = c.program.kernels[0];
    ASSERT_EQ(k.parts.size(), 4u);
    // Contiguous block ranges covering the grid; one block size for every part.
    int64_t next = 0;
    for (size_t p = 0; p < k.parts.size(); ++p) {
      const PolyKernel& part = c.kernels[p];
      EXPECT_EQ(k.parts[p].kernel, part.plan.name);
      EXPECT_EQ(k.parts[p].firstBlock, next);
      EXPECT_EQ(k.parts[p].blocks, part.binding.GX * part.binding.GY);
      EXPECT_EQ(part.binding.threadsPerBlock(), static_cast<int>(k.launch.block[0]));
      EXPECT_NE(k.source.find("polyred_part" + std::to_string(p) + "::run("), std::string::npos);
      next += k.parts[p].blocks;
    }
    EXPECT_EQ(static_cast<int64_t>(k.launch.grid[0]), next);
    EXPECT_EQ(k.launch.block[1], 1u);
    // Two multi-block parts, each with its own accumulator (or partials) and tickets.
    int multiBlock = 0;
    for (const PolyKernel& part : c.kernels) multiBlock += part.binding.multiBlock();
    EXPECT_EQ(multiBlock, 2);
    EXPECT_EQ(k.workspaces.size(), 4u);
    expectNvrtcCompiles(c);
    CpuCheckReport r = checkOnCpu(c, /*seed=*/5, /*maxPoints=*/0, deterministic);
    EXPECT_TRUE(r.ok) << r.message;
  }
  // Without horizontal fusion: one launch per kernel, as before.
  EXPECT_EQ(compile(g, false, /*horizontalFusion=*/false).program.kernels.size(), 4u);
}

TEST(LaunchGroups, RowResidentPartBesideMultiBlockParts) {
  Graph g = testgraphs::softmaxBesideOtherReductions();
  for (bool deterministic : {false, true}) {
    CompiledGraph c = compile(g, deterministic);
    ASSERT_EQ(c.program.kernels.size(), 1u);
    EXPECT_EQ(c.program.kernels[0].parts.size(), c.partition.kernels.size());
    EXPECT_GE(c.partition.kernels.size(), 3u);
    expectNvrtcCompiles(c);
    CpuCheckReport r = checkOnCpu(c, 4, 0, deterministic);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

// Many independent float64 column sums: together their block reductions would declare
// more static shared memory than a block may have, so the group becomes several
// launches, each within the budget, each compiling.
TEST(LaunchGroups, SharedMemoryBoundsAFusedLaunch) {
  GraphBuilder b("many");
  for (int k = 0; k < 40; ++k) b.output(b.reduceSum(b.input("x" + std::to_string(k), DType::Float64, {3000 + k, 64}), {0}));
  CompiledGraph c = compile(b.build(), false);
  ASSERT_EQ(c.partition.kernels.size(), 40u);
  ASSERT_EQ(groupIndependentKernels(c.partition, c.graph).size(), 1u);
  int64_t total = 0;
  for (const PolyKernel& k : c.kernels) total += staticSharedBytes(k);
  ASSERT_GT(total, 48 * 1024) << "the case must need more than one block's static shared memory";
  EXPECT_GT(c.program.kernels.size(), 1u);
  size_t parts = 0;
  for (const KernelSpec& spec : c.program.kernels) {
    int64_t bytes = 0;
    for (const LaunchPart& p : spec.parts)
      for (const PolyKernel& k : c.kernels)
        if (k.plan.name == p.kernel) bytes += staticSharedBytes(k);
    EXPECT_LE(bytes, 40 * 1024) << spec.name;
    parts += std::max<size_t>(1, spec.parts.size());
  }
  EXPECT_EQ(parts, 40u);
  expectNvrtcCompiles(c);
}

TEST(LaunchGroups, SmallerBlocksAreBoundAgainWithTheLargest) {
  GraphBuilder b("blocks");
  b.output(b.reduceSum(b.input("a", DType::Float32, {2, 40}), {1}));  // natural block: 8 x 2 threads
  b.output(b.reduceSum(b.input("c", DType::Float32, {5000, 3}), {1}));
  Graph g = b.build();
  CompiledGraph separate = compile(g, false, false);
  ASSERT_EQ(separate.kernels.size(), 2u);
  ASSERT_NE(separate.kernels[0].binding.threadsPerBlock(), separate.kernels[1].binding.threadsPerBlock());
  CompiledGraph fused = compile(g, false);
  ASSERT_EQ(fused.program.kernels.size(), 1u);
  EXPECT_EQ(fused.kernels[0].binding.threadsPerBlock(), fused.kernels[1].binding.threadsPerBlock());
  expectNvrtcCompiles(fused);
  CpuCheckReport r = checkOnCpu(fused, 2, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
}

// A sum of squares over 2^23 floats fills one wave of blocks alone; beside it, two
// small sums. Launched one after another, the small parts' blocks would wait behind
// the wave and run as a tail of their own; fused, the large part splits j over fewer
// blocks so that the whole launch is one wave (H100, the deep_fm file of this shape:
// 35.2 -> 31.8 us, docs/results/notes-2026-11-26.md).
TEST(LaunchGroups, TheLargestPartLeavesRoomForTheOthersInItsWave) {
  auto graph = [](int64_t smallRows) {
    GraphBuilder b("wave");
    Value x = b.input("x", DType::Float32, {1 << 17, 64});
    b.output(b.reduceSum(b.mul(x, x), {0, 1}));
    b.output(b.reduceSum(b.input("y", DType::Float32, {smallRows}), {0}));
    b.output(b.reduceSum(b.input("z", DType::Float32, {8000}), {0}));
    return b.build();
  };
  const Target target;
  const int64_t wave = static_cast<int64_t>(target.smCount) * (2048 / 256);
  {
    CompiledGraph alone = compile(graph(184965), false, /*horizontalFusion=*/false);
    ASSERT_EQ(alone.kernels.size(), 3u);
    // Alone it fills one wave of 256-thread blocks: 1024 of the 1056 slots, the even
    // split of its 8192 vectors for each thread index into 8 a thread (binding.cc,
    // evenSplit).
    ASSERT_EQ(alone.kernels[0].binding.blocks(), 1024);
    ASSERT_LE(alone.kernels[0].binding.blocks(), wave);
    const int64_t others = alone.kernels[1].binding.blocks() + alone.kernels[2].binding.blocks();
    ASSERT_GT(others, 1);
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(deterministic ? "deterministic" : "atomics");
      CompiledGraph fused = compile(graph(184965), deterministic);
      ASSERT_EQ(fused.program.kernels.size(), 1u);
      EXPECT_EQ(fused.kernels[0].binding.blocks(), wave - others);
      EXPECT_EQ(fused.kernels[1].binding.blocks() + fused.kernels[2].binding.blocks(), others);
      EXPECT_EQ(static_cast<int64_t>(fused.program.kernels[0].launch.grid[0]), wave);
      expectNvrtcCompiles(fused);
      CpuCheckReport r = checkOnCpu(fused, 3, 0, deterministic);
      EXPECT_TRUE(r.ok) << r.message;
    }
  }
  {  // Others past a quarter of a wave: their blocks are no longer short beside the
     // large part's, and it keeps its own split.
    CompiledGraph alone = compile(graph(1 << 22), false, false);
    ASSERT_GT(alone.kernels[1].binding.blocks(), wave / 4);
    CompiledGraph fused = compile(graph(1 << 22), false);
    ASSERT_EQ(fused.program.kernels.size(), 1u);
    EXPECT_EQ(fused.kernels[0].binding.blocks(), alone.kernels[0].binding.blocks());
  }
}

// Long rows: the layer norm's mean is materialized and read by later kernels, so those
// launch later; an independent output joins the first launch.
TEST(LaunchGroups, DependencesThroughTemporariesSplitLaunches) {
  Graph ln = testgraphs::layerNorm(DType::Float32, {3, 70000});
  Graph g = testgraphs::longRowLayerNormBesideIndependentOutputs(false);
  CompiledGraph c = compile(g, false);
  std::vector<LaunchGroup> groups = groupIndependentKernels(c.partition, g);
  ASSERT_GE(c.partition.kernels.size(), 3u) << c.partition.toString(g);
  ASSERT_GE(groups.size(), 2u);
  EXPECT_EQ(c.program.kernels.size(), groups.size());
  // Every temporary is written in an earlier launch than any that reads it.
  auto launchOf = [&](size_t kernel) {
    for (size_t l = 0; l < groups.size(); ++l)
      for (int k : groups[l].kernels)
        if (static_cast<size_t>(k) == kernel) return l;
    return groups.size();
  };
  for (size_t reader = 0; reader < c.partition.kernels.size(); ++reader)
    for (const BodyValue& v : c.partition.kernels[reader].body)
      if (v.kind == BodyValue::Kind::Load && v.temporary >= 0)
        for (size_t writer = 0; writer < c.partition.kernels.size(); ++writer)
          for (const ReductionOutput& r : c.partition.kernels[writer].reductions)
            if (r.temporary == v.temporary) {
              EXPECT_LT(launchOf(writer), launchOf(reader));
            }
  EXPECT_FALSE(c.program.kernels[0].parts.empty()) << "the independent Neg joins the first launch";
  expectNvrtcCompiles(c);
  CpuCheckReport r = checkOnCpu(c, 1, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(compile(ln, false).program.kernels.size(), groups.size());
}

// A kernel that writes an input's buffer in place depends on every kernel that reads
// that input (and the other way round): never in one launch, where blocks would race.
TEST(LaunchGroups, InPlaceWritesAreDependences) {
  GraphBuilder b("in_place");
  Value a = b.input("a", DType::Float32, {1000});
  Value c = b.input("c", DType::Float32, {1000});
  b.output(b.reduceSum(b.input("d", DType::Float32, {64, 64}), {0}));  // independent of both
  b.output(b.mul(b.reshape(a, {10, 100}), b.constant(Scalar::ofFloat(DType::Float32, 2))));  // reads a
  b.outputInto(b.add(c, b.constant(Scalar::ofFloat(DType::Float32, 1))), a);  // writes a
  Graph g = b.build();
  CompiledGraph compiled = compile(g, false);
  std::vector<LaunchGroup> groups = groupIndependentKernels(compiled.partition, g);
  ASSERT_EQ(compiled.partition.kernels.size(), 3u) << compiled.partition.toString(g);
  ASSERT_EQ(groups.size(), 2u) << toString(groups, compiled.partition);
  EXPECT_EQ(groups[0].kernels.size(), 2u);
  EXPECT_EQ(groups[1].kernels.size(), 1u);
  EXPECT_EQ(compiled.program.kernels.size(), 2u);
  expectNvrtcCompiles(compiled);
}

}  // namespace
}  // namespace polyred
