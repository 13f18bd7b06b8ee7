// Register fitting: the CUBIN a kernel runs as. Takes a KernelSpec and a way to compile
// a request (the kernel cache, or NVRTC directly); gives the CUBIN to load and what
// was decided.
//
// ptxas gives a kernel without a minimum of blocks per SM in its launch bound as many
// registers as it likes, and above 32 a thread that costs occupancy: the Welford
// var_mean kernel took 34 registers, 6 blocks of 256 per SM instead of 8, and ran
// 19.3 us against 15.5 at 32 (docs/results/notes-2026-11-28.md). So a kernel whose
// registers hold fewer blocks per SM than its threads and shared memory allow is
// compiled again asking for those blocks (-DPOLYRED_MIN_BLOCKS_PER_SM=n, which
// POLYRED_LAUNCH_BOUNDS of the device library reads), then for each fewer count that
// still allows more registers, down to one block above what it had; the first CUBIN
// whose stack frame is no larger than the unbounded one's (no spills) is kept. Only
// kernels that leave their bound to the runtime (KernelSpec::registerFit) take part;
// `regfit=force` keeps the first bound, spills or not (a variant to measure).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_spec.h"
#include "runtime/cubin_info.h"
#include "runtime/kernel_cache.h"

namespace polyred {

struct RegisterFit {
  KernelCache::Cubin cubin;             // what to load
  std::optional<KernelResources> free;  // compiled without a minimum of blocks (if the CUBIN says)
  int freeBlocks = 0;                   // blocks per SM those resources allow
  int targetBlocks = 0;                 // what its threads and shared memory allow
  // The bounds tried, most blocks first, with what ptxas made of each.
  struct Attempt {
    int blocks = 0;
    std::optional<KernelResources> resources;
  };
  std::vector<Attempt> attempts;
  int keptBlocks = 0;  // the bound kept; 0: none (the free CUBIN is loaded)

  // "40 registers, no stack (6 blocks of 256 per SM by registers, 8 by threads and
  // shared memory); bound to 8 blocks: 32 registers, no stack -- kept" and the like,
  // for `polyred compile --nvrtc`; empty without counts.
  std::string describe(int threadsPerBlock) const;
};

using CubinCompiler = std::function<KernelCache::Cubin(const CompileRequest&)>;

// `spec`'s compile request for compute capability ccMajor.ccMinor, without a bound.
CompileRequest compileRequest(const KernelSpec& spec, int ccMajor, int ccMinor);

RegisterFit fitRegisters(const KernelSpec& spec, int ccMajor, int ccMinor, const CubinCompiler& compile);

// NVRTC itself, no cache (what `polyred compile --nvrtc` and `polyred corpus --nvrtc`
// report on).
CubinCompiler uncachedNvrtc();
// Through `cache` (what the runtime loads).
CubinCompiler through(KernelCache& cache);

// Brings the fitted CUBINs of `specs` into `cache` as fitRegisters would, on up to
// `threads` threads at once (NVRTC compiles one program per call: the tuner's candidates,
// about half of `polyred tune`'s time when compiled one by one). A kernel that fails to
// compile is left out: loading it reports the error. Nothing to do with the cache
// disabled (every load compiles again).
void warmFittedCubins(KernelCache& cache, const std::vector<const KernelSpec*>& specs, int ccMajor, int ccMinor,
                      unsigned threads);

}  // namespace polyred
