// Device memory that runs short: a buffer, a run's tensors or a program's workspaces
// larger than the device has free give cuda::DeviceOutOfMemory (an Error: exit 2,
// POLYRED_BAD_INPUT) naming the size asked for and what the device has free -- never
// a crash or an internal error -- and the context stays usable: a small program runs
// and matches afterwards. Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_compile.h"
#include "runtime/cuda_driver.h"
#include "runtime/executor.h"
#include "test_stream.h"

namespace polyred {
namespace {

using Kind = KernelParam::Kind;
using test_support::compileForGpu;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A row sum of [rows, cols] float32 runs and matches on the GPU.
void expectASmallRunMatches() {
  GraphBuilder b("small");
  b.output(b.reduceSum(b.input("x", DType::Float32, {64, 300}), {1}));
  GpuRunOptions o;
  o.time = false;
  GpuRunReport r = runOnGpu(compileForGpu(b.build()), o);
  EXPECT_TRUE(r.ok) << r.check;
}

// More than the device has free now.
size_t beyondTheDevice() {
  cuda::ensureContext();
  return static_cast<size_t>(cuda::deviceMemory().freeBytes) + (size_t{4} << 30);
}

TEST(DeviceMemoryGpu, ABufferLargerThanTheDeviceIsBadInput) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const size_t bytes = beyondTheDevice();
  try {
    DeviceBuffer too_big(bytes, "input %x");
    FAIL() << "allocated " << bytes << " bytes";
  } catch (const cuda::DeviceOutOfMemory& e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "input %x needs " + formatBytes(static_cast<int64_t>(bytes)))) << message;
    EXPECT_TRUE(contains(message, "free of")) << message;
  }
  expectASmallRunMatches();
}

TEST(DeviceMemoryGpu, ARunWhoseTensorsDoNotFitIsRefusedBeforeAllocating) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  GraphBuilder b("inflated");
  b.output(b.reduceSum(b.input("x", DType::Float32, {int64_t{1} << 20, int64_t{1} << 20}), {1}));  // 4 TiB
  const CompiledGraph c = compileForGpu(b.build());
  GpuRunOptions o;
  o.time = false;
  try {
    runOnGpu(c, o);
    FAIL() << "a 4 TiB run was not refused";
  } catch (const Error& e) {  // DeviceOutOfMemory: bad input, not an internal error
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "needs 4.0 TiB of device memory")) << message;
    EXPECT_TRUE(contains(message, "free of")) << message;
  }
  expectASmallRunMatches();
}

TEST(DeviceMemoryGpu, ALaunchWhoseTemporaryDoesNotFitFreesWhatItTookAndFails) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  // One small workspace (allocated first), then a temporary beyond the device.
  KernelSpec kernel;
  kernel.name = "touch_temporary";
  kernel.source =
      "extern \"C\" __global__ void touch_temporary(float* out, unsigned* w, float* t) {\n"
      "  if (threadIdx.x == 0) { t[0] = 1.0f; out[0] = t[0] + w[0]; }\n}\n";
  kernel.launch.grid = {1, 1, 1};
  kernel.launch.block = {32, 1, 1};
  kernel.params = {{Kind::Output, 0}, {Kind::Workspace, 0}, {Kind::Temporary, 0}};
  kernel.workspaces = {{int64_t{64} << 20, {}}};
  Program program;
  program.kernels.push_back(kernel);
  program.temporaries = {{static_cast<int64_t>(beyondTheDevice())}};
  CompiledProgram compiled = CompiledProgram::load(program, currentDevice());
  DeviceBuffer out(sizeof(float));
  testing_gpu::Stream stream;
  const int64_t freeBefore = cuda::deviceMemory().freeBytes;
  const std::vector<void*> inputs, outputs{out.data()};
  try {
    compiled.launch(inputs, outputs, stream.get());
    FAIL() << "a temporary beyond the device was allocated";
  } catch (const cuda::DeviceOutOfMemory& e) {
    EXPECT_TRUE(contains(e.what(), "temporary 0 needs")) << e.what();
  }
  // The 64 MiB workspace allocated before the failure was given back.
  EXPECT_GT(cuda::deviceMemory().freeBytes, freeBefore - (int64_t{32} << 20));
  expectASmallRunMatches();
}

}  // namespace
}  // namespace polyred
