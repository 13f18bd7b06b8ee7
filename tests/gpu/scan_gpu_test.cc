// The scan kernel on the GPU (the CPU half: tests/scan_test.cc): the block scans and
// the look-back of device/polyred_scan.cuh across forms (rows with and without lanes,
// rows off the vector boundary, columns, middle axes), directions, combiners and
// dtypes (complex64 sums too), rows of one tile, of many, and over several blocks; outputs match the
// reference interpreter (per-dtype tolerances, integers exactly) and repeated launches
// are bitwise identical (every combination's order is fixed, the look-back's too).
// Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "frontend/builder.h"
#include "gpu_compile.h"

namespace polyred {
namespace {

Reduction byName(const std::string& name, DType t) {
  if (name == "sum") return Reduction::sum(t);
  if (name == "prod") return Reduction::prod(t);
  if (name == "max") return Reduction::max(t);
  return Reduction::min(t);
}

Graph scanGraph(const Shape& shape, DType t, const std::string& combiner, int64_t axis, bool exclusive, bool reverse) {
  GraphBuilder b("scan_" + combiner + "_" + toString(shape));
  Value x = b.input("x", t, shape);
  b.output(b.scan(x, byName(combiner, t), axis, exclusive, reverse));
  return b.build();
}

TEST(ScanGpu, ScansMatchTheReferenceAndRepeatBitwise) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  struct Case {
    Shape shape;
    int64_t axis;
    bool large;  // (the reference's time: fewer kinds)
  };
  // Rows of one tile and of many, off the vector boundary, a row per block and rows over
  // several blocks (the look-back: [2, 70001], [5000, 3] down its columns, [3, 9000, 2],
  // [1, 2^20], [4096, 1024] down its columns, [2, 100000, 3]).
  const std::vector<Case> cases = {
      {{1000}, 0, false},      {{37, 129}, 1, false},    {{3, 4099}, 1, false},    {{129, 3}, 0, false},
      {{4, 33, 5}, 1, false},  {{2, 3, 4, 5}, 2, false}, {{1}, 0, false},          {{8, 32, 1000}, 1, false},
      {{2, 70001}, 1, false},  {{5000, 3}, 0, false},    {{3, 9000, 2}, 1, false}, {{64, 4096}, 1, true},
      {{300, 50257}, 1, true}, {{5000, 64}, 0, true},    {{1, 1 << 20}, 1, true},  {{4096, 1000}, 1, true},
      {{2, 100000, 3}, 1, true}, {{4096, 1024}, 0, true}};
  const std::vector<std::pair<DType, std::string>> kinds = {
      {DType::Float32, "sum"}, {DType::Float16, "sum"}, {DType::Int32, "sum"}, {DType::Int8, "sum"},
      {DType::Float64, "sum"}, {DType::Int64, "max"},   {DType::BFloat16, "min"}, {DType::Float32, "max"},
      {DType::Complex64, "sum"}};
  int k = 0, failures = 0;
  for (const Case& c : cases)
    for (size_t kind = 0; kind < (c.large ? 3 : kinds.size()); ++kind) {
      const auto& [t, combiner] = kinds[kind];
      const bool exclusive = k % 3 == 1, reverse = k % 4 >= 2;
      ++k;
      const std::string name = toString(c.shape) + " axis " + std::to_string(c.axis) + " " +
                               std::string(dtypeName(t)) + " " + combiner + (exclusive ? " exclusive" : "") +
                               (reverse ? " reverse" : "");
      CompiledGraph compiled = test_support::compileForGpu(scanGraph(c.shape, t, combiner, c.axis, exclusive, reverse));
      GpuRunOptions run;
      run.time = false;
      run.seed = static_cast<uint64_t>(k);
      run.repeatChecks = 3;  // (the look-back's flags and counters reset by every launch)
      GpuRunReport r = runOnGpu(compiled, run);
      if ((!r.ok || !r.bitwiseRepeatable) && ++failures <= 20)
        ADD_FAILURE() << name << (r.bitwiseRepeatable ? "" : ": not bitwise repeatable") << "\n" << r.check;
    }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(k, 11 * 9 + 7 * 3);
}

// A scan whose result other ops read: the scan kernel materializes it, the kernels
// after it load it (a scaled copy, a row max).
TEST(ScanGpu, MaterializedScansFeedLaterKernels) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  GraphBuilder b("scan_read_by_others");
  Value p = b.input("p", DType::Float32, {64, 32000});
  Value c = b.scan(b.unary(OpKind::Exp, p), Reduction::sum(DType::Float32), 1, true);
  b.output(b.mul(c, b.constant(Scalar::ofFloat(DType::Float32, 0.5))));
  b.output(b.reduceMax(c, {1}));
  CompiledGraph compiled = test_support::compileForGpu(b.build());
  GpuRunOptions run;
  run.time = false;
  GpuRunReport r = runOnGpu(compiled, run);
  EXPECT_TRUE(r.ok) << r.check;
}

}  // namespace
}  // namespace polyred
