// The row stage of row-resident kernels (codegen/row_stage.h): on sm_90, rows read in
// several passes arrive in shared memory by bulk copies before the first pass -- by
// default where the last pass stores, with `stage=on` wherever a kernel can, never with
// `stage=off`, before sm_90, for columns or for blocks of several rows. The staged
// programs match the reference on the CPU (the CPU executor runs the loop program; the
// stage is a CUDA detail) and compile under NVRTC to bulk copies and mbarrier waits;
// tests/gpu/row_resident_gpu_test.cc runs them.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "codegen/row_stage.h"
#include "codegen/shared_memory.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "interp/reference.h"
#include "lowering_helpers.h"
#include "poly/row_access.h"
#include "row_resident_graphs.h"
#include "runtime/nvrtc.h"

namespace polyred {
namespace {

using test_support::compileWithKnobs;
using test_support::occurrences;

std::string baseOf(const std::string& offset, int64_t M, int64_t N) {
  std::optional<AstExpr> base = contiguousRowBase(offset, M, N);
  return base ? toC(*base) : "(not contiguous)";
}

TEST(RowAccess, RowsThatAreOneRunHaveABase) {
  EXPECT_EQ(baseOf("50257*i + j", 4096, 50257), "(50257 * i)");
  EXPECT_EQ(baseOf("j", 8, 100), "0");                          // every row the same (a broadcast)
  EXPECT_EQ(baseOf("100*(i mod 7) + j + 3", 14, 100), baseOf("100*(i mod 7) + j + 3", 14, 100));
  EXPECT_NE(baseOf("100*(i mod 7) + j + 3", 14, 100), "(not contiguous)");
  EXPECT_EQ(baseOf("768*j + i", 768, 100), "(not contiguous)");  // a column
  EXPECT_EQ(baseOf("2*j + 1000*i", 10, 100), "(not contiguous)");
  EXPECT_EQ(baseOf("1000*i + (j mod 50)", 10, 100), "(not contiguous)");
}

TEST(RowStage, SoftmaxRowsAreStagedWhereTheLastPassStores) {
  CompiledGraph c = compileWithKnobs(testgraphs::softmax(DType::Float16, {300, 20001}, 1), "");
  ASSERT_EQ(c.kernels.size(), 1u);
  const PolyKernel& k = c.kernels[0];
  ASSERT_EQ(k.plan.passes(), 3);
  const RowStage stage = planRowStage(k, 227 * 1024, staticSharedBytes(k), RowStageMode::Auto, 9);
  ASSERT_EQ(stage.regions.size(), 1u);
  EXPECT_EQ(stage.regions[0].chunks, 1);                 // 40002 bytes: one 64 KiB copy
  EXPECT_EQ(stage.regions[0].bytes % 128, 0);
  EXPECT_GE(stage.regions[0].bytes, 20001 * 2 + 16);     // the row and its alignment shift
  EXPECT_EQ(stage.blocksPerSM, 2048 / k.binding.threadsPerBlock());

  const KernelSpec& spec = c.program.kernels[0];
  EXPECT_EQ(spec.launch.dynamicSharedBytes, static_cast<uint32_t>(stage.bytes));
  EXPECT_EQ(occurrences(spec.source, "pr_stage_row("), 1u) << spec.source;
  // Pass 0 waits, and its maximum folds the row's half pairs (codegen/lane_values.h).
  EXPECT_EQ(occurrences(spec.source, "pr_load_pairs_staged<8, true>"), 1u) << spec.source;
  EXPECT_EQ(occurrences(spec.source, "pr_fold_max_pairs<8>(acc0, hv0);"), 1u) << spec.source;          // whole vectors
  EXPECT_EQ(occurrences(spec.source, "pr_fold_max_pairs<8>(acc0, hv0, lo, hi);"), 1u) << spec.source;  // the row's ends
  // Passes 1 and 2 (as floats, or as pairs where a half-pair op reads them).
  EXPECT_EQ(occurrences(spec.source, "pr_load_lanes_staged<8, false>") +
                occurrences(spec.source, "pr_load_pairs_staged<8, false>"),
            2u)
      << spec.source;
  EXPECT_EQ(occurrences(spec.source, "pr_stage_wait_all("), 1u) << spec.source;
  // x / its row's sum, only rounded to half: the product by the reciprocal taken before the loop
  EXPECT_EQ(occurrences(spec.source, "pr_div_coarse_lanes<8>("), 1u) << spec.source;
  EXPECT_EQ(occurrences(spec.source, "pr_invariant_divisor("), 1u) << spec.source;
  EXPECT_NE(spec.source.find("__launch_bounds__(" + std::to_string(k.binding.threadsPerBlock()) + ", " +
                             std::to_string(stage.blocksPerSM) + ")"),
            std::string::npos);
  test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/5);

