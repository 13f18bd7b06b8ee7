// Row-resident kernels (issue 3, partitioning of dependent reductions): when each row
// of a reduction is reduced inside one thread block, dependent reductions over the
// same axes (softmax's max then sum, layer norm's mean then variance) and the outputs
// over the whole row that read their totals run as passes of ONE kernel; longer rows
// fall back to the minimal kernel sequence through temporaries. Each case checks the
// partition (kernels, passes, stages), that the lowered program matches the reference
// interpreter on the CPU in both modes (the CPU executor also checks that every later
// pass reads totals only in threads that hold them), and that NVRTC compiles it.
#include <gtest/gtest.h>

#include <string>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "lowering_helpers.h"
#include "row_resident_graphs.h"
#include "runtime/nvrtc.h"

namespace polyred {
namespace {

CompiledGraph compile(const Graph& g, bool deterministic = false) {
  CompileOptions options;
  options.deterministic = deterministic;
  return compileGraph(g, options);
}

void expectCorrectAndCompiles(const Graph& g) {
  for (bool deterministic : {false, true}) {
    CompiledGraph c = compile(g, deterministic);
    CpuCheckReport r = checkOnCpu(c, /*seed=*/5, /*maxPoints=*/0, deterministic);
    EXPECT_TRUE(r.ok) << (deterministic ? "deterministic" : "normal") << " mode:\n"
                      << r.message << c.partition.toString(c.graph);
    EXPECT_FALSE(r.sampled);
    for (const KernelSpec& k : c.program.kernels) {
      try {
        EXPECT_FALSE(compileCuda(k.source, k.name + ".cu", 9, 0).cubin.empty());
      } catch (const CompileError& e) {
        ADD_FAILURE() << "NVRTC rejected " << k.name << ":\n" << e.log() << "\n" << k.source;
      }
    }
  }
}

using testgraphs::layerNorm;
using testgraphs::softmax;

// The first kernel's note in --dump=partition says why results went to temporaries.
void expectMaterializedBecause(const CompiledGraph& c, const std::string& reason) {
  const std::string& why = c.partition.kernels.at(0).why;
  EXPECT_NE(why.find("result(s) materialized for later kernels: " + reason), std::string::npos) << why;
}

const KernelPlan& onlyKernel(const CompiledGraph& c) {
  EXPECT_EQ(c.partition.kernels.size(), 1u) << c.partition.toString(c.graph);
  return c.partition.kernels.at(0);
}

TEST(RowResident, SoftmaxWithShortRowsIsOneKernelOfThreePasses) {
  Graph g = softmax(DType::Float16, {300, 1000}, 1);
  CompiledGraph c = compile(g);
  const KernelPlan& k = onlyKernel(c);
  EXPECT_EQ(k.form, CanonicalForm::XReduce);
  ASSERT_EQ(k.reductions.size(), 2u);
  EXPECT_EQ(k.reductions[0].stage, 0);  // the max
  EXPECT_EQ(k.reductions[1].stage, 1);  // the sum reads the max
  ASSERT_EQ(k.stores.size(), 1u);
  EXPECT_EQ(k.stores[0].pass, 2);  // the quotient reads the sum
  EXPECT_EQ(k.passes(), 3);
  EXPECT_NE(k.why.find("row-resident"), std::string::npos) << k.why;
  const std::string& cuda = c.program.kernels[0].source;
  EXPECT_NE(cuda.find("block_allreduce_x"), std::string::npos) << cuda;
  EXPECT_EQ(c.kernels[0].binding.GX, 1);
  expectCorrectAndCompiles(g);
}

TEST(RowResident, LayerNormIsOneKernelWithItsStatisticsAsEpilogue) {
  Graph g = layerNorm(DType::Float16, {64, 768});
  CompiledGraph c = compile(g);
  const KernelPlan& k = onlyKernel(c);
  EXPECT_EQ(k.passes(), 3);
  EXPECT_EQ(k.epilogueStores.size(), 2u);  // mean and variance, once per row
  expectCorrectAndCompiles(g);
}

// What a pass computes from earlier totals alone (layer norm's 1/sqrt(var + eps), the
// mean) is computed once before the pass loop, in a scope of its own, and the loop's
// lanes copy it (codegen/loop_invariants.h); two passes hoisting the same value do not
// collide.
TEST(RowResident, ValuesOfTotalsAreComputedBeforeTheirPassLoop) {
  for (DType t : {DType::Float32, DType::Float16}) {
    SCOPED_TRACE(dtypeName(t));
    Graph g = layerNorm(t, {64, 768});
    CompiledGraph c = compile(g);
    ASSERT_EQ(c.program.kernels.size(), 1u);
    const std::string& cuda = c.program.kernels[0].source;
    const size_t root = cuda.find("sqrtf(");
    ASSERT_NE(root, std::string::npos) << cuda;
    EXPECT_EQ(root, cuda.rfind("sqrtf(")) << cuda;  // once, not in the loop
    const size_t line = cuda.rfind('\n', root) + 1;
    EXPECT_EQ(cuda.compare(cuda.find_first_not_of(' ', line), 15, "const float inv"), 0) << cuda.substr(line, 80);
    EXPECT_LT(root, cuda.rfind("for (")) << cuda;  // before the last pass's loop
    EXPECT_GE(test_support::occurrences(cuda, " = inv"), 2u) << cuda;  // lanes or scalars copy the hoisted values
    expectCorrectAndCompiles(g);
  }
}

TEST(RowResident, YReduceAndAllReduceRowsAlsoRunAsPasses) {
  // Softmax over the outer axis (a y-reduce: 40 columns of 50) and over a whole vector.
  for (auto [shape, axis, form] : {std::tuple{Shape{50, 40}, int64_t{0}, CanonicalForm::YReduce},
                                   std::tuple{Shape{1000}, int64_t{0}, CanonicalForm::AllReduce}}) {
    SCOPED_TRACE(toString(shape));
    Graph g = softmax(DType::Float32, shape, axis);
    CompiledGraph c = compile(g);
    const KernelPlan& k = onlyKernel(c);
    EXPECT_EQ(k.form, form);
    EXPECT_EQ(k.passes(), 3);
    expectCorrectAndCompiles(g);
  }
}

TEST(RowResident, BlocksLoopOverMoreRowTilesThanTheGridHas) {
  // 17M rows of 2: more row tiles than grid.y allows, so each block runs several
  // tiles, every pass and block reduction included (checked on sampled blocks).
  Graph g = softmax(DType::Float32, {17000000, 2}, 1);
  CompiledGraph c = compile(g);
  EXPECT_EQ(onlyKernel(c).passes(), 3);
  EXPECT_GT(c.kernels[0].binding.tiles, c.kernels[0].binding.GY);
  CpuCheckReport r = checkOnCpu(c, /*seed=*/5, /*maxPoints=*/200000, false);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(RowResident, ManyLongRowsStayOneKernelOfOneBlockPerRow) {
  // Rows longer than a block covers (in vectors of 8 halves: 3126 > 1024), but enough
  // of them (2113 rows, 2 waves of one block per row on 132 SMs) that splitting rows
  // gains nothing: one kernel whose blocks loop over their row in every pass. Both
  // forms: rows (x, masked lanes) and columns (y).
  for (auto [shape, axis, form] : {std::tuple{Shape{2113, 25001}, int64_t{1}, CanonicalForm::XReduce},
                                   std::tuple{Shape{70, 67600}, int64_t{0}, CanonicalForm::YReduce}}) {
    SCOPED_TRACE(toString(shape));
    Graph g = softmax(DType::Float16, shape, axis);
    CompiledGraph c = compile(g);
    const KernelPlan& k = onlyKernel(c);
    EXPECT_EQ(k.form, form);
    EXPECT_EQ(k.passes(), 3);
    EXPECT_EQ(c.kernels[0].binding.GX, 1);
    // So that re-read rows stay in the L2 (2113 rows would take a wave more in blocks of
    // 512 threads: LongRowsTakeHalfBlocksWhileTheirRowsFitTheL2).
    EXPECT_EQ(c.kernels[0].binding.threadsPerBlock(), 1024);
    CpuCheckReport r = checkOnCpu(c, /*seed=*/5, /*maxPoints=*/100000, false);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

// Rows too long for one default block stay one row per block of 1024 threads from a
// quarter wave of those blocks (264 resident on 132 SMs, so 66 rows); 65 rows split
// into three kernels. Counted in two waves of 256-thread blocks, rows had needed 2112
// (H100, softmax f32 [2048,16384]: three kernels 192.2 us, one 97.1 us; 132 rows of
// 32768: 29.6 -> 18.1 us; 16 rows of 100000 lose: docs/results/notes-2026-11-26.md).
// Columns (y-reduces) keep two waves of default blocks.
TEST(RowResident, LongRowsStayWholeFromAQuarterWaveOfOneRowBlocks) {
  const Target target;
  const int64_t quarterWave = static_cast<int64_t>(target.smCount) * (2048 / 1024) / 4;
  Graph whole = softmax(DType::Float32, {quarterWave, 16384}, 1);
  CompiledGraph c = compile(whole);
  EXPECT_EQ(onlyKernel(c).passes(), 3);
  EXPECT_EQ(c.kernels[0].binding.threadsPerBlock(), 1024);
  EXPECT_EQ(c.kernels[0].binding.BY, 1);
  CpuCheckReport r = checkOnCpu(c, /*seed=*/5, /*maxPoints=*/100000, false);
  EXPECT_TRUE(r.ok) << r.message;
  CompiledGraph split = compile(softmax(DType::Float32, {quarterWave - 1, 16384}, 1));
  EXPECT_EQ(split.partition.kernels.size(), 3u) << split.partition.toString(split.graph);
  // Columns keep counting in default blocks: 1024 tiles of 32 long columns are not the
  // 2112 that two waves of those need (one column-resident kernel measured slower).
  CompiledGraph columns = compile(softmax(DType::Float32, {4096, 32768}, 0));
  EXPECT_EQ(columns.partition.kernels.size(), 3u) << columns.partition.toString(columns.graph);
}

// A row-resident kernel takes 4 items per thread along the row (poly/binding.cc, the
// launch policy's rowResidentItems): a softmax over rows of 30522 halves (3816 vectors) gets one row
// per block of 1024 threads, where 8 items would give blocks of two rows of 512; the
// `items` knob reaches row-resident kernels and gives that shape back.
TEST(RowResident, LongRowsTakeOneRowPerBlockAndTheItemsKnob) {
  Graph g = softmax(DType::Float16, {2113, 30522}, 1);
  CompiledGraph automatic = compile(g);
  ASSERT_EQ(onlyKernel(automatic).passes(), 3);
  EXPECT_EQ(automatic.kernels[0].binding.BX, 1024);
  EXPECT_EQ(automatic.kernels[0].binding.BY, 1);
  CompileOptions eight;
  eight.config = KernelConfig::parse("items=8", "test");
  CompiledGraph tuned = compileGraph(g, eight);
  ASSERT_EQ(tuned.kernels.size(), 1u);
  EXPECT_EQ(tuned.kernels[0].binding.BX, 512);
  EXPECT_EQ(tuned.kernels[0].binding.BY, 2);
  for (const CompiledGraph* c : {&automatic, &tuned}) {
    CpuCheckReport r = checkOnCpu(*c, /*seed=*/5, /*maxPoints=*/100000, false);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

// Long rows take blocks of 512 threads instead of 1024 where the rows those blocks keep
// resident (4 blocks on each of 132 SMs: 528 rows) fit the L2, make a wave and take no
// more waves than blocks of 1024 (the launch policy's longRowHalfThreads); the bytes
// counted per row are those of the loads that vary along the row and across rows, not
// a weight every row shares. A tuned variant that asks for `items` keeps its shape.
TEST(RowResident, LongRowsTakeHalfBlocksWhileTheirRowsFitTheL2) {
  auto threadsOf = [](const Graph& g, int64_t l2Bytes, const std::string& knobs = "") {
    CompileOptions options;
    options.target.l2Bytes = l2Bytes;
    if (!knobs.empty()) options.config = KernelConfig::parse(knobs, "test");
    CompiledGraph c = compileGraph(g, options);
    EXPECT_EQ(c.kernels.size(), 1u);
    EXPECT_GT(onlyKernel(c).passes(), 1);
    return c.kernels.at(0).binding.threadsPerBlock();
  };
  const int64_t MB = int64_t{1} << 20;
  // f16 rows of 25001: 528 x 50 KB = 25 MB; 4224 rows are 8 waves of 528 (16 of 264).
  const Graph halves = softmax(DType::Float16, {4224, 25001}, 1);
  EXPECT_EQ(threadsOf(halves, 50 * MB), 512);
  EXPECT_EQ(threadsOf(halves, 25 * MB), 1024);
  EXPECT_EQ(threadsOf(halves, 50 * MB, "items=8"), 1024);
  // 2113 rows: 9 waves of 264 blocks of 1024, 5 of 528 blocks of 512 (the time of 10).
  EXPECT_EQ(threadsOf(softmax(DType::Float16, {2113, 25001}, 1), 50 * MB), 1024);
  // Fewer rows than 528: blocks of 512 would not make a wave.
  EXPECT_EQ(threadsOf(softmax(DType::Float16, {400, 25001}, 1), 50 * MB), 1024);
  // f32 rows of 40000: 528 x 160 KB = 84 MB.
  EXPECT_EQ(threadsOf(softmax(DType::Float32, {4224, 40000}, 1), 50 * MB), 1024);
  // x / sum(x * w) over rows of f16 x with an f32 weight w that every row shares: 2
  // bytes per element count (25 MB resident, 512 threads), not 6 (76 MB).
  GraphBuilder b("weighted_rows");
  Value x = b.cast(b.input("x", DType::Float16, {4224, 25001}), DType::Float32);
  Value w = b.input("w", DType::Float32, {25001});
  Value xw = b.mul(x, w);
  b.output(b.binary(OpKind::Div, xw, b.reduceSum(xw, {1}, true)));
  const Graph weighted = b.build();
  EXPECT_EQ(threadsOf(weighted, 50 * MB), 512);
  EXPECT_EQ(threadsOf(weighted, 40 * MB), 512);
  EXPECT_EQ(threadsOf(weighted, 20 * MB), 1024);
  for (const Graph* g : {&halves, &weighted}) {
    CpuCheckReport r = checkOnCpu(compile(*g), /*seed=*/5, /*maxPoints=*/100000, false);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

TEST(RowResident, LongRowsFallBackToAKernelSequence) {
  // 100000 elements per row need several blocks per row and 4 rows cannot fill the
  // GPU with one block each: max, sum and the quotient become three kernels linked
  // by temporaries.
  Graph g = softmax(DType::Float32, {4, 100000}, 1);
  CompiledGraph c = compile(g);
  EXPECT_EQ(c.partition.kernels.size(), 3u) << c.partition.toString(c.graph);
  EXPECT_EQ(c.partition.temporaries.size(), 2u);
  for (const KernelPlan& k : c.partition.kernels) EXPECT_EQ(k.passes(), 1);
  expectMaterializedBecause(c, "its rows span several blocks");
  expectCorrectAndCompiles(g);
}

TEST(RowResident, ReductionReadingTotalsAtOtherRowsSplitsByLevel) {
  // s[i] = sum_j x[i, j]; t[i] = sum_j x[i, j] * s[j]: the second reduction reads the
  // first's totals at other rows (a transposed broadcast), which no pass can provide.
  GraphBuilder b("cross_rows");
  Value x = b.input("x", DType::Float32, {64, 64});
  Value s = b.reduceSum(x, {1});  // [64]
  b.output(b.reduceSum(b.mul(x, s), {1}));  // s broadcast along the rows: s[j]
  Graph g = b.build();
  CompiledGraph c = compile(g);
  EXPECT_EQ(c.partition.kernels.size(), 2u) << c.partition.toString(c.graph);
  EXPECT_EQ(c.partition.temporaries.size(), 1u);
  expectMaterializedBecause(c, "read at other rows than its own");
  expectCorrectAndCompiles(g);
}

TEST(RowResident, ReductionOverOtherAxesReadsAMaterializedResult) {
  // t[j] = sum_i x[i, j] * s[i] with s[i] = sum_j x[i, j]: the second reduction is over
  // the other axis (a y-reduce), a kernel of its own that loads s from a temporary.
  GraphBuilder b("other_axes");
  Value x = b.input("x", DType::Float32, {64, 100});
  Value s = b.reduceSum(x, {1}, /*keepDims=*/true);  // [64, 1]
  b.output(b.reduceSum(b.mul(x, s), {0}));          // [100]
  Graph g = b.build();
  CompiledGraph c = compile(g);
  ASSERT_EQ(c.partition.kernels.size(), 2u) << c.partition.toString(c.graph);
  expectMaterializedBecause(c, "read by a reduction over other axes");
  expectCorrectAndCompiles(g);
}

TEST(RowResident, OutputReadingTotalsAtOtherRowsMovesToALaterKernel) {
  // y[i, j] = x[i, j] / s[j] over the anchor shape: the reduction kernel materializes s
  // and an elementwise kernel computes y; the row-resident output z = x - s[i] stays.
  GraphBuilder b("cross_rows_output");
  Value x = b.input("x", DType::Float32, {64, 64});
  Value s = b.reduceSum(x, {1});
  b.output(b.binary(OpKind::Div, x, s));
  b.output(b.sub(x, b.reshape(s, {64, 1})));
  Graph g = b.build();
  CompiledGraph c = compile(g);
  ASSERT_EQ(c.partition.kernels.size(), 2u) << c.partition.toString(c.graph);
  EXPECT_EQ(c.partition.kernels[0].stores.size(), 1u);
  EXPECT_EQ(c.partition.kernels[1].form, CanonicalForm::Elementwise);
  expectCorrectAndCompiles(g);
}

}  // namespace
}  // namespace polyred
