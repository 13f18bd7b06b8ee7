// Outputs written in place of a graph input (Assign; GraphBuilder::outputInto).
// canon/in_place_hazards lets a kernel write straight into the input's buffer where
// each element is read, then overwritten, by the thread that writes it, and no later
// kernel reads the input; anything else is staged through a temporary copied in after
// the last launch. The CPU check runs in-place stores through to the input buffers as
// the GPU does (CpuExecOptions::writeThrough), so an unstaged hazard fails it: the
// tests below remove the staging and expect exactly that. The GPU half: OpsGpu over
// tests/data/ops/moving_statistics_in_place.json and in_place_hazards.json.
#include <string>

#include <gtest/gtest.h>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"

namespace polyred {
namespace {

Value scaled(GraphBuilder& b, Value x, double k) { return b.mul(x, b.constant(Scalar::convert(k, DType::Float32))); }

CompiledGraph compiled(GraphBuilder& b) { return compileGraph(b.build(), CompileOptions{}); }

void expectChecked(const CompiledGraph& c, const std::string& what) {
  CpuCheckReport r = checkOnCpu(c, 5, 0, false);
  EXPECT_TRUE(r.ok) << what << "\n" << r.message;
}

// The same kernels with every in-place output written straight into its input (the
// staging dropped from `c`): the CPU check must see the hazard the staging avoided.
void expectHazardWithoutStaging(CompiledGraph& c, const std::string& what) {
  ASSERT_FALSE(c.partition.staged.empty()) << what;
  c.partition.staged.clear();
  CpuCheckReport r = checkOnCpu(c, 5, 0, false);
  EXPECT_FALSE(r.ok) << what << ": unstaged, the in-place writes should change what the kernels read\n" << r.message;
}

TEST(InPlace, AMovingAverageIsUpdatedByItsReductionsEpilogue) {
  for (int axis : {0, 1}) {  // over the batch (a y-reduce) or along rows (an x-reduce)
    GraphBuilder b("moving_mean_" + std::to_string(axis));
    Value y = b.input("y", DType::Float32, {300, 40});
    Value m = b.input("m", DType::Float32, {axis == 0 ? 40 : 300});
    b.outputInto(b.add(scaled(b, m, 0.9), scaled(b, b.reduceSum(y, {axis}, false), 0.1)), m);
    CompiledGraph c = compiled(b);
    EXPECT_EQ(c.program.kernels.size(), 1u) << axis;
    EXPECT_TRUE(c.partition.staged.empty()) << c.partition.toString(c.graph);
    expectChecked(c, "moving mean " + std::to_string(axis));
  }
}

TEST(InPlace, RowsCenteredInPlaceWriteStraightIntoTheirBuffer) {
  // x - mean(x) into x: row-resident rows (each row's passes in one block, the last
  // pass reading each element where it writes it), and rows too long for one block (the
  // mean materialized by one kernel, the centering an elementwise kernel after it).
  for (int64_t row : {int64_t{3000}, int64_t{1} << 20}) {
    GraphBuilder b("centered_in_place_" + std::to_string(row));
    Value x = b.input("x", DType::Float32, {4, row});
    b.outputInto(b.sub(x, scaled(b, b.reduceSum(x, {1}, true), 1.0 / static_cast<double>(row))), x);
    CompiledGraph c = compiled(b);
    EXPECT_TRUE(c.partition.staged.empty()) << row << "\n" << c.partition.toString(c.graph);
    expectChecked(c, "centered rows of " + std::to_string(row));
  }
}

TEST(InPlace, AScaledBufferAndItsColumnSumsShareAKernel) {
  // x * 2 into x, stored from the column sum's own points: read, then overwritten there.
  GraphBuilder b("scale_and_sum");
  Value x = b.input("x", DType::Float32, {512, 256});
  b.outputInto(scaled(b, x, 2.0), x);
  b.output(b.reduceSum(x, {0}, false));
  CompiledGraph c = compiled(b);
  EXPECT_EQ(c.program.kernels.size(), 1u);
  EXPECT_TRUE(c.partition.staged.empty()) << c.partition.toString(c.graph);
  expectChecked(c, "scale and sum");
}

TEST(InPlace, ATransposeWrittenBackIntoItsInputIsStaged) {
  GraphBuilder b("transpose_in_place");
  Value x = b.input("x", DType::Float32, {96, 96});
  b.outputInto(b.transpose(x, {1, 0}), x);
  CompiledGraph c = compiled(b);
  ASSERT_EQ(c.partition.staged.size(), 1u);
  EXPECT_NE(c.partition.staged[0].why.find("other elements than it writes"), std::string::npos) << c.partition.staged[0].why;
  ASSERT_EQ(c.program.copiesAfter.size(), 1u);
  EXPECT_EQ(c.program.copiesAfter[0].bytes, 96 * 96 * 4);
  EXPECT_EQ(c.program.copiesAfter[0].temporary, c.partition.staged[0].temporary);
  for (const KernelParam& p : c.program.kernels.at(0).params)  // the runtime passes the temporary as out0
    EXPECT_NE(p.kind, KernelParam::Kind::Output);
  expectChecked(c, "transpose staged");
  expectHazardWithoutStaging(c, "transpose");
}

TEST(InPlace, AnUpdateThatALaterKernelStillReadsIsStaged) {
  // m = 0.9 m + 0.1 sum(y) into m, and m broadcast to [8, 1024] + 1: the second kernel
  // must read the old m.
  GraphBuilder b("update_then_read");
  Value y = b.input("y", DType::Float32, {4096, 1024});
  Value m = b.input("m", DType::Float32, {1024});
  b.outputInto(b.add(scaled(b, m, 0.9), scaled(b, b.reduceSum(y, {0}, false), 0.1)), m);
  b.output(b.add(b.broadcastTo(m, {8, 1024}), b.constant(Scalar::convert(1.0, DType::Float32))));
  CompiledGraph c = compiled(b);
  ASSERT_EQ(c.partition.staged.size(), 1u) << c.partition.toString(c.graph);
  EXPECT_NE(c.partition.staged[0].why.find("reads the input after"), std::string::npos) << c.partition.staged[0].why;
  expectChecked(c, "update then read, staged");
  expectHazardWithoutStaging(c, "update then read");
}

TEST(InPlace, AReductionIntoTheBufferItReadsIsStaged) {
  // s[i] = sum_j y[j, i] * s[i], the result written into s: the blocks of a column
  // still read s while its total is combined into it.
  GraphBuilder b("reduce_into_itself");
  Value y = b.input("y", DType::Float32, {2000, 64});
  Value s = b.input("s", DType::Float32, {64});
  b.outputInto(b.reduceSum(b.mul(y, b.broadcastTo(s, {2000, 64})), {0}, false), s);
  CompiledGraph c = compiled(b);
  ASSERT_EQ(c.partition.staged.size(), 1u) << c.partition.toString(c.graph);
  expectChecked(c, "reduction into its own input");
}

}  // namespace
}  // namespace polyred
