// Outputs written in place of a graph input (Assign; GraphBuilder::outputInto) by a
// reduction kernel: allowed where each element of the buffer is read and then
// overwritten by one thread -- the epilogue of a moving average, x = 0.9 x + 0.1 mean(y),
// at its own row -- and refused wherever another thread could read it mid-update. The
// GPU half: OpsGpu over tests/data/ops/moving_statistics_in_place.json.
#include <string>

#include <gtest/gtest.h>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "support/error.h"

namespace polyred {
namespace {

Value scaled(GraphBuilder& b, Value x, double k) { return b.mul(x, b.constant(Scalar::convert(k, DType::Float32))); }

TEST(InPlace, AMovingAverageIsUpdatedByItsReductionsEpilogue) {
  for (int axis : {0, 1}) {  // over the batch (a y-reduce) or along rows (an x-reduce)
    GraphBuilder b("moving_mean_" + std::to_string(axis));
    Value y = b.input("y", DType::Float32, {300, 40});
    Value m = b.input("m", DType::Float32, {axis == 0 ? 40 : 300});
    b.outputInto(b.add(scaled(b, m, 0.9), scaled(b, b.reduceSum(y, {axis}, false), 0.1)), m);
    CompiledGraph c = compileGraph(b.build(), CompileOptions{});
    EXPECT_EQ(c.program.kernels.size(), 1u) << axis;
    CpuCheckReport r = checkOnCpu(c, 5, 0, false);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

TEST(InPlace, AReductionReadingTheBufferElsewhereIsRefused) {
  // x - mean(x) written into x: every block reads x while others overwrite it.
  GraphBuilder b("centered_in_place");
  Value x = b.input("x", DType::Float32, {64, 5000});
  b.outputInto(b.sub(x, scaled(b, b.reduceSum(x, {1}, true), 1.0 / 5000)), x);
  try {
    compileGraph(b.build(), CompileOptions{});
    ADD_FAILURE() << "a reduction of a buffer written in place was compiled";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("reads a buffer it also writes in place"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace polyred
