// The row cache of row-resident kernels (codegen/row_cache.h): in shared memory only
// when asked; with `cache=on` an x- or all-reduce keeps pass 0's loads in shared memory
// and the later passes read them back, y-reduces keep their global loads, and a cache
// that does not fit the block's shared memory is not planned. In registers (`cache=regs`,
// and by the policy for kernels of three passes or more) where every slot index is a
// constant once the pass loops are unrolled, where a later pass also reads the results
// of an earlier one (an Exp's) instead of computing them again. Each cached program matches the reference
// on the CPU (the CPU executor runs the loop program; the cache is a CUDA detail) and
// compiles under NVRTC; tests/gpu/row_resident_gpu_test.cc runs them.
#include <gtest/gtest.h>

#include <string>

#include "codegen/row_cache.h"
#include "driver/pipeline.h"
#include "lowering_helpers.h"
#include "row_resident_graphs.h"

namespace polyred {
namespace {

TEST(RowCache, InSharedMemoryOnlyWhenAsked) {
  for (const char* knobs : {"", "cache=auto", "cache=off", "cache=regs"}) {
    CompiledGraph c = test_support::compileWithKnobs(testgraphs::softmax(DType::Float16, {300, 1000}, 1), knobs);
    ASSERT_EQ(c.program.kernels.size(), 1u);
    EXPECT_EQ(c.program.kernels[0].launch.dynamicSharedBytes, 0u) << knobs;
    EXPECT_EQ(c.program.kernels[0].source.find("pr_row_cache"), std::string::npos) << knobs;
  }
}

TEST(RowCache, LaterPassesReadWhatPassZeroKept) {
  // Softmax: pass 0 (max) keeps x; pass 1 (sum of exp) and pass 2 (the quotient) read it.
  CompiledGraph c = test_support::compileWithKnobs(testgraphs::softmax(DType::Float16, {300, 1000}, 1), "cache=on");
  ASSERT_EQ(c.kernels.size(), 1u);
  const PolyKernel& k = c.kernels[0];
  ASSERT_EQ(k.plan.passes(), 3);
  RowCache cache = planRowCache(k, 227 * 1024, RowCacheMode::On);
  ASSERT_EQ(cache.regions.size(), 1u);
  EXPECT_EQ(cache.regions[0].readInPass, (std::vector<bool>{false, true, true}));
  EXPECT_EQ(cache.threads, k.binding.threadsPerBlock());
  // Every thread has a slot for each of its vectors of the row.
  EXPECT_GE(cache.slotsPerThread * k.binding.BX, k.vector.vectorsAlong(k.plan.N));
  EXPECT_EQ(cache.bytes, cache.slotsPerThread * cache.threads * cache.regions[0].packBytes);

  const KernelSpec& spec = c.program.kernels[0];
  EXPECT_EQ(spec.launch.dynamicSharedBytes, static_cast<uint32_t>(cache.bytes));
  EXPECT_EQ(test_support::occurrences(spec.source, "pr_load_lanes_kept<"), 1u) << spec.source;
  EXPECT_EQ(test_support::occurrences(spec.source, "pr_load_lanes_cached<"), 2u) << spec.source;
  EXPECT_EQ(test_support::occurrences(spec.source, "cache_slot = 0;  // this pass"), 3u) << spec.source;  // one restart per pass
  test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/3);
}

TEST(RowCache, ScalarAndMaskedRowsAndLayerNorm) {
  for (const auto& [graph, knobs] : std::vector<std::pair<Graph, std::string>>{
           {testgraphs::softmax(DType::Float32, {300, 1000}, 1), "cache=on,vector=1"},  // scalar loads
           {testgraphs::softmax(DType::Float16, {300, 1001}, 1), "cache=on"},           // masked lanes
           {testgraphs::softmax(DType::Float32, {2000}, 0), "cache=on"},                // all-reduce
           {testgraphs::layerNorm(DType::Float16, {64, 768}), "cache=on,threads=512"}}) {
    SCOPED_TRACE(knobs);
    CompiledGraph c = test_support::compileWithKnobs(graph, knobs);
    ASSERT_EQ(c.program.kernels.size(), 1u);
    const std::string& cuda = c.program.kernels[0].source;
    EXPECT_GT(c.program.kernels[0].launch.dynamicSharedBytes, 0u);
    EXPECT_GE(test_support::occurrences(cuda, "_cached"), 1u) << cuda;
    test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/3);
  }
}

