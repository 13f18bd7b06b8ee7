// Device discovery, DeviceBuffer, CompiledProgram (load through the kernel cache, lazy
// per-stream workspaces and temporaries, launch) and the CUDA-graph timing helpers.
#include "runtime/executor.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "runtime/cuda_driver.h"
#include "runtime/kernel_cache.h"
#include "runtime/register_fit.h"
#include "support/budget.h"
#include "support/error.h"

namespace polyred {
namespace {

using cuda::check;
using cuda::driver;

constexpr size_t kL2FlushBytes = size_t{256} << 20;  // METHOD.md: write 256 MiB
constexpr int kWarmupCalls = 3;
// Kernels get this much dynamic shared memory without opting in (CUDA's fixed limit).
constexpr uint32_t kDefaultDynamicSharedLimit = 48 * 1024;

CUdeviceptr devicePointer(void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

struct ModuleUnloader {
  void operator()(CUmodule module) const { driver().cuModuleUnload(module); }
};
struct StreamDestroyer {
  void operator()(CUstream stream) const { driver().cuStreamDestroy(stream); }
};
struct EventDestroyer {
  void operator()(CUevent event) const { driver().cuEventDestroy(event); }
};
struct GraphDestroyer {
  void operator()(CUgraph graph) const { driver().cuGraphDestroy(graph); }
};
struct GraphExecDestroyer {
  void operator()(CUgraphExec exec) const { driver().cuGraphExecDestroy(exec); }
};
using OwnedModule = std::unique_ptr<CUmod_st, ModuleUnloader>;
using OwnedStream = std::unique_ptr<CUstream_st, StreamDestroyer>;
using OwnedEvent = std::unique_ptr<CUevent_st, EventDestroyer>;
using OwnedGraph = std::unique_ptr<CUgraph_st, GraphDestroyer>;
using OwnedGraphExec = std::unique_ptr<CUgraphExec_st, GraphExecDestroyer>;

int deviceAttribute(CUdevice device, CUdevice_attribute attribute) {
  int value = 0;
  check(driver().cuDeviceGetAttribute(&value, attribute, device), "cuDeviceGetAttribute");
  return value;
}

// The kernel module's version ("580.159.04"), which the driver API does not report: the
// first dotted number in /proc's banner. Empty where /proc does not show it.
std::string kernelModuleVersion() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string word;
  while (in >> word)
    if (word.find('.') != std::string::npos &&
        word.find_first_not_of("0123456789.") == std::string::npos)
      return word;
  return "";
}

std::string driverVersionText() {
  int cudaVersion = 0;
  check(driver().cuDriverGetVersion(&cudaVersion), "cuDriverGetVersion");
  std::string cuda = "CUDA " + cuda::cudaVersionText(cudaVersion);
  std::string module = kernelModuleVersion();
  return module.empty() ? cuda : module + " (" + cuda + ")";
}

// Invariants of a Program that codegen must uphold; a violation is a polyred bug.
void validateKernel(const KernelSpec& kernel, const Program& program) {
  const LaunchConfig& launch = kernel.launch;
  for (int d = 0; d < 3; ++d)
    POLYRED_CHECK(launch.grid[d] > 0 && launch.block[d] > 0,
                  "kernel " << kernel.name << " has an empty launch");
  for (const WorkspaceSpec& workspace : kernel.workspaces)
    POLYRED_CHECK(workspace.bytes >= 0,
                  "kernel " << kernel.name << " has a negative workspace size");
  for (const KernelParam& param : kernel.params) {
    POLYRED_CHECK(param.index >= 0, "kernel " << kernel.name << " has a negative parameter index");
    if (param.kind == KernelParam::Kind::Workspace)
      POLYRED_CHECK(static_cast<size_t>(param.index) < kernel.workspaces.size(),
                    "kernel " << kernel.name << " names workspace " << param.index);
    if (param.kind == KernelParam::Kind::Temporary)
      POLYRED_CHECK(static_cast<size_t>(param.index) < program.temporaries.size(),
                    "kernel " << kernel.name << " names temporary " << param.index);
    if (param.kind == KernelParam::Kind::Size)
      POLYRED_CHECK(static_cast<size_t>(param.index) < program.symbols.size(),
                    "kernel " << kernel.name << " names size symbol " << param.index);
  }
  for (const OutputInit& z : kernel.initFirst)
    if (z.temporary >= 0)
      POLYRED_CHECK(static_cast<size_t>(z.temporary) < program.temporaries.size() &&
                        z.bytes <= program.temporaries[static_cast<size_t>(z.temporary)].bytes,
                    "kernel " << kernel.name << " sets temporary " << z.temporary << " beyond its bounds");
  // A row variant takes the launch's arguments and resources: its kernel's.
  for (const KernelSpec& variant : kernel.rowVariants) {
    validateKernel(variant, program);
    POLYRED_CHECK(variant.rowVariants.empty() && variant.workspaces.empty() && kernel.workspaces.empty() &&
                      variant.initFirst.empty() && kernel.initFirst.empty() && variant.launch.rows.symbol >= 0 &&
                      variant.params.size() == kernel.params.size() &&
                      std::equal(variant.params.begin(), variant.params.end(), kernel.params.begin(),
                                 [](const KernelParam& a, const KernelParam& b) {
                                   return a.kind == b.kind && a.index == b.index;
                                 }),
                  "row variant " << variant.name << " of kernel " << kernel.name << " differs in its arguments");
  }
}

// A workspace as every kernel expects to find it: initPattern repeated, or zeros.
DeviceBuffer makeWorkspace(const WorkspaceSpec& spec, const std::string& kernel) {
  DeviceBuffer buffer(static_cast<size_t>(spec.bytes), "a workspace of kernel " + kernel);
  std::vector<uint8_t> contents(static_cast<size_t>(spec.bytes), 0);
  const std::vector<uint8_t>& pattern = spec.initPattern;
  if (!pattern.empty())
    for (size_t i = 0; i < contents.size(); ++i) contents[i] = pattern[i % pattern.size()];
  buffer.upload(contents.data(), contents.size());
  return buffer;
}

OwnedStream makeStream() {
  CUstream stream = nullptr;
  check(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return OwnedStream(stream);
}

OwnedEvent makeEvent() {
  CUevent event = nullptr;
  check(driver().cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
  return OwnedEvent(event);
}

// Captures one call of `enqueue` on `stream` into an instantiated CUDA graph.
OwnedGraphExec captureGraph(const std::function<void(CUstream)>& enqueue, CUstream stream) {
  const cuda::Driver& api = driver();
  check(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
        "cuStreamBeginCapture");
  CUgraph rawGraph = nullptr;
  try {
    enqueue(stream);
  } catch (...) {
    // End the capture so the stream stays usable, then report the original error.
    api.cuStreamEndCapture(stream, &rawGraph);
    OwnedGraph discarded(rawGraph);
    throw;
  }
  check(api.cuStreamEndCapture(stream, &rawGraph), "cuStreamEndCapture");
  OwnedGraph graph(rawGraph);
  CUgraphExec exec = nullptr;
  check(api.cuGraphInstantiate(&exec, graph.get(), 0), "cuGraphInstantiate");
  return OwnedGraphExec(exec);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace

bool gpuAvailable(std::string* whyNot) {
  try {
    cuda::selectedDevice();
    return true;
  } catch (const NoGpuError& e) {
    if (whyNot) *whyNot = e.what();
  } catch (const cuda::CudaError& e) {
    if (whyNot) *whyNot = e.what();
  }
  return false;
}

DeviceInfo currentDevice() {
  CUdevice device = cuda::selectedDevice();
  DeviceInfo info;
  char name[256] = {};
  check(driver().cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  info.name = name;
  info.ccMajor = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.ccMinor = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.smCount = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.l2Bytes = deviceAttribute(device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  size_t totalMemory = 0;
  check(driver().cuDeviceTotalMem(&totalMemory, device), "cuDeviceTotalMem");
  info.totalMemory = static_cast<int64_t>(totalMemory);
  info.driverVersion = driverVersionText();
  return info;
}

// --- DeviceBuffer ---

DeviceBuffer::DeviceBuffer(size_t bytes, std::string_view what) : bytes_(bytes), context_(cuda::ensureContext()) {
  if (bytes == 0) return;
  const CUresult result = driver().cuMemAlloc(&pointer_, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    pointer_ = 0;
    const std::string free = cuda::deviceMemoryText();
    throw cuda::DeviceOutOfMemory(std::string(what) + " needs " + formatBytes(static_cast<int64_t>(bytes)) +
                                  " of device memory, more than the device can give" +
                                  (free.empty() ? "" : ": " + free));
  }
  check(result, "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, 0)),
      bytes_(std::exchange(other.bytes_, 0)),
      context_(std::exchange(other.context_, nullptr)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (pointer_ == 0) return;
  try {
    cuda::ContextGuard guard(context_);
    driver().cuMemFree(pointer_);
  } catch (...) {
    // Destructors must not throw; the worst outcome is a leaked allocation.
  }
  pointer_ = 0;
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
  POLYRED_CHECK(offset <= bytes_ && bytes <= bytes_ - offset,
                "upload of " << bytes << " bytes at offset " << offset << " into a " << bytes_ << "-byte buffer");
  if (bytes == 0) return;
  cuda::ContextGuard guard(context_);
  check(driver().cuMemcpyHtoD(pointer_ + offset, host, bytes), "cuMemcpyHtoD");
  // From pageable memory the copy may return before the DMA lands; wait for it so that
  // kernels on non-blocking streams see the data.
  check(driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize");
}

void DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
  POLYRED_CHECK(offset <= bytes_ && bytes <= bytes_ - offset,
                "download of " << bytes << " bytes at offset " << offset << " from a " << bytes_ << "-byte buffer");
  if (bytes == 0) return;
  cuda::ContextGuard guard(context_);
  check(driver().cuMemcpyDtoH(host, pointer_ + offset, bytes), "cuMemcpyDtoH");
}

// --- CompiledProgram ---

namespace {

struct LoadedKernel {
  LaunchConfig launch;
  std::vector<KernelParam> params;
  std::vector<WorkspaceSpec> workspaces;
  std::vector<OutputInit> initFirst;
  OwnedModule module;
  CUfunction function = nullptr;
  std::string name;
  std::vector<LoadedKernel> rowVariants;  // KernelSpec::rowVariants
};

// What one stream's launches use, so that launches on different streams never share
// scratch memory.
struct StreamResources {
  std::vector<std::vector<DeviceBuffer>> workspaces;  // [kernel][workspace]
  std::vector<DeviceBuffer> temporaries;
  // Symbolic temporaries outgrown by a larger size: kept until the program goes, since a
  // CUDA graph captured at a smaller size still launches with their addresses.
  std::vector<DeviceBuffer> outgrown;
};

LoadedKernel loadKernel(const KernelSpec& spec, const DeviceInfo& device) {
  KernelCache::Cubin cubin = fitRegisters(spec, device.ccMajor, device.ccMinor, through(KernelCache::global())).cubin;
  LoadedKernel kernel{spec.launch, spec.params, spec.workspaces, spec.initFirst, nullptr, nullptr, spec.name, {}};
  CUmodule module = nullptr;
  check(driver().cuModuleLoadData(&module, cubin->data()), "cuModuleLoadData(" + spec.name + ")");
  kernel.module.reset(module);
  check(driver().cuModuleGetFunction(&kernel.function, module, spec.name.c_str()),
        "cuModuleGetFunction(" + spec.name + ")");
  if (spec.launch.dynamicSharedBytes > kDefaultDynamicSharedLimit) {
    check(driver().cuFuncSetAttribute(kernel.function,
                                      CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(spec.launch.dynamicSharedBytes)),
          "cuFuncSetAttribute(" + spec.name + ")");
    // All of the SM's unified L1/shared memory as shared: the driver may otherwise pick
    // a carveout that holds one such block per SM where two fit (a staged row of 100 KB).
    check(driver().cuFuncSetAttribute(kernel.function, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                      CU_SHAREDMEM_CARVEOUT_MAX_SHARED),
          "cuFuncSetAttribute(" + spec.name + ", carveout)");
  }
  for (const KernelSpec& variant : spec.rowVariants) kernel.rowVariants.push_back(loadKernel(variant, device));
  return kernel;
}

}  // namespace

void warmKernelCache(std::span<const Program* const> programs, const DeviceInfo& device) {
  std::vector<const KernelSpec*> specs;
  for (const Program* p : programs) std::ranges::copy(compiledKernels(*p), std::back_inserter(specs));
  warmFittedCubins(KernelCache::global(), specs, device.ccMajor, device.ccMinor, std::thread::hardware_concurrency());
}

struct CompiledProgram::State {
  CUcontext context = nullptr;
  std::vector<LoadedKernel> kernels;
  std::vector<TemporarySpec> temporaries;
  std::vector<OutputCopy> copiesAfter;
  size_t inputsNeeded = 0;   // 1 + the largest input index any kernel reads
  size_t outputsNeeded = 0;  // likewise for outputs
  size_t symbols = 0;        // a symbolic program's size symbols, whose values every launch gives
  bool sizedTemporaries = false;  // some temporary is sized by a symbol (fitTemporaries)
  std::mutex mutex;          // guards streams
  std::map<CUstream, std::unique_ptr<StreamResources>> streams;

  ~State();
  StreamResources& resourcesFor(CUstream stream);
  std::unique_ptr<StreamResources> allocateResources(CUstream stream) const;
  void fitTemporaries(StreamResources& resources, CUstream stream, const std::vector<int64_t>& sizes);
  // A pointer, or a size symbol's value (a long long: the same 8 bytes).
  CUdeviceptr argument(const KernelParam& param, size_t kernel, std::span<void* const> inputs,
                       std::span<void* const> outputs, const StreamResources& resources,
                       const std::vector<int64_t>& sizes) const;
};

CompiledProgram::State::~State() {
  try {
    // Modules and memory belong to `context`, which need not be current here.
    cuda::ContextGuard guard(context);
    streams.clear();
    kernels.clear();
  } catch (...) {
    // Destructors must not throw; the worst outcome is a leak.
  }
}

StreamResources& CompiledProgram::State::resourcesFor(CUstream stream) {
  std::lock_guard lock(mutex);
  std::unique_ptr<StreamResources>& slot = streams[stream];
  if (!slot) slot = allocateResources(stream);
  return *slot;
}

std::unique_ptr<StreamResources> CompiledProgram::State::allocateResources(CUstream stream) const {
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  check(driver().cuStreamIsCapturing(stream, &capture), "cuStreamIsCapturing");
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
    throw Error(
        "the first launch of a compiled program on a stream allocates and initializes its "
        "workspaces, which cannot be captured into a CUDA graph: launch it once on this "
        "stream before capturing");
  auto resources = std::make_unique<StreamResources>();
  for (const LoadedKernel& kernel : kernels) {
    std::vector<DeviceBuffer>& buffers = resources->workspaces.emplace_back();
    for (const WorkspaceSpec& workspace : kernel.workspaces)
      buffers.push_back(makeWorkspace(workspace, kernel.name));
  }
  for (const TemporarySpec& temporary : temporaries) {
    if (temporary.symbol >= 0) {  // sized at the launch (fitTemporaries)
      resources->temporaries.emplace_back();
      continue;
    }
    const DeviceBuffer& buffer = resources->temporaries.emplace_back(
        static_cast<size_t>(temporary.bytes), "temporary " + std::to_string(resources->temporaries.size()));
    if (temporary.zeroWhenAllocated)  // before the first launch that uses it, on its stream
      check(driver().cuMemsetD8Async(devicePointer(buffer.data()), 0, static_cast<size_t>(temporary.bytes), stream),
            "cuMemsetD8Async");
  }
  return resources;
}

// Gives every temporary sized by a symbol at least its bytes at `sizes`: a larger
// buffer (twice the old, or what the sizes need) where it is short, never a smaller
// one. (Symbolic temporaries are never kept zero: driver/symbolic_kernels.)
void CompiledProgram::State::fitTemporaries(StreamResources& resources, CUstream stream,
                                            const std::vector<int64_t>& sizes) {
  std::lock_guard lock(mutex);
  for (size_t t = 0; t < temporaries.size(); ++t) {
    if (temporaries[t].symbol < 0) continue;
    const auto needed = static_cast<size_t>(temporaries[t].bytesAt(sizes));
    DeviceBuffer& buffer = resources.temporaries[t];
    if (buffer.size() >= needed) continue;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    check(driver().cuStreamIsCapturing(stream, &capture), "cuStreamIsCapturing");
    if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
      throw Error("a launch at larger sizes than this stream has seen allocates the program's temporaries, which "
                  "cannot be captured into a CUDA graph: launch it once at these sizes before capturing");
    DeviceBuffer larger(std::max(needed, 2 * buffer.size()), "temporary " + std::to_string(t));
    if (buffer.size() > 0) resources.outgrown.push_back(std::move(buffer));
    buffer = std::move(larger);
  }
}

CUdeviceptr CompiledProgram::State::argument(const KernelParam& param, size_t kernel,
                                             std::span<void* const> inputs, std::span<void* const> outputs,
                                             const StreamResources& resources, const std::vector<int64_t>& sizes) const {
  auto index = static_cast<size_t>(param.index);
  switch (param.kind) {
    case KernelParam::Kind::Input:
      return devicePointer(inputs[index]);
    case KernelParam::Kind::Output:
      return devicePointer(outputs[index]);
    case KernelParam::Kind::Workspace:
      return devicePointer(resources.workspaces[kernel][index].data());
    case KernelParam::Kind::Temporary:
      return devicePointer(resources.temporaries[index].data());
    case KernelParam::Kind::Size:
      return static_cast<CUdeviceptr>(sizes[index]);
  }
  throw InternalError("unknown kernel parameter kind");
}

CompiledProgram::CompiledProgram(std::unique_ptr<State> state) : state_(std::move(state)) {}
CompiledProgram::~CompiledProgram() = default;
CompiledProgram::CompiledProgram(CompiledProgram&&) noexcept = default;
CompiledProgram& CompiledProgram::operator=(CompiledProgram&&) noexcept = default;

CompiledProgram CompiledProgram::load(const Program& program, const DeviceInfo& device) {
  auto state = std::make_unique<State>();
  state->context = cuda::ensureContext();
  state->temporaries = program.temporaries;
  for (const TemporarySpec& temporary : program.temporaries)
    POLYRED_CHECK(temporary.bytes >= 0 && temporary.bytesPerSymbol >= 0 &&
                      (temporary.symbol < 0 || static_cast<size_t>(temporary.symbol) < program.symbols.size()),
                  "a temporary has a negative size or names no size symbol");
  for (const KernelSpec& spec : program.kernels) {
    validateKernel(spec, program);
    for (const KernelParam& param : spec.params) {
      size_t needed = static_cast<size_t>(param.index) + 1;
      if (param.kind == KernelParam::Kind::Input)
        state->inputsNeeded = std::max(state->inputsNeeded, needed);
      if (param.kind == KernelParam::Kind::Output)
        state->outputsNeeded = std::max(state->outputsNeeded, needed);
    }
    for (const OutputInit& z : spec.initFirst) {
      if (z.fromInput >= 0) state->inputsNeeded = std::max(state->inputsNeeded, static_cast<size_t>(z.fromInput) + 1);
      if (z.temporary >= 0) continue;  // (validateKernel checked its index)
      state->outputsNeeded = std::max(state->outputsNeeded, static_cast<size_t>(z.output) + 1);
    }
    state->kernels.push_back(loadKernel(spec, device));
  }
  for (const OutputCopy& copy : program.copiesAfter) {
    POLYRED_CHECK(copy.temporary >= 0 && static_cast<size_t>(copy.temporary) < program.temporaries.size() &&
                      copy.output >= 0 && copy.bytes <= program.temporaries[static_cast<size_t>(copy.temporary)].bytes,
                  "a copy after the launches reads temporary " << copy.temporary << " beyond its bounds");
    state->outputsNeeded = std::max(state->outputsNeeded, static_cast<size_t>(copy.output) + 1);
  }
  state->copiesAfter = program.copiesAfter;
  state->symbols = program.symbols.size();
  state->sizedTemporaries = std::any_of(program.temporaries.begin(), program.temporaries.end(),
                                        [](const TemporarySpec& t) { return t.symbol >= 0; });
  return CompiledProgram(std::move(state));
}

void CompiledProgram::launch(std::span<void* const> inputs, std::span<void* const> outputs, CUstream stream,
                             const std::vector<int64_t>& sizes) {
  State& state = *state_;
  if (sizes.size() != state.symbols)
    throw Error("the program has " + std::to_string(state.symbols) + " size symbols, but " +
                std::to_string(sizes.size()) + " values were given" +
                (sizes.empty() ? " (launch a symbolic program with its sizes)" : ""));
  for (int64_t size : sizes)
    if (size < 0) throw Error("a size symbol's value is negative (" + std::to_string(size) + ")");
  if (inputs.size() < state.inputsNeeded || outputs.size() < state.outputsNeeded)
    throw Error("the program needs " + std::to_string(state.inputsNeeded) + " input and " +
                std::to_string(state.outputsNeeded) + " output pointers, got " +
                std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  cuda::ContextGuard guard(state.context);
  StreamResources& resources = state.resourcesFor(stream);
  if (state.sizedTemporaries) state.fitTemporaries(resources, stream, sizes);
  // Reused across calls: a launch allocates nothing on the host (issue #15: the host
  // overhead of a cached kernel call).
  thread_local std::vector<CUdeviceptr> values;
  thread_local std::vector<void*> arguments;
  for (size_t k = 0; k < state.kernels.size(); ++k) {
    const LoadedKernel& kernel = kernelForRows(state.kernels[k], sizes);
    values.clear();
    for (const KernelParam& param : kernel.params)
      values.push_back(state.argument(param, k, inputs, outputs, resources, sizes));
    arguments.clear();
    for (CUdeviceptr& value : values)
      arguments.push_back(&value);  // cuLaunchKernel wants addresses
    for (const OutputInit& z : kernel.initFirst) {  // a ScatterAdd adds into it
      const auto out = z.temporary >= 0 ? devicePointer(resources.temporaries[static_cast<size_t>(z.temporary)].data())
                                        : reinterpret_cast<CUdeviceptr>(outputs[static_cast<size_t>(z.output)]);
      const auto bytes = static_cast<size_t>(z.bytes);
      if (z.fromInput < 0)
        check(driver().cuMemsetD8Async(out, 0, bytes, stream), "cuMemsetD8Async");
      else
        check(driver().cuMemcpyDtoDAsync(out, reinterpret_cast<CUdeviceptr>(inputs[static_cast<size_t>(z.fromInput)]),
                                         bytes, stream),
              "cuMemcpyDtoDAsync");
    }
    const LaunchConfig& c = kernel.launch;
    const std::array<uint32_t, 3> grid = c.gridAt(sizes);
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) continue;  // a symbolic kernel without rows
    check(driver().cuLaunchKernel(kernel.function, grid[0], grid[1], grid[2], c.block[0],
                                  c.block[1], c.block[2], c.dynamicSharedBytes, stream,
                                  arguments.data(), nullptr),
          "cuLaunchKernel");
  }
  for (const OutputCopy& copy : state.copiesAfter)  // staged in-place outputs, once every kernel has read their input
    check(driver().cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(outputs[static_cast<size_t>(copy.output)]),
                                     devicePointer(resources.temporaries[static_cast<size_t>(copy.temporary)].data()),
                                     static_cast<size_t>(copy.bytes), stream),
          "cuMemcpyDtoDAsync");
}

int CompiledProgram::kernelCount() const { return static_cast<int>(state_->kernels.size()); }

// --- Timing ---

double timeMedianMicros(std::function<void(CUstream)> enqueue, int iterations, CUstream stream) {
  if (iterations < 1) throw Error("timeMedianMicros needs at least one iteration");
  const cuda::Driver& api = driver();
  cuda::ensureContext();
  OwnedStream privateStream;
  if (stream == nullptr) {
    privateStream = makeStream();
    stream = privateStream.get();
  }
  for (int i = 0; i < kWarmupCalls; ++i) enqueue(stream);
  OwnedGraphExec graph = captureGraph(enqueue, stream);
  // The first replay uploads the graph to the device; keep it out of the timings.
  check(api.cuGraphLaunch(graph.get(), stream), "cuGraphLaunch");
  check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");

  DeviceBuffer l2Flush(kL2FlushBytes, "the L2 flush of the timing");
  OwnedEvent start = makeEvent();
  OwnedEvent stop = makeEvent();
  std::vector<double> micros;
  for (int i = 0; i < iterations; ++i) {
    check(api.cuMemsetD8Async(devicePointer(l2Flush.data()), static_cast<unsigned char>(i),
                              kL2FlushBytes, stream),
          "cuMemsetD8Async");
    check(api.cuEventRecord(start.get(), stream), "cuEventRecord");
    check(api.cuGraphLaunch(graph.get(), stream), "cuGraphLaunch");
    check(api.cuEventRecord(stop.get(), stream), "cuEventRecord");
    check(api.cuEventSynchronize(stop.get()), "cuEventSynchronize");
    float milliseconds = 0;
    check(api.cuEventElapsedTime(&milliseconds, start.get(), stop.get()), "cuEventElapsedTime");
    micros.push_back(milliseconds * 1000.0);
  }
  return median(std::move(micros));
}

double measureLaunchFloor() {
  KernelSpec empty;
  empty.name = "polyred_launch_floor";
  empty.source = "extern \"C\" __global__ void polyred_launch_floor() {}\n";
  Program program;
  program.kernels.push_back(empty);
  CompiledProgram compiled = CompiledProgram::load(program, currentDevice());
  return timeMedianMicros([&](CUstream stream) { compiled.launch(std::span<void* const>(), std::span<void* const>(), stream); });
}

}  // namespace polyred
