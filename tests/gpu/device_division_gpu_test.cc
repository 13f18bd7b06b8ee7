// pr_div_counts (src/device/polyred_division.cuh) on the GPU, where its instructions
// run: the same bits as IEEE division a / b for whole numbers a and b in [0, 2^100]
// (tuple counts, ir/tuple_counts.h) -- every pair a <= b < 2^13, then 2^30 pairs of
// random whole numbers of any exponent in that range in either order, zero divisors
// among them. Without a GPU the test is skipped.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "driver/gpu_run.h"
#include "runtime/cuda_driver.h"
#include "runtime/executor.h"
#include "runtime/nvrtc.h"

namespace polyred {
namespace {

constexpr const char* kCompareSource = R"(
#include "polyred_division.cuh"

// Pair t: below `exhaustive`, a = t % 8192 and b = t / 8192 where a <= b; past it, a
// hash of t picks two 24-bit whole numbers shifted left by up to 76 bits, a zero
// dividend one time in 16 and a zero divisor one time in 64.
__device__ void pair_of(long long t, long long exhaustive, float& a, float& b) {
  if (t < exhaustive) {
    a = static_cast<float>(t % 8192);
    b = static_cast<float>(t / 8192);
    return;
  }
  unsigned long long h = static_cast<unsigned long long>(t) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  const float ma = static_cast<float>((h & 0xffffff) + 1), mb = static_cast<float>(((h >> 24) & 0xffffff) + 1);
  a = (h >> 48) % 16 == 0 ? 0.0f : ldexpf(ma, static_cast<int>((h >> 52) % 77));
  b = (h >> 40) % 64 == 0 ? 0.0f : ldexpf(mb, static_cast<int>((h >> 56) % 77));
}

extern "C" __global__ void compare_count_division(long long exhaustive, long long pairs,
                                                  unsigned long long* differing, unsigned* example) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; t < pairs; t += stride) {
    float a, b;
    pair_of(t, exhaustive, a, b);
    if (t < exhaustive && a > b) continue;
    const float counts = pr_div_counts(a, b), ieee = a / b;
    if (__float_as_uint(counts) != __float_as_uint(ieee) && atomicAdd(differing, 1ull) == 0) {
      example[0] = __float_as_uint(a);
      example[1] = __float_as_uint(b);
      example[2] = __float_as_uint(counts);
      example[3] = __float_as_uint(ieee);
    }
  }
}
)";

float floatOf(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

TEST(DeviceDivisionGpu, CountDivisionIsIeeeDivisionBitForBit) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const DeviceInfo device = currentDevice();
  const NvrtcResult compiled = compileCuda(kCompareSource, "count_division_test", device.ccMajor, device.ccMinor);
  const cuda::Driver& api = cuda::driver();
  cuda::ensureContext();
  CUmodule module = nullptr;
  cuda::check(api.cuModuleLoadData(&module, compiled.cubin.data()), "cuModuleLoadData");
  CUfunction compare = nullptr;
  cuda::check(api.cuModuleGetFunction(&compare, module, "compare_count_division"), "cuModuleGetFunction");

  DeviceBuffer differing(sizeof(unsigned long long)), example(4 * sizeof(unsigned));
  const unsigned long long zero = 0;
  differing.upload(&zero, sizeof zero);
  long long exhaustive = 8192LL * 8192, pairs = exhaustive + (1LL << 30);
  void* differingPtr = differing.data();
  void* examplePtr = example.data();
  void* params[] = {&exhaustive, &pairs, &differingPtr, &examplePtr};
  const unsigned blocks = static_cast<unsigned>(device.smCount) * 8;
  cuda::check(api.cuLaunchKernel(compare, blocks, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
  cuda::check(api.cuStreamSynchronize(nullptr), "cuStreamSynchronize");

  unsigned long long count = 0;
  uint32_t first[4] = {};
  differing.download(&count, sizeof count);
  example.download(first, sizeof first);
  cuda::check(api.cuModuleUnload(module), "cuModuleUnload");
  EXPECT_EQ(count, 0u) << "first: " << floatOf(first[0]) << " / " << floatOf(first[1]) << " gave "
                       << floatOf(first[2]) << " (bits " << std::hex << first[2] << "), IEEE "
                       << floatOf(first[3]) << " (bits " << first[3] << ")";
}

}  // namespace
}  // namespace polyred