TEST(RowCache, NotForColumnsNorWhereItDoesNotFit) {
  CompiledGraph columns = test_support::compileWithKnobs(testgraphs::softmax(DType::Float32, {50, 40}, 0), "cache=on");
  ASSERT_EQ(columns.kernels.size(), 1u);
  EXPECT_EQ(columns.kernels[0].plan.form, CanonicalForm::YReduce);
  EXPECT_EQ(columns.program.kernels[0].launch.dynamicSharedBytes, 0u);

  CompiledGraph rows = test_support::compileWithKnobs(testgraphs::softmax(DType::Float16, {300, 1000}, 1), "cache=on");
  const RowCache fits = planRowCache(rows.kernels[0], 227 * 1024, RowCacheMode::On);
  ASSERT_FALSE(fits.empty());
  EXPECT_TRUE(planRowCache(rows.kernels[0], fits.bytes - 1, RowCacheMode::On).empty());
  EXPECT_TRUE(planRowCache(rows.kernels[0], fits.bytes, RowCacheMode::Off).empty());
}

// RMS norm over the last axis: a sum of squares, then x scaled by its row's total (two
// passes).
Graph rmsNorm(DType t, const Shape& shape) {
  GraphBuilder b("rms_norm");
  Value x = b.cast(b.input("x", t, shape), DType::Float32);
  Value ms = b.mul(b.reduceSum(b.mul(x, x), {-1}, true),
                   b.constant(Scalar::ofFloat(DType::Float32, 1.0 / static_cast<double>(shape.back()))));
  b.output(b.cast(b.mul(x, b.unary(OpKind::Rsqrt, ms)), t));
  return b.build();
}

TEST(RowCache, InRegistersTheSlotsAreConstantsOfUnrolledPasses) {
  // Layer norm f16 [64,1024]: a warp per row, 4 vectors of 8 halves a thread, 3 passes.
  CompiledGraph c = test_support::compileWithKnobs(testgraphs::layerNorm(DType::Float16, {64, 1024}), "cache=regs");
  ASSERT_EQ(c.kernels.size(), 1u);
  const PolyKernel& k = c.kernels[0];
  ASSERT_EQ(k.plan.passes(), 3);
  const RowCache cache = planRowCache(k, 0, RowCacheMode::Registers);  // no shared memory needed
  ASSERT_EQ(cache.regions.size(), 1u);
  EXPECT_TRUE(cache.registers);
  EXPECT_EQ(cache.bytes, 0);
  EXPECT_EQ(cache.slotsPerThread * k.binding.BX, k.vector.vectorsAlong(k.plan.N));
  EXPECT_LE(cache.slotsPerThread * cache.regions[0].packBytes, kRegisterCacheBytes);
  EXPECT_NE(cache.describe().find("in registers"), std::string::npos);

  const KernelSpec& spec = c.program.kernels[0];
  EXPECT_EQ(spec.launch.dynamicSharedBytes, 0u);
  EXPECT_EQ(spec.source.find("pr_row_cache"), std::string::npos) << spec.source;
  EXPECT_NE(spec.source.find("PrPack<8, __half> cache0[" + std::to_string(cache.slotsPerThread) + "];"),
            std::string::npos) << spec.source;
  EXPECT_EQ(test_support::occurrences(spec.source, "pr_register_slot(cache0, cache_slot)"), 3u) << spec.source;
  // The pass loops unrolled whole (the default's are "#pragma unroll 4").
  EXPECT_EQ(test_support::occurrences(spec.source, "#pragma unroll 4\n"), 0u) << spec.source;
  EXPECT_EQ(test_support::occurrences(
                test_support::compileWithKnobs(testgraphs::layerNorm(DType::Float16, {64, 1024}), "cache=off")
                    .program.kernels[0].source, "#pragma unroll 4\n"), 3u);
  test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/4);
}

