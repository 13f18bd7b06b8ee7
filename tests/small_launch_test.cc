// The binding policy's rule for launches too small to fill the GPU (poly/binding.cc,
// smallLaunchConfig): single-pass row and whole-tensor reductions of little work take
// fewer items per thread, rows keep one block of up to 512 threads, small all-reduces
// take blocks of 64 so that every SM gets one; large reductions and configs that set
// `items` keep the analytic shape. Each case is also checked against the reference.
#include <gtest/gtest.h>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"

namespace polyred {
namespace {

// exp(x) summed over the last axis of an f32 [rows, cols] input, and x * 2 stored
// beside it (an elementwise output over the reduced shape, as in the corpus's files).
Graph rowSums(int64_t rows, int64_t cols) {
  GraphBuilder b("row_sums");
  Value x = b.input("x", DType::Float32, {rows, cols});
  b.output(b.reduceSum(b.unary(OpKind::Exp, x), {1}));
  b.output(b.mul(x, b.constant(Scalar::ofFloat(DType::Float32, 2.0))));
  return b.build();
}

Graph wholeSum(int64_t n) {
  GraphBuilder b("whole_sum");
  b.output(b.reduceSum(b.input("x", DType::Float32, {n}), {0}));
  return b.build();
}

const KernelSpec& onlyKernel(const CompiledGraph& c) {
  EXPECT_EQ(c.program.kernels.size(), 1u);
  return c.program.kernels.front();
}

CompiledGraph compiledAndChecked(const Graph& g, const char* knobs = "") {
  CompileOptions o;
  o.config = KernelConfig::parse(knobs, "test");
  CompiledGraph c = compileGraph(g, o);
  const CpuCheckReport r = checkOnCpu(c, 3, 1 << 20, false);
  EXPECT_TRUE(r.ok) << g.name << " " << knobs << ": " << r.message;
  return c;
}

TEST(SmallLaunch, ShortRowsTakeOneBlockOfUpTo512ThreadsEach) {
  // [64,1000] (vgg16's cross-entropy rows): 64,000 elements, under a quarter of one
  // wave of resident threads: 2 items a thread, 512 threads on a row, a block per row.
  const CompiledGraph compiled = compiledAndChecked(rowSums(64, 1000), "vector=1");
  const KernelSpec& k = onlyKernel(compiled);
  EXPECT_EQ(k.launch.block[0], 512u);
  EXPECT_EQ(k.launch.block[1], 1u);
  EXPECT_EQ(k.launch.grid[0], 1u) << "a row stays in one block";
  EXPECT_EQ(k.launch.grid[1], 64u);
}

TEST(SmallLaunch, RowsThatOneDefaultBlockCoversAreNeverSplit) {
  // [20,2000]: 2 items would need 1000 threads on a row; 4 items fit 512.
  const CompiledGraph fits = compiledAndChecked(rowSums(20, 2000), "vector=1");
  EXPECT_EQ(onlyKernel(fits).launch.block[0], 512u);
  EXPECT_EQ(onlyKernel(fits).launch.grid[0], 1u);
  // [20,4000] with blocks of 512 asked for: one default block covers a row (8 items),
  // 4 items would need 1000 threads, so the rule leaves it alone rather than split it.
  const CompiledGraph kept = compiledAndChecked(rowSums(20, 4000), "vector=1,threads=512");
  EXPECT_EQ(onlyKernel(kept).launch.block[0], 512u);
  EXPECT_EQ(onlyKernel(kept).launch.grid[0], 1u);
}

TEST(SmallLaunch, RowsTheDefaultSplitsSplitMoreFinely) {
  // [3,16448] (tests/data/ops' selects): the default's 256 threads x 8 items split each
  // row anyway; 2 items on 512 threads give more blocks per row.
  const CompiledGraph before = compiledAndChecked(rowSums(3, 16448), "vector=1,items=8");
  const CompiledGraph after = compiledAndChecked(rowSums(3, 16448), "vector=1");
  EXPECT_GT(onlyKernel(before).launch.grid[0], 1u);
  EXPECT_GT(onlyKernel(after).launch.grid[0] * onlyKernel(after).launch.block[0],
            onlyKernel(before).launch.grid[0] * onlyKernel(before).launch.block[0]);
}

TEST(SmallLaunch, SetItemsKeepTheConfiguredShape) {
  // The same rows with the default's 8 items set explicitly: 128 threads on a row, two
  // rows a block (the shape before the rule).
  const CompiledGraph compiled = compiledAndChecked(rowSums(64, 1000), "vector=1,items=8");
  const KernelSpec& k = onlyKernel(compiled);
  EXPECT_EQ(k.launch.block[0], 128u);
  EXPECT_EQ(k.launch.block[1], 2u);
  EXPECT_EQ(k.launch.grid[1], 32u);
}

TEST(SmallLaunch, SmallAllReducesGiveEverySmABlock) {
  // 16,000 elements (wide_deep's loss sums): blocks of 64 threads, 2 items each.
  const CompiledGraph compiled = compiledAndChecked(wholeSum(16000), "vector=1");
  const KernelSpec& k = onlyKernel(compiled);
  EXPECT_EQ(k.launch.block[0] * k.launch.block[1], 64u);
  EXPECT_EQ(k.launch.grid[0], 125u);
}

TEST(SmallLaunch, LargeReductionsKeepTheDefaultShape) {
  // [8192,768] f32 rows: 1.5M vectors of 4, more than four waves of resident threads.
  const CompiledGraph rowsCompiled = compiledAndChecked(rowSums(8192, 768));
  const KernelSpec& rows = onlyKernel(rowsCompiled);
  EXPECT_EQ(rows.launch.block[0] * rows.launch.block[1], 256u);
  EXPECT_EQ(rows.launch.block[0], 32u) << "8 items of 4 lanes: a warp covers a row of 192 vectors";
  // 2^22 elements summed whole: 4 items (the large all-reduce rule), 256 threads.
  const CompiledGraph wholeCompiled = compiledAndChecked(wholeSum(int64_t{1} << 22), "vector=1");
  const KernelSpec& whole = onlyKernel(wholeCompiled);
  EXPECT_EQ(whole.launch.block[0], 256u);
}

TEST(SmallLaunch, MediumRowsTakeFourItems) {
  // [2048,768] f32 (bert's layer-norm rows): 393,216 vectors, between one and four
  // waves: 4 items, 64 threads on a row, four rows a block.
  const CompiledGraph compiled = compiledAndChecked(rowSums(2048, 768));
  const KernelSpec& k = onlyKernel(compiled);
  EXPECT_EQ(k.launch.block[0], 64u);
  EXPECT_EQ(k.launch.block[1], 4u);
  EXPECT_EQ(k.launch.grid[1], 512u);
}

}  // namespace
}  // namespace polyred
