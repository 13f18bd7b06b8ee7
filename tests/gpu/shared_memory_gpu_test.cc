// Kernels whose block reductions' arrays are in dynamic shared memory (sixty column sums
// in one y-reduce: past the 48 KiB a block may declare statically) launch with the
// opt-in and match the reference on the GPU, plain and deterministic.
#include <gtest/gtest.h>

#include "codegen/shared_memory.h"
#include "gpu_compile.h"

namespace polyred {
namespace {

using test_support::compileForGpu;
using test_support::expectMatchesOnGpu;

Graph columnSums(int count, int64_t rows, int64_t columns) {
  GraphBuilder b("column_sums");
  Value x = b.input("x", DType::Float32, {rows, columns});
  for (int k = 1; k <= count; ++k)
    b.output(b.reduceSum(b.binary(OpKind::Mul, x, b.constant(Scalar::ofFloat(DType::Float32, k))), {0}));
  return b.build();
}

TEST(SharedMemoryGpu, SixtyColumnSumsInDynamicSharedMemoryMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (bool deterministic : {false, true}) {
    for (auto [rows, columns] : {std::pair<int64_t, int64_t>{8192, 768}, {37, 1000}}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(columns) + (deterministic ? " deterministic" : ""));
      const CompiledGraph c = compileForGpu(columnSums(60, rows, columns), deterministic);
      ASSERT_EQ(c.kernels.size(), 1u);
      EXPECT_TRUE(reductionArraysAreDynamic(c.kernels[0]));
      expectMatchesOnGpu(c, deterministic, GpuRunOptions{});
    }
  }
}

}  // namespace
}  // namespace polyred
