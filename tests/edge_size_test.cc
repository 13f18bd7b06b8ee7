// Edge sizes of every canonical form (all-, x-, y-reduce, elementwise): extents 1, 2,
// 31, 32, 33, 1000, 4097 as kept and as reduced extent, and M x N combinations such as
// 1x33, 33x1, 31x1000, 1000x31, 4097x3. Each case is compiled for targets of 1, 8 and
// 132 SMs -- so that both the single-block and the multi-block (GX > 1, cross-block
// combine through the workspace) paths are generated -- and its lowered program is
// run on the CPU in normal and deterministic mode and compared with the reference.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"

namespace polyred {
namespace {

const std::vector<int64_t> kSizes = {1, 2, 31, 32, 33, 1000, 4097};
// (kept, reduced) extents; 33 x 4097 has enough rows to fill a small GPU without
// splitting them, and rows long enough to split on a large one.
const std::vector<std::pair<int64_t, int64_t>> kExtents = {{1, 33},   {33, 1},  {31, 1000}, {1000, 31}, {4097, 3},
                                                           {3, 4097}, {32, 32}, {33, 33},   {2, 1000},  {33, 4097}};
const int kSmCounts[] = {1, 8, 132};

// Two reductions over the same axes share one kernel (two accumulators, two
// workspaces): a float sum of products and an exact integer min.
Graph reductionGraph(const Shape& shape, const std::vector<int64_t>& axes) {
  GraphBuilder b("edge_reduce");
  Value x = b.input("x", DType::Float32, shape);
  Value y = b.input("y", DType::Float32, shape);
  Value z = b.input("z", DType::Int32, shape);
  b.output(b.reduceSum(b.mul(x, y), axes));
  b.output(b.reduce(z, Reduction::min(DType::Int32), axes));
  return b.build();
}

Graph elementwiseGraph(const Shape& shape) {
  GraphBuilder b("edge_elementwise");
  Value x = b.input("x", DType::Float32, shape);
  Value z = b.input("z", DType::Int8, shape);
  b.output(b.add(b.mul(x, x), b.cast(z, DType::Float32)));
  b.output(b.unary(OpKind::Abs, z));
  return b.build();
}

// Degenerate extents collapse the form: nothing kept is an all-reduce, nothing to
// reduce (N == 1) is an x-reduce with one element per row.
CanonicalForm expectedForm(CanonicalForm requested, int64_t M, int64_t N) {
  if (M == 1) return CanonicalForm::AllReduce;
  if (N == 1) return CanonicalForm::XReduce;
  return requested;
}

struct Coverage {
  int singleBlock = 0, multiBlock = 0;
};

// Compiles `g` for every target and mode: the kernel has the expected form and
// extents and the CPU run of its lowered program matches the reference.
void checkEverywhere(const Graph& g, CanonicalForm form, int64_t M, int64_t N, Coverage& coverage) {
  for (int sms : kSmCounts) {
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(g.name + " " + toString(g.tensor(g.inputs[0]).shape) + " on " + std::to_string(sms) + " SMs" +
                   (deterministic ? ", deterministic" : ""));
      CompileOptions options;
      options.target.smCount = sms;
      options.deterministic = deterministic;
      CompiledGraph c = compileGraph(g, options);
      ASSERT_EQ(c.kernels.size(), 1u) << c.partition.toString(g);
      const PolyKernel& k = c.kernels[0];
      EXPECT_EQ(k.plan.form, form) << formName(k.plan.form);
      EXPECT_EQ(k.plan.M, M);
      EXPECT_EQ(k.plan.N, N);
      ++(k.binding.GX > 1 ? coverage.multiBlock : coverage.singleBlock);
      CpuCheckReport r = checkOnCpu(c, /*seed=*/static_cast<uint64_t>(sms), /*maxPoints=*/0, deterministic);
      EXPECT_TRUE(r.ok) << k.binding.toString() << "\n" << r.message << c.partition.toString(g);
      EXPECT_FALSE(r.sampled);
    }
  }
}

// Every edge (kept, reduced) pair: the sizes against a small partner on either side,
// then the combinations.
std::vector<std::pair<int64_t, int64_t>> keptReducedPairs() {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t s : kSizes) {
    pairs.emplace_back(s, 5);
    pairs.emplace_back(5, s);
  }
  pairs.insert(pairs.end(), kExtents.begin(), kExtents.end());
  return pairs;
}

TEST(EdgeSize, AllReduce) {
  Coverage coverage;
  for (int64_t n : kSizes) checkEverywhere(reductionGraph({n}, {0}), CanonicalForm::AllReduce, 1, n, coverage);
  for (auto [a, b] : kExtents)
    checkEverywhere(reductionGraph({a, b}, {}), CanonicalForm::AllReduce, 1, a * b, coverage);
  EXPECT_GT(coverage.singleBlock, 0);
  EXPECT_GT(coverage.multiBlock, 0);
}

TEST(EdgeSize, XReduce) {
  Coverage coverage;
  for (auto [M, N] : keptReducedPairs())
    checkEverywhere(reductionGraph({M, N}, {1}), expectedForm(CanonicalForm::XReduce, M, N), M, N, coverage);
  EXPECT_GT(coverage.singleBlock, 0);
  EXPECT_GT(coverage.multiBlock, 0);
}

TEST(EdgeSize, YReduce) {
  Coverage coverage;
  for (auto [M, N] : keptReducedPairs())
    checkEverywhere(reductionGraph({N, M}, {0}), expectedForm(CanonicalForm::YReduce, M, N), M, N, coverage);
  EXPECT_GT(coverage.singleBlock, 0);
  EXPECT_GT(coverage.multiBlock, 0);
}

TEST(EdgeSize, Elementwise) {
  // GX > 1 here is a grid of several blocks; on 1 SM, 31000 elements also take the
  // grid-stride loop (more elements than threads).
  Coverage coverage;
  for (int64_t n : kSizes) checkEverywhere(elementwiseGraph({n}), CanonicalForm::Elementwise, n, 1, coverage);
  for (auto [a, b] : kExtents)
    checkEverywhere(elementwiseGraph({a, b}), CanonicalForm::Elementwise, a * b, 1, coverage);
  EXPECT_GT(coverage.singleBlock, 0);
  EXPECT_GT(coverage.multiBlock, 0);
}

TEST(EdgeSize, TargetDecidesBetweenSingleAndMultiBlock) {
  // 100 rows of 262145 (compiled only): on 1 SM the row tiles alone fill the GPU, one
  // block per row; on 132 SMs (1056 resident blocks) each row is split over blocks
  // (one block of 1024 threads would loop over 64 vectors).
  Graph g = reductionGraph({100, 262145}, {1});
  auto gridX = [&](int sms) {
    CompileOptions options;
    options.target.smCount = sms;
    return compileGraph(g, options).kernels.at(0).binding.GX;
  };
  EXPECT_EQ(gridX(1), 1);
  EXPECT_GT(gridX(132), 1);
}

}  // namespace
}  // namespace polyred
