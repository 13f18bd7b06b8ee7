// GPU half of tests/math_ops_test.cc, tests/index_ops_test.cc, tests/layer_ops_test.cc
// and tests/scans_scatters_test.cc: the composite files under tests/data/ops (the math ops
// in f32/f16/i32/i8; Tile, Slice, StridedSlice forwards and backwards, Concat, Pad,
// Gather, GatherNd, Pool2D, TransData; the layer ops and LayerNorm; scans and scatters)
// run on the GPU and match the reference interpreter. Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "driver/gpu_run.h"
#include "frontend/composite_reader.h"
#include "gpu_compile.h"

namespace polyred {
namespace {

namespace fs = std::filesystem;

TEST(OpsGpu, CompositeFilesMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(POLYRED_SOURCE_DIR) / "tests" / "data" / "ops")) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().string());
    CompiledGraph compiled = test_support::compileForGpu(readCompositeFile(e.path().string()));
    GpuRunOptions run;
    run.time = false;
    GpuRunReport r = runOnGpu(compiled, run);
    EXPECT_TRUE(r.ok) << r.check;
    ++files;
  }
  EXPECT_GE(files, 5);
}

}  // namespace
}  // namespace polyred