  NvrtcResult r = compileCuda(spec.source, spec.name, 9, 0);
  EXPECT_NE(r.ptx.find("cp.async.bulk.shared::cluster.global"), std::string::npos);
  EXPECT_NE(r.ptx.find("mbarrier.try_wait.parity"), std::string::npos);
}

// A Min (Max) of float16 rows read from the stage folds whole vectors on half pairs and
// the row's ends lane by lane from them (codegen/lane_values.h, pairFoldSource); the
// same rows unstaged fold float lanes.
TEST(RowStage, HalfRowsFoldTheirExtremaOnPairs) {
  const Shape shape = {100, 20001};
  const std::vector<HostTensor> edges = {
      HostTensor::fromValues(DType::Float16, shape, testgraphs::extremumEdgeRows(shape[0], shape[1]))};
  for (const auto& [minimum, width] : std::vector<std::pair<bool, int>>{{true, 8}, {false, 8}, {true, 4}, {false, 2}}) {
    SCOPED_TRACE(std::string(minimum ? "min" : "max") + " of vectors of " + std::to_string(width));
    const Graph g = testgraphs::shiftByExtremum(DType::Float16, shape, minimum);
    const std::string V = std::to_string(width);
    const std::string fold = std::string(minimum ? "pr_fold_min_pairs<" : "pr_fold_max_pairs<") + V + ">(acc0, hv0";
    CompiledGraph staged = compileWithKnobs(g, "vector=" + V);
    ASSERT_EQ(staged.program.kernels.size(), 1u);
    ASSERT_EQ(staged.kernels[0].vector.width, width);
    const std::string& cuda = staged.program.kernels[0].source;
    EXPECT_EQ(occurrences(cuda, "pr_load_pairs_staged<" + V + ", true>"), 1u) << cuda;
    EXPECT_EQ(occurrences(cuda, fold + ");"), 1u) << cuda;
    EXPECT_EQ(occurrences(cuda, fold + ", lo, hi);"), 1u) << cuda;
    test_support::expectMatchesOnCpuAndCompiles(staged, /*seed=*/11);
    // The edge rows of the GPU test (RowResidentGpu.StagedHalfExtremaMatchBitForBit),
    // bit for bit through the CPU executor.
    test_support::expectIdenticalOutputs(test_support::lowered(staged, edges), evaluateReference(g, edges), "CPU");

    CompiledGraph unstaged = compileWithKnobs(g, "stage=off,vector=" + V);
    EXPECT_EQ(occurrences(unstaged.program.kernels[0].source, "_pairs<" + V + ">(acc0"), 0u)
        << unstaged.program.kernels[0].source;
  }
}

TEST(RowStage, ScalarLoadsMaskedRowsAndTwoInputs) {
  GraphBuilder b("softmax_of_a_sum");
  Value x = b.input("x", DType::Float32, {100, 9001}), y = b.input("y", DType::Float32, {100, 9001});
  Value s = b.add(x, y);
  Value e = b.unary(OpKind::Exp, b.sub(s, b.reduce(s, Reduction::max(DType::Float32), {1}, true)));
  b.output(b.binary(OpKind::Div, e, b.reduceSum(e, {1}, true)));
  for (const auto& [graph, knobs] : std::vector<std::pair<Graph, std::string>>{
           {testgraphs::softmax(DType::Float32, {300, 16385}, 1), "vector=1"},  // scalar loads
           {testgraphs::softmax(DType::BFloat16, {100, 30001}, 1), ""},        // masked lanes, odd rows
           {b.build(), ""}}) {                                              // two staged inputs
    SCOPED_TRACE(knobs + " " + graph.name);
    CompiledGraph c = compileWithKnobs(graph, knobs);
    ASSERT_EQ(c.program.kernels.size(), 1u);
    const std::string& cuda = c.program.kernels[0].source;
    EXPECT_GE(occurrences(cuda, "pr_stage_row("), 1u) << cuda;
    EXPECT_GE(occurrences(cuda, "_staged<"), 2u) << cuda;
    test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/7);
  }
}

