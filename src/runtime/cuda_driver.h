// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so that polyred
// starts on machines with no GPU and no driver. Only cuda.h's types and prototypes are
// used; libcuda is never linked.
//
// Gives: driver() (the entry points, or NoGpuError saying why there are none), check()
// (CUresult -> CudaError), the device polyred runs on, and the context it runs in.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "support/error.h"

namespace polyred::cuda {

// Every driver entry point the runtime calls, with the CUDA version whose signature we
// call it with (the suffix of cudaTypedefs.h's PFN_<name>_v<version>, matching the
// prototype cuda.h's macros select). cuGetProcAddress is asked for exactly that version:
// asking for the newest would hand back ABI-changed variants that cuda.h does not
// declare under the base name (in CUDA 13, cuCtxGetDevice takes a second argument).
// Member names go through cuda.h's macros like every call site (api.cuMemAlloc is the
// member cuMemAlloc_v2), so calls read as plain driver API.
// clang-format off
#define POLYRED_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuGetErrorName, 6000) X(cuGetErrorString, 6000) X(cuDriverGetVersion, 2020) \
  X(cuInit, 2000) X(cuDeviceGetCount, 2000) X(cuDeviceGet, 2000) \
  X(cuDeviceGetName, 2000) X(cuDeviceGetAttribute, 2000) X(cuDeviceTotalMem, 3020) \
  X(cuDevicePrimaryCtxRetain, 7000) X(cuCtxGetCurrent, 4000) X(cuCtxSetCurrent, 4000) \
  X(cuCtxGetDevice, 2000) X(cuCtxPushCurrent, 4000) X(cuCtxPopCurrent, 4000) \
  X(cuModuleLoadData, 2000) X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000) \
  X(cuFuncSetAttribute, 9000) X(cuLaunchKernel, 4000) X(cuMemAlloc, 3020) \
  X(cuMemFree, 3020) X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020) \
  X(cuMemsetD8Async, 3020) X(cuStreamCreate, 2000) X(cuStreamDestroy, 4000) \
  X(cuStreamSynchronize, 2000) X(cuStreamIsCapturing, 10000) \
  X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000) \
  X(cuGraphInstantiateWithFlags, 11040) X(cuGraphLaunch, 10000) \
  X(cuGraphDestroy, 10000) X(cuGraphExecDestroy, 10000) X(cuEventCreate, 2000) \
  X(cuEventRecord, 2000) X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 12080) \
  X(cuEventDestroy, 4000) \
  X(cuMemcpy2DAsync, 3020) X(cuMemcpyDtoDAsync, 3020) X(cuMemGetInfo, 3020)
// clang-format on

struct Driver {
#define POLYRED_DRIVER_MEMBER(fn, version) PFN_##fn##_v##version fn = nullptr;
  POLYRED_CUDA_DRIVER_FUNCTIONS(POLYRED_DRIVER_MEMBER)
#undef POLYRED_DRIVER_MEMBER
};

// A driver call that failed once the driver was up (out of memory, bad launch, ...).
class CudaError : public std::runtime_error {
 public:
  CudaError(CUresult code, const std::string& message) : std::runtime_error(message), code_(code) {}
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

// The device ran out of memory (CUDA_ERROR_OUT_OF_MEMORY): the work asked for more than
// the device has free -- a tensor, workspace or temporary too large for it -- which is
// bad input (exit 2, POLYRED_BAD_INPUT), not a polyred bug. What was allocated before
// is freed by its owners and the context stays usable.
class DeviceOutOfMemory : public Error {
 public:
  using Error::Error;
};

// The loaded and initialized driver. Loading happens once per process; when it fails
// (libcuda missing, driver too old, cuInit error, zero devices) every call throws
// NoGpuError with that reason.
const Driver& driver();

// "CUDA_ERROR_X (description)" for a driver result.
std::string describe(CUresult result);

// "13.0" for a CUDA version number such as 13000.
std::string cudaVersionText(int cudaVersion);

// Throws CudaError naming `call` when `result` is not CUDA_SUCCESS, DeviceOutOfMemory
// (with the device's free memory) when it is CUDA_ERROR_OUT_OF_MEMORY.
void check(CUresult result, std::string_view call);

// The device memory of the context polyred runs in (ensureContext; cuMemGetInfo), in
// bytes; {0, 0} when unknown.
struct DeviceMemory {
  int64_t freeBytes = 0, totalBytes = 0;
};
DeviceMemory deviceMemory();
// "the device has 10.0 GiB free of 79.6 GiB", for messages; "" when unknown.
std::string deviceMemoryText();

// The device polyred runs on: the current context's device when the caller (e.g.
// PyTorch) made one current, else $POLYRED_DEVICE, else device 0. Throws NoGpuError
// when $POLYRED_DEVICE names no device.
CUdevice selectedDevice();

// The context to run in, made current on this thread: the caller's if one is current,
// else the selected device's primary context (retained once, kept for the process).
CUcontext ensureContext();

// Makes `context` current for the guard's lifetime if another one (or none) is, and
// restores the previous one afterwards, so callers' threads keep their own context.
class ContextGuard {
 public:
  explicit ContextGuard(CUcontext context);
  ~ContextGuard();
  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace polyred::cuda
