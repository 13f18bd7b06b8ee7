// GPU tests of the runtime: handwritten Programs compiled through NVRTC and the kernel
// cache, launched on a stream, with temporaries, workspaces that must come back to
// their initial state, launches inside CUDA graph capture, and the timing helpers.
// Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cuda_driver.h"
#include "test_stream.h"
#include "runtime/executor.h"
#include "support/error.h"

namespace polyred {
namespace {

using cuda::check;
using cuda::driver;
using Kind = KernelParam::Kind;

constexpr int kElements = 1000;

using testing_gpu::Stream;

template <typename T>
DeviceBuffer toDevice(const std::vector<T>& values) {
  DeviceBuffer buffer(values.size() * sizeof(T));
  buffer.upload(values.data(), buffer.size());
  return buffer;
}

template <typename T>
std::vector<T> toHost(const DeviceBuffer& buffer) {
  std::vector<T> values(buffer.size() / sizeof(T));
  buffer.download(values.data(), buffer.size());
  return values;
}

std::vector<float> ramp() {
  std::vector<float> values(kElements);
  std::iota(values.begin(), values.end(), 0.5f);
  return values;
}

LaunchConfig coverElements() {
  LaunchConfig launch;
  launch.grid = {(kElements + 255) / 256, 1, 1};
  launch.block = {256, 1, 1};
  return launch;
}

KernelSpec elementwiseKernel(const std::string& name, const std::string& body,
                             std::vector<KernelParam> params) {
  KernelSpec kernel;
  kernel.name = name;
  kernel.source = "extern \"C\" __global__ void " + name +
                  "(const float* in, float* out) {\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  if (i < " +
                  std::to_string(kElements) + ") " + body + ";\n}\n";
  kernel.launch = coverElements();
  kernel.params = std::move(params);
  return kernel;
}

// out[0] = sum(in) over int32, by blocks that meet in a workspace: a counter that starts
// at 100 (the init pattern) and an accumulator that starts at 0. The last block to
// arrive writes the sum and puts both back, so the next launch needs no memset.
Program workspaceSumProgram() {
  KernelSpec kernel;
  kernel.name = "sum_with_workspace";
  kernel.source = R"(
extern "C" __global__ void sum_with_workspace(const int* in, int* out, unsigned* counter, int* accumulator) {
  __shared__ int blockSum;
  if (threadIdx.x == 0) blockSum = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 1000) atomicAdd(&blockSum, in[i]);
  __syncthreads();
  if (threadIdx.x != 0) return;
  atomicAdd(accumulator, blockSum);
  __threadfence();
  if (atomicAdd(counter, 1u) == 100u + gridDim.x - 1) {
    *out = atomicAdd(accumulator, 0);
    *accumulator = 0;
    *counter = 100u;
  }
}
)";
  kernel.launch = coverElements();
  kernel.params = {{Kind::Input, 0}, {Kind::Output, 0}, {Kind::Workspace, 0}, {Kind::Workspace, 1}};
  kernel.workspaces = {{4, {100, 0, 0, 0}}, {4, {}}};
  Program program;
  program.kernels.push_back(kernel);
  return program;
}

std::vector<int> intRamp() {
  std::vector<int> values(kElements);
  std::iota(values.begin(), values.end(), -300);
  return values;
}

TEST(RuntimeGpu, DescribesTheDevice) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  DeviceInfo device = currentDevice();
  EXPECT_FALSE(device.name.empty());
  EXPECT_GE(device.ccMajor, 5);
  EXPECT_GT(device.smCount, 0);
  EXPECT_GT(device.totalMemory, int64_t{1} << 30);
  EXPECT_FALSE(device.driverVersion.empty());
  std::cout << device.name << ", sm_" << device.ccMajor << device.ccMinor << ", " << device.smCount
            << " SMs, driver " << device.driverVersion << "\n";
}

