// The CUBIN reader (runtime/cubin_info.h): register counts and stack frames of
// NVRTC-compiled kernels by name, the resident blocks the registers allow, and no crash
// on files that are not CUBINs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "driver/corpus.h"
#include "runtime/cubin_info.h"
#include "runtime/nvrtc.h"

namespace polyred {
namespace {

// Two kernels: one that needs few registers, one that keeps 24 independent sums live.
const char* kTwoKernels = R"(
extern "C" __global__ void copy_one(const float* in, float* out) { out[threadIdx.x] = in[threadIdx.x]; }
extern "C" __global__ void many_sums(const float* in, float* out, int n) {
  float s[24];
  #pragma unroll
  for (int k = 0; k < 24; ++k) s[k] = 0.0f;
  for (int i = threadIdx.x; i < n; i += 24 * blockDim.x) {
    #pragma unroll
    for (int k = 0; k < 24; ++k) s[k] += in[i + k * blockDim.x] * (k + 1);
  }
  #pragma unroll
  for (int k = 0; k < 24; ++k) out[threadIdx.x * 24 + k] = s[k];
}
)";

std::map<std::string, int> registersOf(const std::vector<char>& cubin) {
  std::map<std::string, int> counts;
  for (const auto& [name, k] : cubinKernelResources(cubin)) counts[name] = k.registers;
  return counts;
}

TEST(CubinInfo, RegisterCountsOfEveryKernelByName) {
  const NvrtcResult r = compileCuda(kTwoKernels, "two_kernels.cu", 9, 0);
  const auto kernels = cubinKernelResources(r.cubin);
  ASSERT_EQ(kernels.size(), 2u);
  ASSERT_TRUE(kernels.count("copy_one"));
  ASSERT_TRUE(kernels.count("many_sums"));
  EXPECT_GE(kernels.at("copy_one").registers, 1);
  EXPECT_GT(kernels.at("many_sums").registers, 24) << "24 sums live in registers";
  EXPECT_LE(kernels.at("many_sums").registers, 255);
  EXPECT_LT(kernels.at("copy_one").registers, kernels.at("many_sums").registers);
  EXPECT_EQ(kernels.at("copy_one").stackBytes, 0);
  EXPECT_EQ(kernels.at("many_sums").stackBytes, 0);
}

TEST(CubinInfo, SpillsShowAsStack) {
  // The 24 sums held to 32 registers (8 blocks of 256 per SM) spill.
  std::string capped = kTwoKernels;
  const std::string plain = "__global__ void many_sums";
  capped.replace(capped.find(plain), plain.size(), "__global__ void __launch_bounds__(256, 8) many_sums");
  const NvrtcResult r = compileCuda(capped, "capped.cu", 9, 0);
  const KernelResources k = cubinKernelResources(r.cubin).at("many_sums");
  EXPECT_LE(k.registers, 32);
  EXPECT_GT(k.stackBytes, 0);
}

TEST(CubinInfo, WhatIsNotACubinHasNoCounts) {
  const NvrtcResult r = compileCuda(kTwoKernels, "two_kernels.cu", 9, 0);
  EXPECT_TRUE(cubinKernelResources({}).empty());
  for (size_t keep : {size_t{4}, size_t{64}, r.cubin.size() / 2, r.cubin.size() - 1}) {
    const std::vector<char> cut(r.cubin.begin(), r.cubin.begin() + static_cast<std::ptrdiff_t>(keep));
    const auto counts = registersOf(cut);  // may keep what lies before the cut
    for (const auto& [name, registers] : counts) EXPECT_EQ(registers, registersOf(r.cubin).at(name)) << name;
  }
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<char> noise = r.cubin;  // an ELF header, then corrupted bytes anywhere
    for (int k = 0; k < 16; ++k) noise[random() % noise.size()] = static_cast<char>(random());
    for (const auto& [name, registers] : registersOf(noise)) {
      EXPECT_GE(registers, 1) << name;
      EXPECT_LE(registers, 255) << name;
    }
  }
  std::vector<char> text(4096, 'x');
  EXPECT_TRUE(cubinKernelResources(text).empty());
}

TEST(CubinInfo, CorpusWithNvrtcCountsRegisterLimitedKernels) {
  CorpusOptions o;
  o.nvrtc = true;
  o.maxPoints = 1 << 12;
  // A folder of two files: an int32 division (38 registers unbounded, 32 bound to 8
  // blocks, no spills: fitted) and deep_fm's parallel sums (32 registers since the 2026-11-30
  // masked-row loads: nothing to fit).
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("polyred-cubin-info-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* file : {"/tests/data/ops/int_division_int32.json",
                           "/tests/data/akg/deep_fm/level1/Fused_Mul_ReduceSum_InplaceAssign_atomic_add_Mul_ReduceSum_"
                           "InplaceAssign_atom_more_parallel_15983009430977764326.info"}) {
    const std::filesystem::path from = std::string(POLYRED_SOURCE_DIR) + file;
    std::filesystem::copy_file(from, dir / from.filename(), std::filesystem::copy_options::overwrite_existing);
  }
  std::ostringstream progress;
  const CorpusSummary s = runCorpus(dir.string(), o, progress);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(s.failures.empty()) << s.toString();
  int launches = 0;
  for (const auto& [count, files] : s.launchesPerGraph) launches += count * files;
  EXPECT_EQ(s.cubins, launches) << "one CUBIN per launched kernel";
  for (const auto& [file, what] : s.registerLimited) EXPECT_NE(what.find(" registers, "), std::string::npos) << file;
  EXPECT_EQ(launches, 2);
  EXPECT_EQ(s.registersFitted, 1);  // the division (runtime/register_fit.h)
  EXPECT_NE(s.toString().find("CUBINs (--nvrtc): " + std::to_string(launches) +
                              ", registers fitted: " + std::to_string(s.registersFitted) +
                              ", below full occupancy by registers: " + std::to_string(s.registerLimited.size())),
            std::string::npos)
      << s.toString();
}

}  // namespace
}  // namespace polyred
