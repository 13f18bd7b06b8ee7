// The shared memory of kernels with many reductions (codegen/shared_memory): past the
// 48 KiB a block may declare statically (a backward's column sums over every layer, fused
// into one y-reduce), the block reductions' arrays move to dynamic shared memory, which
// the launch asks for; the kernel still matches the reference and compiles under NVRTC.
// A kernel whose arrays fit keeps its static ones; one past the target's whole limit is
// refused as unsupported, naming the kernel.
#include <gtest/gtest.h>

#include <string>

#include "codegen/shared_memory.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "lowering_helpers.h"
#include "support/error.h"

namespace polyred {
namespace {

using test_support::expectMatchesOnCpuAndCompiles;

// `count` column sums of x * k over [rows, columns]: one y-reduce with `count`
// accumulators of its own.
Graph columnSums(int count, int64_t rows = 512, int64_t columns = 768) {
  GraphBuilder b("column_sums");
  Value x = b.input("x", DType::Float32, {rows, columns});
  for (int k = 1; k <= count; ++k)
    b.output(b.reduceSum(b.binary(OpKind::Mul, x, b.constant(Scalar::ofFloat(DType::Float32, k))), {0}));
  return b.build();
}

const KernelSpec& onlyReduceKernel(const CompiledGraph& c) {
  EXPECT_EQ(c.program.kernels.size(), 1u);
  return c.program.kernels.front();
}

TEST(SharedMemory, ManyReductionsMoveTheirArraysToDynamicSharedMemory) {
  const CompiledGraph c = compileGraph(columnSums(60), CompileOptions{});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_GT(staticSharedBytes(c.kernels[0]), kMaxStaticSharedBytes);
  ASSERT_TRUE(reductionArraysAreDynamic(c.kernels[0]));
  const KernelSpec& k = onlyReduceKernel(c);
  EXPECT_NE(k.source.find("extern __shared__ __align__(16) unsigned char pr_reduce_smem[]"), std::string::npos);
  EXPECT_EQ(k.source.find("__shared__ float smem"), std::string::npos) << "a static array left";
  EXPECT_EQ(static_cast<int64_t>(k.launch.dynamicSharedBytes), dynamicReductionBytes(c.kernels[0]));
  EXPECT_GT(k.launch.dynamicSharedBytes, uint32_t{48 * 1024});
  expectMatchesOnCpuAndCompiles(c, 7);
}

TEST(SharedMemory, ReductionsThatFitKeepStaticArrays) {
  const CompiledGraph c = compileGraph(columnSums(3), CompileOptions{});
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_FALSE(reductionArraysAreDynamic(c.kernels[0]));
  const KernelSpec& k = onlyReduceKernel(c);
  EXPECT_EQ(k.source.find("pr_reduce_smem"), std::string::npos);
  EXPECT_NE(k.source.find("__shared__ float smem0["), std::string::npos);
  expectMatchesOnCpuAndCompiles(c, 3);
}

TEST(SharedMemory, ArraysPastTheTargetsWholeLimitAreUnsupported) {
  CompileOptions o;
  o.target.ccMajor = 7;
  o.target.ccMinor = 5;  // 64 KiB a block
  o.target.name = "sm_75 (test)";
  try {
    compileGraph(columnSums(120), o);
    FAIL() << "120 column sums in 64 KiB of shared memory";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes of shared memory, more than a block's 64 KiB"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace polyred