TEST(RowStage, EveryRowOfAnITileLoopIsStagedAgain) {
  // items=1: a row of 2048 halves is one block of 256 threads; 70000 rows > grid.y.
  CompiledGraph c = compileWithKnobs(testgraphs::softmax(DType::Float16, {70000, 2048}, 1), "items=1");
  ASSERT_EQ(c.program.kernels.size(), 1u);
  const std::string& cuda = c.program.kernels[0].source;
  const size_t loop = cuda.find("+= 65535)"), stage = cuda.find("pr_stage_row(");
  ASSERT_NE(loop, std::string::npos) << cuda;
  EXPECT_GT(stage, loop) << "the row is staged inside the i-tile loop:\n" << cuda;
  test_support::expectNvrtcCompiles(c);
}

// A staged kernel's division by a row total takes the divisor apart once, before the
// loop of the pass that divides (codegen/loop_invariants.h); a float32 quotient that
// is stored as float32 divides to within an ulp (pr_div_invariant), one only rounded to
// 16 bits by the product with the reciprocal (pr_div_coarse, codegen/coarse_results.h).
TEST(RowStage, DivisionsByRowTotalsTakeTheDivisorApartBeforeTheLoop) {
  struct Case {
    DType in, out;
    const char* division;
  };
  for (const Case& c : {Case{DType::Float32, DType::Float32, "pr_div_invariant_lanes<"},
                        Case{DType::Float32, DType::Float16, "pr_div_coarse_lanes<"},
                        Case{DType::BFloat16, DType::BFloat16, "pr_div_coarse_lanes<"}}) {
    SCOPED_TRACE(std::string(dtypeName(c.in)) + " -> " + std::string(dtypeName(c.out)));
    // exp(x - max(x)) / (sum + 1) over rows, the quotient cast to `out`
    GraphBuilder b("normalized");
    Value x = b.input("x", c.in, {300, 12001});
    if (c.in != DType::Float32) x = b.cast(x, DType::Float32);
    Value e = b.unary(OpKind::Exp, b.sub(x, b.reduceMax(x, {1}, true)));
    Value total = b.add(b.reduceSum(e, {1}, true), b.constant(Scalar::ofFloat(DType::Float32, 1.0)));
    Value q = b.binary(OpKind::Div, e, total);
    b.output(c.out == DType::Float32 ? q : b.cast(q, c.out));
    const CompiledGraph compiled = compileWithKnobs(b.build(), "");
    ASSERT_EQ(compiled.program.kernels.size(), 1u);
    const std::string& source = compiled.program.kernels[0].source;
    ASSERT_NE(source.find("pr_stage_row("), std::string::npos) << source;
    EXPECT_EQ(occurrences(source, c.division), 1u) << source;
    const size_t divisor = source.find("const PrInvariantDivisor div");
    ASSERT_NE(divisor, std::string::npos) << source;
    EXPECT_EQ(occurrences(source, "pr_invariant_divisor("), 1u) << source;
    // declared after the sum's block reduction, before the last pass loop, which divides by it
    EXPECT_LT(source.rfind("block_allreduce_x"), divisor) << source;
    EXPECT_LT(source.find("for (", divisor), source.find(c.division)) << source;
    test_support::expectMatchesOnCpuAndCompiles(compiled, /*seed=*/3);
  }
}