TEST(RuntimeGpu, AddsOneToEveryElement) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  Program program;
  program.kernels.push_back(
      elementwiseKernel("add_one", "out[i] = in[i] + 1.0f", {{Kind::Input, 0}, {Kind::Output, 0}}));
  CompiledProgram compiled = CompiledProgram::load(program, currentDevice());
  EXPECT_EQ(compiled.kernelCount(), 1);
  DeviceBuffer in = toDevice(ramp());
  DeviceBuffer out(kElements * sizeof(float));
  Stream stream;
  compiled.launch({in.data()}, {out.data()}, stream.get());
  stream.synchronize();
  std::vector<float> result = toHost<float>(out);
  for (int i = 0; i < kElements; ++i) ASSERT_EQ(result[i], ramp()[i] + 1.0f) << i;
}

TEST(RuntimeGpu, LaunchesFromAThreadWithNoCurrentContext) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  Program program;
  program.kernels.push_back(elementwiseKernel("add_one", "out[i] = in[i] + 1.0f",
                                              {{Kind::Input, 0}, {Kind::Output, 0}}));
  CompiledProgram compiled = CompiledProgram::load(program, currentDevice());
  DeviceBuffer in = toDevice(ramp());
  DeviceBuffer out(kElements * sizeof(float));
  Stream stream;
  std::thread worker([&] { compiled.launch({in.data()}, {out.data()}, stream.get()); });
  worker.join();
  stream.synchronize();
  EXPECT_EQ(toHost<float>(out)[kElements - 1], ramp()[kElements - 1] + 1.0f);
}

TEST(RuntimeGpu, RunsKernelsInOrderThroughATemporary) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  Program program;
  program.temporaries = {{static_cast<int64_t>(kElements * sizeof(float))}};
  program.kernels.push_back(elementwiseKernel("plus_one", "out[i] = in[i] + 1.0f",
                                              {{Kind::Input, 0}, {Kind::Temporary, 0}}));
  program.kernels.push_back(elementwiseKernel("times_two", "out[i] = in[i] * 2.0f",
                                              {{Kind::Temporary, 0}, {Kind::Output, 0}}));
  CompiledProgram compiled = CompiledProgram::load(program, currentDevice());
  EXPECT_EQ(compiled.kernelCount(), 2);
  DeviceBuffer in = toDevice(ramp());
  DeviceBuffer out(kElements * sizeof(float));
  Stream stream;
  compiled.launch({in.data()}, {out.data()}, stream.get());
  stream.synchronize();
  std::vector<float> result = toHost<float>(out);
  for (int i = 0; i < kElements; ++i) ASSERT_EQ(result[i], (ramp()[i] + 1.0f) * 2.0f) << i;
}

TEST(RuntimeGpu, WorkspacesAreRestoredBetweenLaunches) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  CompiledProgram compiled = CompiledProgram::load(workspaceSumProgram(), currentDevice());
  std::vector<int> values = intRamp();
  const int expected = std::accumulate(values.begin(), values.end(), 0);
  DeviceBuffer in = toDevice(values);
  DeviceBuffer out(sizeof(int));
  Stream first, second;
  for (const Stream* stream : {&first, &first, &first, &second}) {
    out.upload(std::vector<int>{-1}.data(), sizeof(int));
    compiled.launch({in.data()}, {out.data()}, stream->get());
    stream->synchronize();
    EXPECT_EQ(toHost<int>(out)[0], expected);
  }
}

