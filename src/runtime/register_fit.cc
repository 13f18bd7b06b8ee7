// Register fitting: compile, read the registers from the CUBIN, and compile again under
// a launch bound where the registers cost blocks per SM.
#include "runtime/register_fit.h"

#include <algorithm>

#include "runtime/nvrtc.h"
#include "support/parallel.h"
#include "support/sm_occupancy.h"

namespace polyred {

namespace {

// A bounded CUBIN is kept when ptxas needed no more local memory for it than for the
// free one: the bound cost no spills.
bool spillsNothing(const KernelResources& bounded, const KernelResources& free) {
  return bounded.stackBytes >= 0 && bounded.stackBytes <= std::max<int64_t>(free.stackBytes, 0);
}

std::string resourcesText(const KernelResources& r) {
  return std::to_string(r.registers) + " registers, " +
         (r.stackBytes > 0 ? std::to_string(r.stackBytes) + " bytes of stack" : std::string("no stack"));
}

// `request` asking for `blocks` blocks per SM (POLYRED_LAUNCH_BOUNDS reads it).
CompileRequest withMinBlocksPerSM(CompileRequest request, int blocks) {
  request.options.push_back("-DPOLYRED_MIN_BLOCKS_PER_SM=" + std::to_string(blocks));
  return request;
}

}  // namespace

CubinCompiler uncachedNvrtc() {
  return [](const CompileRequest& r) {
    return std::make_shared<const std::vector<char>>(
        compileCuda(r.source, r.name, r.ccMajor, r.ccMinor, r.options).cubin);
  };
}

CompileRequest compileRequest(const KernelSpec& spec, int ccMajor, int ccMinor) {
  return CompileRequest{spec.name, spec.source, ccMajor, ccMinor, {}};
}

CubinCompiler through(KernelCache& cache) {
  return [&cache](const CompileRequest& r) { return cache.cubin(r); };
}

void warmFittedCubins(KernelCache& cache, const std::vector<const KernelSpec*>& specs, int ccMajor, int ccMinor,
                      unsigned threads) {
  if (!cache.config().enabled) return;
  parallelFor(specs.size(), threads, [&](size_t k) {
    try {
      fitRegisters(*specs[k], ccMajor, ccMinor, through(cache));
    } catch (const std::exception&) {  // reported when the kernel is loaded
    }
  });
}

RegisterFit fitRegisters(const KernelSpec& spec, int ccMajor, int ccMinor, const CubinCompiler& compile) {
  const CompileRequest request = compileRequest(spec, ccMajor, ccMinor);
  RegisterFit fit;
  fit.cubin = compile(request);
  if (spec.registerFit == RegisterFitMode::Off) return fit;
  fit.free = cubinKernelResources(*fit.cubin, spec.name);
  if (!fit.free) return fit;
  const int threads = spec.launch.threadsPerBlock();
  fit.freeBlocks = residentBlocksByRegisters(fit.free->registers, threads);
  const int64_t sharedBytes = fit.free->staticSharedBytes + spec.launch.dynamicSharedBytes;
  fit.targetBlocks = std::min(residentBlocksByThreads(threads), residentBlocksBySharedMemory(sharedBytes, threads));
  // Each count of blocks that allows more registers than the next larger one, from the
  // target down (256 threads: 8, 6, 5 blocks for 32, 40, 48 registers).
  for (int blocks = fit.targetBlocks; blocks > fit.freeBlocks; --blocks) {
    if (blocks < fit.targetBlocks && registerBudget(blocks, threads) == registerBudget(blocks + 1, threads)) continue;
    KernelCache::Cubin bounded = compile(withMinBlocksPerSM(request, blocks));
    const std::optional<KernelResources> resources = cubinKernelResources(*bounded, spec.name);
    fit.attempts.push_back({blocks, resources});
    if (resources && (spec.registerFit == RegisterFitMode::Force || spillsNothing(*resources, *fit.free))) {
      fit.cubin = std::move(bounded);
      fit.keptBlocks = blocks;
      break;
    }
  }
  return fit;
}

std::string RegisterFit::describe(int threadsPerBlock) const {
  if (!free) return "";
  std::string text = resourcesText(*free) + " (" + std::to_string(freeBlocks) + " blocks of " +
                     std::to_string(threadsPerBlock) + " per SM by registers";
  text += freeBlocks < targetBlocks ? ", " + std::to_string(targetBlocks) + " by threads and shared memory)" : ")";
  for (const Attempt& a : attempts)
    text += "; bound to " + std::to_string(a.blocks) + " blocks: " +
            (a.resources ? resourcesText(*a.resources) : std::string("no counts in the CUBIN")) +
            (a.blocks == keptBlocks ? " -- kept" : "");
  return text;
}

}  // namespace polyred
