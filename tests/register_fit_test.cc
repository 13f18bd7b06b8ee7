// Register fitting (runtime/register_fit.h): a kernel whose registers cost blocks per
// SM is compiled again under a launch bound, and the bounded CUBIN is kept only where
// ptxas fit it without spilling. Compiled by NVRTC; no GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "lowering_helpers.h"
#include "runtime/register_fit.h"
#include "support/sm_occupancy.h"

namespace polyred {
namespace {

RegisterFit fitted(const KernelSpec& spec) {
  return fitRegisters(spec, 9, 0, uncachedNvrtc());
}

// A handmade kernel of 256 threads that leaves its bound to the runtime.
KernelSpec handmade(const std::string& name, const std::string& body, uint32_t dynamicSharedBytes = 0) {
  KernelSpec spec;
  spec.name = name;
  spec.source = "#include \"polyred_elementwise.cuh\"\nextern \"C\" __global__ void POLYRED_LAUNCH_BOUNDS(256) " +
                name + body;
  spec.launch.block = {256, 1, 1};
  spec.launch.dynamicSharedBytes = dynamicSharedBytes;
  spec.registerFit = RegisterFitMode::Auto;
  return spec;
}

// `sums` independent accumulators live across a loop: more than 32 registers unbounded.
std::string manySums(int sums, const std::string& sharedArray = "") {
  const std::string n = std::to_string(sums);
  return "(const float* in, float* out, int n) {\n" + sharedArray + "  float s[" + n +
         "];\n#pragma unroll\n  for (int k = 0; k < " + n + "; ++k) s[k] = 0.0f;\n  for (int i = threadIdx.x; i < n; i += " +
         n + " * blockDim.x) {\n#pragma unroll\n    for (int k = 0; k < " + n +
         "; ++k) s[k] += in[i + k * blockDim.x] * (k + 1);\n  }\n#pragma unroll\n  for (int k = 0; k < " + n +
         "; ++k) out[threadIdx.x * " + n + " + k] = s[k];\n" +
         (sharedArray.empty() ? "" : "  out[0] += tile[threadIdx.x];\n") + "}\n";
}

// lstm's transpose of [64,3,64,160]-like tiles (the knob's test).
Graph lstmTranspose() {
  return readCompositeFile(std::string(POLYRED_SOURCE_DIR) +
                           "/tests/data/akg/lstm/level0/Fused_Reshape_Transpose_fusion_1513731845463005129.info");
}

// An int32 division of the op suite: 38 registers unbounded under NVRTC 13.0 (6 blocks
// of 256 per SM), 32 bound to 8 blocks, no stack.
Graph int32Division() {
  return readCompositeFile(std::string(POLYRED_SOURCE_DIR) + "/tests/data/ops/int_division_int32.json");
}

TEST(RegisterFit, ARegisterLimitedLaunchIsBoundToFullOccupancyWithoutSpills) {
  // (lstm's transpose was this test's kernel until its threads stopped looping, 2026-11-30:
  // 24 registers now; the Welford var_mean of 2026-11-28 needed the fit too, 34
  // registers, until its combine shared its division: 32 since 2026-11-29; deep_fm's
  // parallel sums 15983009430977764326 after it, 40 registers, until the 2026-11-30
  // masked-row loads: 32.)
  const CompiledGraph c = test_support::compileWithKnobs(int32Division(), "");
  ASSERT_EQ(c.program.kernels.size(), 1u);
  const KernelSpec& spec = c.program.kernels[0];
  ASSERT_EQ(spec.registerFit, RegisterFitMode::Auto);
  EXPECT_NE(spec.source.find("POLYRED_LAUNCH_BOUNDS(256)"), std::string::npos);
  const RegisterFit fit = fitted(spec);
  ASSERT_TRUE(fit.free.has_value());
  ASSERT_LT(fit.freeBlocks, 8) << fit.describe(256) << " (the fit has nothing to do: a new NVRTC?)";
  EXPECT_EQ(fit.targetBlocks, 8);
  EXPECT_EQ(fit.keptBlocks, 8) << fit.describe(256);
  const KernelResources kept = cubinKernelResources(*fit.cubin, spec.name).value();
  EXPECT_LE(kept.registers, 32);
  EXPECT_EQ(kept.stackBytes, 0);
  EXPECT_NE(fit.describe(256).find("bound to 8 blocks: 32 registers, no stack -- kept"), std::string::npos)
      << fit.describe(256);
}

TEST(RegisterFit, TheKnobTurnsItOff) {
  const CompiledGraph c = test_support::compileWithKnobs(lstmTranspose(), "regfit=off");
  const KernelSpec& spec = c.program.kernels.at(0);
  EXPECT_EQ(spec.registerFit, RegisterFitMode::Off);
  EXPECT_NE(spec.source.find("__launch_bounds__(256) "), std::string::npos);
  const RegisterFit fit = fitted(spec);
  EXPECT_TRUE(fit.attempts.empty());
  EXPECT_EQ(fit.keptBlocks, 0);
  EXPECT_EQ(KernelConfig::parse("regfit=off", "test").toString(), "threads=256,items=auto,vector=auto,regfit=off");
  EXPECT_EQ(KernelConfig::parse("regfit=force", "test").registerFit, RegisterFitMode::Force);
  EXPECT_THROW(KernelConfig::parse("regfit=on", "test"), Error);
}

TEST(RegisterFit, ABoundThatSpillsIsNotKept) {
  // 24 sums need more than 32 registers: bound to 8 blocks, ptxas spills; the fit goes on
  // to 6 blocks (40 registers), and keeps a bound only where nothing spilled.
  const KernelSpec spec = handmade("many_sums", manySums(24));
  const RegisterFit fit = fitted(spec);
  ASSERT_TRUE(fit.free.has_value());
  ASSERT_LT(fit.freeBlocks, 8) << fit.describe(256);
  ASSERT_FALSE(fit.attempts.empty());
  EXPECT_EQ(fit.attempts[0].blocks, 8);
  ASSERT_TRUE(fit.attempts[0].resources.has_value());
  EXPECT_GT(fit.attempts[0].resources->stackBytes, 0) << "24 sums in 32 registers spill";
  EXPECT_NE(fit.keptBlocks, 8);
  for (size_t k = 1; k < fit.attempts.size(); ++k) {
    EXPECT_LT(fit.attempts[k].blocks, fit.attempts[k - 1].blocks);
    EXPECT_GT(registerBudget(fit.attempts[k].blocks, 256), registerBudget(fit.attempts[k - 1].blocks, 256))
        << "each attempt allows more registers than the one before";
    EXPECT_GT(fit.attempts[k].blocks, fit.freeBlocks);
  }
  const KernelResources loaded = cubinKernelResources(*fit.cubin, spec.name).value();
  EXPECT_EQ(loaded.stackBytes, 0) << fit.describe(256);
  if (fit.keptBlocks == 0) {
    EXPECT_EQ(loaded.registers, fit.free->registers);
  }

  // regfit=force keeps the first bound, spills and all.
  KernelSpec forced = spec;
  forced.registerFit = RegisterFitMode::Force;
  const RegisterFit force = fitted(forced);
  EXPECT_EQ(force.keptBlocks, 8);
  ASSERT_EQ(force.attempts.size(), 1u);
  EXPECT_GT(cubinKernelResources(*force.cubin, spec.name).value().stackBytes, 0);
}

TEST(RegisterFit, SharedMemoryThatLimitsBlocksLeavesTheRegistersAlone) {
  // 46 KiB of static shared memory hold 4 blocks an SM: registers for 5 would win nothing.
  const KernelSpec spec = handmade("sums_and_tile", manySums(24, "  __shared__ float tile[46 * 256];\n  tile[threadIdx.x] = n;\n  __syncthreads();\n"));
  const RegisterFit fit = fitted(spec);
  ASSERT_TRUE(fit.free.has_value());
  EXPECT_EQ(fit.free->staticSharedBytes, 46 * 1024);
  EXPECT_EQ(fit.targetBlocks, 4);
  EXPECT_GE(fit.freeBlocks, 4) << fit.describe(256);
  EXPECT_LT(fit.freeBlocks, 8) << "the registers alone would call for a bound";
  EXPECT_TRUE(fit.attempts.empty()) << fit.describe(256);
  // Dynamic shared memory counts the same way.
  const RegisterFit dynamic = fitted(handmade("many_sums", manySums(24), 100 * 1024));
  EXPECT_EQ(dynamic.targetBlocks, 2);
  EXPECT_TRUE(dynamic.attempts.empty());
}

TEST(RegisterFit, KernelsWithTheirOwnBoundAreLeftAlone) {
  KernelSpec spec = handmade("many_sums", manySums(24));
  spec.registerFit = RegisterFitMode::Off;
  const RegisterFit fit = fitted(spec);
  EXPECT_FALSE(fit.free.has_value());
  EXPECT_TRUE(fit.attempts.empty());
  EXPECT_EQ(fit.keptBlocks, 0);
}

}  // namespace
}  // namespace polyred