TEST(RuntimeGpu, LaunchesInsideGraphCaptureAfterWarmUp) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const cuda::Driver& api = driver();
  CompiledProgram compiled = CompiledProgram::load(workspaceSumProgram(), currentDevice());
  std::vector<int> values = intRamp();
  const int expected = std::accumulate(values.begin(), values.end(), 0);
  DeviceBuffer in = toDevice(values);
  DeviceBuffer out(sizeof(int));
  Stream stream;
  compiled.launch({in.data()}, {out.data()}, stream.get());  // warm-up: allocates workspaces
  stream.synchronize();

  check(api.cuStreamBeginCapture(stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL),
        "cuStreamBeginCapture");
  compiled.launch({in.data()}, {out.data()}, stream.get());
  CUgraph graph = nullptr;
  check(api.cuStreamEndCapture(stream.get(), &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  check(api.cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
  for (int replay = 0; replay < 3; ++replay) {
    out.upload(std::vector<int>{-1}.data(), sizeof(int));
    check(api.cuGraphLaunch(exec, stream.get()), "cuGraphLaunch");
    stream.synchronize();
    EXPECT_EQ(toHost<int>(out)[0], expected) << "replay " << replay;
  }
  api.cuGraphExecDestroy(exec);
  api.cuGraphDestroy(graph);
}

TEST(RuntimeGpu, FirstLaunchUnderCaptureIsRefused) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const cuda::Driver& api = driver();
  CompiledProgram compiled = CompiledProgram::load(workspaceSumProgram(), currentDevice());
  DeviceBuffer in = toDevice(intRamp());
  DeviceBuffer out(sizeof(int));
  Stream stream;
  check(api.cuStreamBeginCapture(stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL),
        "cuStreamBeginCapture");
  EXPECT_THROW(compiled.launch({in.data()}, {out.data()}, stream.get()), Error);
  CUgraph graph = nullptr;
  api.cuStreamEndCapture(stream.get(), &graph);
  if (graph) api.cuGraphDestroy(graph);
}

TEST(RuntimeGpu, RejectsTooFewPointers) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  CompiledProgram compiled = CompiledProgram::load(workspaceSumProgram(), currentDevice());
  Stream stream;
  EXPECT_THROW(compiled.launch(std::vector<void*>(), std::vector<void*>(), stream.get()), Error);
}

TEST(RuntimeGpu, OptsIntoLargeDynamicSharedMemory) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  KernelSpec kernel;
  kernel.name = "reverse_through_shared";
  kernel.source = R"(
extern "C" __global__ void reverse_through_shared(const float* in, float* out) {
  extern __shared__ float staged[];
  const int n = 16384;  // 64 KiB: above the 48 KiB available without opting in
  for (int i = threadIdx.x; i < n; i += blockDim.x) staged[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = staged[n - 1 - i];
}
)";
  kernel.launch.block = {256, 1, 1};
  kernel.launch.dynamicSharedBytes = 16384 * sizeof(float);
  kernel.params = {{Kind::Input, 0}, {Kind::Output, 0}};
  Program program;
  program.kernels.push_back(kernel);
  CompiledProgram compiled = CompiledProgram::load(program, currentDevice());
  std::vector<float> values(16384);
  std::iota(values.begin(), values.end(), 1.0f);
  DeviceBuffer in = toDevice(values);
  DeviceBuffer out(values.size() * sizeof(float));
  Stream stream;
  compiled.launch({in.data()}, {out.data()}, stream.get());
  stream.synchronize();
  std::vector<float> result = toHost<float>(out);
  EXPECT_EQ(result.front(), values.back());
  EXPECT_EQ(result.back(), values.front());
}

TEST(RuntimeGpu, TimesGraphReplays) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  Program program;
  program.kernels.push_back(
      elementwiseKernel("add_one", "out[i] = in[i] + 1.0f", {{Kind::Input, 0}, {Kind::Output, 0}}));
  CompiledProgram compiled = CompiledProgram::load(program, currentDevice());
  DeviceBuffer in = toDevice(ramp());
  DeviceBuffer out(kElements * sizeof(float));
  double micros =
      timeMedianMicros([&](CUstream s) { compiled.launch({in.data()}, {out.data()}, s); });
  double floor = measureLaunchFloor();
  std::cout << "add_one: " << micros << " us; launch floor: " << floor << " us\n";
  EXPECT_GT(floor, 0.0);
  EXPECT_LT(floor, 100.0);
  EXPECT_GT(micros, 0.0);
  EXPECT_LT(micros, 1000.0);
  std::vector<float> result = toHost<float>(out);
  EXPECT_EQ(result[7], ramp()[7] + 1.0f);
}

}  // namespace
}  // namespace polyred
