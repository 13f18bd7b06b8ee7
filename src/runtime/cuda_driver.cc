// Loads libcuda.so.1 with dlopen, resolves the entry points of cuda_driver.h through
// cuGetProcAddress, initializes the driver, and picks the device and context.
#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "support/budget.h"
#include "support/error.h"

namespace polyred::cuda {
namespace {

constexpr const char* kDriverLibrary = "libcuda.so.1";

// The outcome of loading the driver, computed once: either the entry points or why
// there is no usable GPU.
struct LoadedDriver {
  Driver api;
  std::string whyUnusable;  // empty when the driver is usable
};

// "CUDA_ERROR_X (description)", through `api` (which need not be fully loaded).
std::string describeWith(const Driver& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

// Why a driver entry point could not be resolved. cuGetErrorName may be missing too,
// so results are named by number.
std::string unresolvable(const char* function, CUresult result) {
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return std::string(kDriverLibrary) +
           " is the CUDA toolkit's stub library, not an NVIDIA driver";
  return std::string("the NVIDIA driver is too old: it lacks ") + function + " (CUresult " +
         std::to_string(static_cast<int>(result)) + ")";
}

// Resolves every entry point; returns why one cannot be, or "".
std::string resolveEntryPoints(void* library, Driver& api) {
  using GetProcAddress = decltype(&::cuGetProcAddress);
  auto getProcAddress = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (getProcAddress == nullptr)
    return "the NVIDIA driver is too old: it lacks cuGetProcAddress_v2 (CUDA 12.0)";
#define POLYRED_RESOLVE(fn, version)                                                        \
  {                                                                                         \
    void* address = nullptr;                                                                \
    CUdriverProcAddressQueryResult status{};                                                \
    CUresult r =                                                                            \
        getProcAddress(#fn, &address, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status); \
    if (r != CUDA_SUCCESS || address == nullptr) return unresolvable(#fn, r);               \
    api.fn = reinterpret_cast<decltype(api.fn)>(address);                                   \
  }
  POLYRED_CUDA_DRIVER_FUNCTIONS(POLYRED_RESOLVE)
#undef POLYRED_RESOLVE
  return "";
}

// Returns why the loaded driver cannot run polyred's kernels, or "".
std::string checkDriverWorks(const Driver& api) {
  int driverVersion = 0;
  api.cuDriverGetVersion(&driverVersion);
  // Kernels come from the NVRTC of the toolkit we were built with; a driver of an older
  // major version cannot load them.
  if (driverVersion / 1000 < CUDA_VERSION / 1000)
    return "the NVIDIA driver supports CUDA " + cudaVersionText(driverVersion) +
           " but polyred needs CUDA " + cudaVersionText(CUDA_VERSION) + " or newer";
  if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS)
    return "cuInit failed: " + describeWith(api, r);
  int devices = 0;
  if (api.cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0)
    return "the NVIDIA driver found no CUDA devices";
  return "";
}

LoadedDriver loadDriver() {
  LoadedDriver loaded;
  // The library stays loaded for the life of the process: kernels and contexts live
  // inside it.
  void* library = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    loaded.whyUnusable = std::string("no NVIDIA driver: ") + kDriverLibrary +
                         " could not be loaded (" + dlerror() + ")";
    return loaded;
  }
  loaded.whyUnusable = resolveEntryPoints(library, loaded.api);
  if (loaded.whyUnusable.empty()) loaded.whyUnusable = checkDriverWorks(loaded.api);
  return loaded;
}

const LoadedDriver& loadedDriver() {
  static const LoadedDriver loaded = loadDriver();  // thread-safe one-time init
  return loaded;
}

int deviceCount() {
  int count = 0;
  check(driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

// $POLYRED_DEVICE, or 0 when unset.
int requestedOrdinal() {
  const char* text = std::getenv("POLYRED_DEVICE");
  if (text == nullptr || *text == '\0') return 0;
  int ordinal = -1;
  const char* end = text + std::strlen(text);
  auto [rest, error] = std::from_chars(text, end, ordinal);
  int count = deviceCount();
  if (error != std::errc() || rest != end || ordinal < 0 || ordinal >= count)
    throw NoGpuError(std::string("POLYRED_DEVICE=") + text + " names no device (" +
                     std::to_string(count) + " CUDA device(s) present)");
  return ordinal;
}

// Retained once per device and never released: the context lives as long as the process,
// like the CUDA runtime's.
CUcontext retainPrimaryContext(CUdevice device) {
  static std::mutex mutex;
  static std::map<CUdevice, CUcontext> retained;
  std::lock_guard lock(mutex);
  if (auto it = retained.find(device); it != retained.end()) return it->second;
  CUcontext context = nullptr;
  check(driver().cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  retained.emplace(device, context);
  return context;
}

}  // namespace

const Driver& driver() {
  const LoadedDriver& loaded = loadedDriver();
  if (!loaded.whyUnusable.empty()) throw NoGpuError(loaded.whyUnusable);
  return loaded.api;
}

std::string cudaVersionText(int cudaVersion) {
  return std::to_string(cudaVersion / 1000) + "." + std::to_string(cudaVersion % 1000 / 10);
}

std::string describe(CUresult result) { return describeWith(loadedDriver().api, result); }

void check(CUresult result, std::string_view call) {
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    const std::string free = deviceMemoryText();
    throw DeviceOutOfMemory(std::string(call) + " failed: the device is out of memory" + (free.empty() ? "" : ": " + free));
  }
  if (result != CUDA_SUCCESS)
    throw CudaError(result, std::string(call) + " failed: " + describe(result));
}

DeviceMemory deviceMemory() {
  ensureContext();
  size_t freeBytes = 0, totalBytes = 0;
  if (driver().cuMemGetInfo(&freeBytes, &totalBytes) != CUDA_SUCCESS) return {};
  return {static_cast<int64_t>(freeBytes), static_cast<int64_t>(totalBytes)};
}

std::string deviceMemoryText() {
  DeviceMemory m;
  try {
    m = deviceMemory();
  } catch (const std::exception&) {
    return "";  // for a message about another failure: say nothing rather than throw
  }
  if (m.totalBytes <= 0) return "";
  return "the device has " + formatBytes(m.freeBytes) + " free of " + formatBytes(m.totalBytes);
}

CUdevice selectedDevice() {
  const Driver& api = driver();
  CUcontext current = nullptr;
  check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  CUdevice device = 0;
  if (current != nullptr) {
    check(api.cuCtxGetDevice(&device), "cuCtxGetDevice");
    return device;
  }
  check(api.cuDeviceGet(&device, requestedOrdinal()), "cuDeviceGet");
  return device;
}

CUcontext ensureContext() {
  const Driver& api = driver();
  CUcontext current = nullptr;
  check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != nullptr) return current;
  CUcontext primary = retainPrimaryContext(selectedDevice());
  check(api.cuCtxSetCurrent(primary), "cuCtxSetCurrent");
  return primary;
}

ContextGuard::ContextGuard(CUcontext context) {
  const Driver& api = driver();
  CUcontext current = nullptr;
  check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current == context) return;
  check(api.cuCtxPushCurrent(context), "cuCtxPushCurrent");
  pushed_ = true;
}

ContextGuard::~ContextGuard() {
  CUcontext popped = nullptr;
  if (pushed_) driver().cuCtxPopCurrent(&popped);  // nothing useful to do on failure
}

}  // namespace polyred::cuda