TEST(RowStage, NotWhereItCannotOrNeedNot) {
  // The last pass only reads (logsumexp split into two passes): auto leaves its L2
  // re-read; on stages it.
  GraphBuilder b("lse");
  b.output(b.logSumExp(b.input("x", DType::Float16, {300, 20000}), {1}));
  const Graph lse = b.build();
  EXPECT_EQ(compileWithKnobs(lse, "lse=split").program.kernels[0].source.find("pr_stage_row("), std::string::npos);
  EXPECT_NE(compileWithKnobs(lse, "lse=split,stage=on").program.kernels[0].source.find("pr_stage_row("), std::string::npos);

  const Graph rows = testgraphs::softmax(DType::Float16, {300, 20001}, 1);
  CompiledGraph off = compileWithKnobs(rows, "stage=off");
  EXPECT_EQ(off.program.kernels[0].source.find("pr_stage_row("), std::string::npos);
  EXPECT_EQ(off.program.kernels[0].launch.dynamicSharedBytes, 0u);
  // Unstaged, a quotient only rounded to 16 bits is still the product by the reciprocal
  // taken once before the loop; a float32 quotient keeps the IEEE division.
  EXPECT_EQ(occurrences(off.program.kernels[0].source, "pr_div_coarse_lanes<"), 1u) << off.program.kernels[0].source;
  const CompiledGraph offFloat32 = compileWithKnobs(testgraphs::softmax(DType::Float32, {300, 20001}, 1), "stage=off");
  EXPECT_EQ(offFloat32.program.kernels[0].source.find("pr_invariant_divisor"), std::string::npos);
  test_support::expectMatchesOnCpuAndCompiles(off, /*seed=*/3);
  const CompiledGraph staged = compileWithKnobs(rows, "");
  const PolyKernel& k = staged.kernels[0];
  EXPECT_TRUE(planRowStage(k, 227 * 1024, staticSharedBytes(k), RowStageMode::Auto, 8).empty());  // before sm_90
  EXPECT_TRUE(planRowStage(k, 60 * 1024, staticSharedBytes(k), RowStageMode::Auto, 9).empty());   // over half
  EXPECT_FALSE(planRowStage(k, 60 * 1024, staticSharedBytes(k), RowStageMode::On, 9).empty());

  for (const Graph& g : {testgraphs::softmax(DType::Float32, {50, 40}, 0),         // columns
                         testgraphs::softmax(DType::Float16, {24576, 128}, 1)}) {  // rows share blocks
    CompiledGraph c = compileWithKnobs(g, "stage=on");
    EXPECT_EQ(c.program.kernels[0].source.find("pr_stage_row("), std::string::npos) << c.program.kernels[0].source;
  }
  // The row cache, when asked, is planned instead.
  EXPECT_EQ(compileWithKnobs(rows, "cache=on,stage=on").program.kernels[0].source.find("pr_stage_row("),
            std::string::npos);
}

TEST(RowStage, IsAKnob) {
  EXPECT_EQ(KernelConfig::parse("stage=on", "t").rowStage, RowStageMode::On);
  EXPECT_EQ(KernelConfig::parse("stage=off", "t").rowStage, RowStageMode::Off);
  EXPECT_EQ(KernelConfig::parse("stage=auto", "t").rowStage, RowStageMode::Auto);
  EXPECT_EQ(KernelConfig::parse("stage=off,threads=512", "t").toString(), "threads=512,items=auto,vector=auto,stage=off");
  EXPECT_THROW(KernelConfig::parse("stage=1", "t"), Error);
  EXPECT_TRUE(KernelConfig::parse("stage=auto", "t").isDefault());
}

}  // namespace
}  // namespace polyred