// Rows that are not a whole number of vectors per thread: isl folds the row's end into
// the pass loop's bound (c1 <= 4 - (tx + 35) / 32); in registers the loop runs the most
// trips any thread makes, with that bound as its statement's guard, and the slot
// advances after the guard whether the statement ran or not.
TEST(RowCache, InRegistersAThreadDependentBoundBecomesAGuard) {
  // (items=4: the policy would give these few rows 2 items a thread, 64 threads a row.)
  CompiledGraph c =
      test_support::compileWithKnobs(testgraphs::softmax(DType::Float16, {300, 1000}, 1), "cache=regs,items=4");
  ASSERT_EQ(c.kernels.size(), 1u);
  const PolyKernel& k = c.kernels[0];
  ASSERT_EQ(k.binding.BX, 32);  // 125 vectors of 8 over 32 threads: 4 trips for the first 29, 3 for the rest
  const RowCache cache = planRowCache(k, 0, RowCacheMode::Registers);
  ASSERT_EQ(cache.regions.size(), 2u);  // x, and exp(x - max) for the last pass
  EXPECT_FALSE(cache.regions[0].result);
  EXPECT_TRUE(cache.regions[1].result);
  EXPECT_EQ(cache.slotsPerThread, 4);
  const std::string& cuda = c.program.kernels[0].source;
  EXPECT_EQ(test_support::occurrences(cuda, "for (int c1 = 0; (c1 <= 3); c1 += 1) {"), 3u) << cuda;
  EXPECT_EQ(test_support::occurrences(cuda, "if (c1 <= "), 3u) << cuda;
  EXPECT_EQ(test_support::occurrences(cuda, "++cache_slot;  // the guarded statement's slot, taken or not"), 3u) << cuda;
  EXPECT_EQ(test_support::occurrences(cuda, "  ++cache_slot;\n"), 0u) << cuda;  // none inside the guard
  test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/4);
}

// In registers, a later pass reads a result an earlier one computed through an Exp (or a
// division) instead of computing it again, and evaluates nothing that only fed it:
// softmax's last pass reads exp(x - max) as pass 1 kept it, and no longer reads x, so x
// is kept for pass 1 alone. Layer norm's later passes compute x - mean again (a
// subtraction costs less than a second copy of the row). Without the register cache,
// no results.
TEST(RowCache, LaterPassesReadResultsInsteadOfComputingThemAgain) {
  CompiledGraph c = test_support::compileWithKnobs(testgraphs::softmax(DType::Float32, {8192, 512}, 1), "");
  ASSERT_EQ(c.kernels.size(), 1u);
  const PolyKernel& k = c.kernels[0];
  ASSERT_EQ(k.plan.passes(), 3);
  ASSERT_GT(k.vector.width, 1);
  const RowCache cache = planRowCache(k, 0, RowCacheMode::Auto);
  ASSERT_EQ(cache.regions.size(), 2u);
  const RowCache::Region &x = cache.regions[0], &e = cache.regions[1];
  EXPECT_FALSE(x.result);
  EXPECT_EQ(x.readInPass, (std::vector<bool>{false, true, false}));
  EXPECT_TRUE(e.result);
  EXPECT_EQ(k.plan.body.at(static_cast<size_t>(e.value)).op, OpKind::Exp);
  EXPECT_EQ(e.keptInPass, 1);
  EXPECT_EQ(e.readInPass, (std::vector<bool>{false, false, true}));
  EXPECT_FALSE(cache.valuesOfPass(k.plan, 2).at(static_cast<size_t>(x.value)));  // nothing left to load
  EXPECT_TRUE(k.plan.valuesOfPass(2).at(static_cast<size_t>(x.value)));
  const std::string& cuda = c.program.kernels[0].source;
  EXPECT_EQ(test_support::occurrences(cuda, "pr_expf"), 1u) << cuda;
  EXPECT_EQ(test_support::occurrences(cuda, "pr_keep_lanes<"), 1u) << cuda;
  EXPECT_EQ(test_support::occurrences(cuda, "pr_kept_lanes<"), 1u) << cuda;
  EXPECT_EQ(test_support::occurrences(cuda, "pr_load_lanes_cached<"), 1u) << cuda;
  test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/5);

  const CompiledGraph layerNorm = test_support::compileWithKnobs(testgraphs::layerNorm(DType::Float16, {64, 1024}), "");
  const RowCache norms = planRowCache(layerNorm.kernels[0], 0, RowCacheMode::Auto);
  ASSERT_FALSE(norms.empty());
  for (const RowCache::Region& r : norms.regions) EXPECT_FALSE(r.result);
  EXPECT_TRUE(norms.evaluatedInPass.empty());

  const CompiledGraph off = test_support::compileWithKnobs(testgraphs::softmax(DType::Float32, {8192, 512}, 1), "cache=off");
  EXPECT_EQ(off.program.kernels[0].source.find("pr_keep_lanes"), std::string::npos);
  EXPECT_EQ(test_support::occurrences(off.program.kernels[0].source, "pr_expf"), 2u);
}

