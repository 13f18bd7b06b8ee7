// Running generated code on the GPU. Takes a Program from codegen plus raw device
// pointers and a caller's CUDA stream; gives device discovery, loaded programs that
// launch without host synchronization or memsets (except setting the outputs a
// ScatterAdd adds into, KernelSpec::initFirst), device buffers for tools and tests,
// and the CUDA-graph timing of docs/method.md.
//
// Everything here starts on machines without a GPU: the driver is loaded on first use,
// and calls that need a GPU throw NoGpuError saying why there is none.
// Environment: POLYRED_DEVICE selects the device (default 0) when no context is current;
// the kernel cache's variables are listed in runtime/kernel_cache.h.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/kernel_spec.h"
#include "runtime/kernel_cache.h"

namespace polyred {

// True when a GPU is usable; otherwise false, with the reason in *whyNot (if given).
bool gpuAvailable(std::string* whyNot);

struct DeviceInfo {
  std::string name;
  int ccMajor = 0;
  int ccMinor = 0;
  int smCount = 0;
  int64_t l2Bytes = 0;
  int64_t totalMemory = 0;    // bytes
  std::string driverVersion;  // the CUDA version the driver supports, e.g. "13.0"
};

// The device polyred runs on (see cuda::selectedDevice). Throws NoGpuError with the
// reason when there is none.
DeviceInfo currentDevice();

// Device memory owned RAII-style (cuMemAlloc/cuMemFree) in the current context. When
// the device has too little free, the constructor throws cuda::DeviceOutOfMemory (an
// Error: exit 2) naming `what` ("input %x"), the size asked for and what is free.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes, std::string_view what = "a device buffer");
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  void* data() const { return reinterpret_cast<void*>(pointer_); }  // a CUdeviceptr
  size_t size() const { return bytes_; }
  // Copies of `bytes` bytes from `offset` on (within size()), finished when they return.
  // They run on the legacy default stream: synchronize streams that use the buffer first.
  void upload(const void* host, size_t bytes, size_t offset = 0);
  void download(void* host, size_t bytes, size_t offset = 0) const;

 private:
  void release() noexcept;
  CUdeviceptr pointer_ = 0;
  size_t bytes_ = 0;
  CUcontext context_ = nullptr;
};

// Compiles every kernel of `programs` for `device` into the kernel cache, registers
// fitted (runtime/register_fit.h), on all the host's cores at once, so that loading
// them one by one finds them compiled: the tuner loads each candidate in turn.
void warmKernelCache(std::span<const Program* const> programs, const DeviceInfo& device);

// A Program compiled (through the kernel cache) and loaded into the current context.
// Kernels are looked up by KernelSpec::name unmangled, so they must be extern "C".
//
// launch() enqueues the kernels in order on the caller's stream and returns at once.
// Workspaces (per kernel and stream) and temporaries (per stream) are allocated on the
// first launch on a stream, and workspaces are filled with their initPattern then, by a
// synchronous copy; later launches allocate, copy and memset nothing. Launch once on a
// stream before capturing it into a CUDA graph: the first launch cannot be captured.
// The CompiledProgram must outlive its launches and any graph captured from them.
class CompiledProgram {
 public:
  static CompiledProgram load(const Program& program, const DeviceInfo& device);
  ~CompiledProgram();
  CompiledProgram(CompiledProgram&&) noexcept;
  CompiledProgram& operator=(CompiledProgram&&) noexcept;

  // inputs[i] / outputs[i] are the device buffers of Graph::inputs[i] / outputs[i]
  // (CUdeviceptr cast to void*). An output written in place (aliasOfInput) is passed as
  // its input's pointer. Thread-safe across streams.
  // A symbolic program (Program::symbols) takes the values of its size symbols in
  // `sizes`, in that order: its kernels' grids follow them (LaunchConfig::gridAt) and a
  // kernel without rows is not launched. Others take none.
  void launch(std::span<void* const> inputs, std::span<void* const> outputs, CUstream stream,
              const std::vector<int64_t>& sizes = {});
  void launch(const std::vector<void*>& inputs, const std::vector<void*>& outputs, CUstream stream,
              const std::vector<int64_t>& sizes = {}) {
    launch(std::span<void* const>(inputs), std::span<void* const>(outputs), stream, sizes);
  }
  int kernelCount() const;

 private:
  struct State;
  explicit CompiledProgram(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Median time in microseconds of `enqueue`'s work, per docs/method.md: warms
// up (3 eager calls), captures one call into a CUDA graph, then per timed replay flushes
// the L2 (256 MiB cuMemsetD8Async), records an event, replays the graph and records an
// event. A null `stream` (the legacy default stream, which cannot be captured) means a
// private stream made for the measurement.
double timeMedianMicros(std::function<void(CUstream)> enqueue, int iterations = 50,
                        CUstream stream = nullptr);

// The launch floor of METHOD.md: timeMedianMicros of one empty kernel.
double measureLaunchFloor();

}  // namespace polyred
