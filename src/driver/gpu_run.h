// Running a compiled sub-graph on the GPU and checking it against the reference.
//
// Takes: a CompiledGraph. Gives: the outputs of one launch on random inputs compared
// with the reference interpreter, and optionally the METHOD.md timing (CUDA-graph
// replay with L2 flush, median) with bytes moved and achieved bandwidth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "driver/pipeline.h"
#include "interp/host_tensor.h"
#include "support/budget.h"

namespace polyred {

struct GpuRunOptions {
  uint64_t seed = 1;
  bool time = true;
  int iterations = 50;
  int repeatChecks = 1;  // launches compared bitwise with the first (determinism, workspace restore)
  ResourceLimits limits;  // host memory and time of the reference (driver/cpu_check.h)
  // Every tensor starts this many of its own elements into its allocation, as a view
  // with a storage offset does (torch's x[1:] of a flat buffer): 1 puts each past the
  // alignment of vector accesses, so kernels take their element-by-element code.
  int misalignElements = 0;
};

struct GpuRunReport {
  bool ok = false;
  bool bitwiseRepeatable = true;  // every repeated launch matched the first bit for bit
  std::string check;              // per-output comparison lines
  int kernels = 0;
  double micros = 0;              // median, when timed
  int64_t bytes = 0;              // inputs read + outputs written, counted once
  int64_t bytesRead = 0, bytesWritten = 0;  // the two parts (the streaming meter's workload)
  double gbPerSecond() const { return micros > 0 ? static_cast<double>(bytes) / (micros * 1e3) : 0; }
};

// Target of the current GPU (throws NoGpuError without one).
Target currentTarget();

GpuRunReport runOnGpu(const CompiledGraph& c, const GpuRunOptions& options);

// Variants of one graph (compiled with different KernelConfigs), on the same random
// inputs: each is launched, checked against the reference (computed once) and timed
// as runOnGpu times. nullopt for a variant whose result does not match.
std::vector<std::optional<double>> timeVariants(const std::vector<const CompiledGraph*>& variants,
                                                const GpuRunOptions& options);

// One launch of `c` on the given inputs (g.inputs order); the outputs, downloaded. A
// symbolic program runs at `sizes` (its symbols' values; the inputs at those sizes).
// The second form launches `program` (c's, loaded once) on the default stream.
class CompiledProgram;  // runtime/executor.h
std::vector<HostTensor> launchOnGpu(CompiledProgram& program, const CompiledGraph& c,
                                    const std::vector<HostTensor>& inputs, const std::vector<int64_t>& sizes);
std::vector<HostTensor> launchOnGpu(const CompiledGraph& c, const std::vector<HostTensor>& inputs,
                                    const std::vector<int64_t>& sizes = {});

}  // namespace polyred