TEST(RowCache, NotInRegistersWhereTheyDoNotFit) {
  // 1024 vectors of f32 over 64 threads: 16 slots of 16 bytes, past kRegisterCacheBytes.
  CompiledGraph wide = test_support::compileWithKnobs(testgraphs::layerNorm(DType::Float32, {64, 4096}), "cache=regs,items=16");
  ASSERT_EQ(wide.kernels[0].binding.BX, 64);
  EXPECT_TRUE(planRowCache(wide.kernels[0], 0, RowCacheMode::Registers).empty());
  EXPECT_EQ(wide.program.kernels[0].source.find("pr_register_slot"), std::string::npos);
}

TEST(RowCache, ThePolicyKeepsRowsOfThreePassesInRegisters) {
  auto inRegisters = [](const Graph& g, const std::string& knobs = "") {
    return test_support::compileWithKnobs(g, knobs).program.kernels[0].source.find("pr_register_slot(") !=
           std::string::npos;
  };
  EXPECT_TRUE(inRegisters(testgraphs::layerNorm(DType::Float16, {64, 1024})));
  EXPECT_TRUE(inRegisters(testgraphs::softmax(DType::Float16, {64, 1024}, 1)));
  EXPECT_FALSE(inRegisters(testgraphs::layerNorm(DType::Float16, {64, 1024}), "cache=off"));
  EXPECT_FALSE(inRegisters(rmsNorm(DType::Float16, {64, 1024})));  // two passes: one re-read saved
  EXPECT_TRUE(inRegisters(rmsNorm(DType::Float16, {64, 1024}), "cache=regs"));
  // A staged row keeps its stage (softmax f16 [2048,8192] is faster so on the H100).
  const CompiledGraph staged = test_support::compileWithKnobs(testgraphs::softmax(DType::Float16, {2048, 8192}, 1), "");
  EXPECT_NE(staged.program.kernels[0].source.find("pr_stage_row("), std::string::npos);
  EXPECT_EQ(staged.program.kernels[0].source.find("pr_register_slot("), std::string::npos);
  test_support::expectMatchesOnCpuAndCompiles(test_support::compileWithKnobs(rmsNorm(DType::Float16, {64, 1024}), "cache=regs"),
                                              /*seed=*/4);
}

TEST(RowCache, IsAKnob) {
  EXPECT_EQ(KernelConfig::parse("cache=regs", "t").rowCache, RowCacheMode::Registers);
  EXPECT_EQ(KernelConfig::parse("cache=regs,threads=512", "t").toString(), "threads=512,items=auto,vector=auto,cache=regs");
  EXPECT_EQ(KernelConfig::parse("cache=on", "t").rowCache, RowCacheMode::On);
  EXPECT_EQ(KernelConfig::parse("cache=off", "t").rowCache, RowCacheMode::Off);
  EXPECT_EQ(KernelConfig::parse("cache=auto", "t").rowCache, RowCacheMode::Auto);
  EXPECT_EQ(KernelConfig::parse("cache=on,threads=512", "t").toString(), "threads=512,items=auto,vector=auto,cache=on");
  EXPECT_THROW(KernelConfig::parse("cache=1", "t"), Error);
  EXPECT_TRUE(KernelConfig::parse("cache=auto", "t").isDefault());
}

}  // namespace
}  // namespace polyred
