// CPU executor of lowered kernels: the generated loop program run on the host.
//
// Takes: a PolyKernel, its Graph and input tensors. Gives: the outputs the kernel
// writes, computed by running the isl-generated LoopAst with the same index
// arithmetic the CUDA code uses. Every block runs in turn (in a shuffled order, so
// the "last block" of a multi-block combine varies), all threads of a block in
// lockstep (SIMT emulation). Besides values, it checks what the GPU would not report:
//   - barrier statements (BlockReduce, Arrive) are reached by every thread of a block;
//   - every load offset is inside its tensor, every output element is written once;
//   - the multi-block workspace is left exactly as it was found (identity, tickets 0).
// Violations throw InternalError. Large kernels can be checked on a sample of i-tiles.
#pragma once

#include <cstdint>
#include <vector>

#include "interp/host_tensor.h"
#include "ir/graph.h"
#include "poly/poly_kernel.h"
#include "support/budget.h"

namespace polyred {

struct CpuExecOptions {
  bool deterministic = false;
  uint64_t blockOrderSeed = 1;
  // Upper bound on Red/Elem statement instances to run; 0 = no bound. When the
  // kernel is larger, only a sample of i-tiles runs (the first, the last and
  // pseudo-random others) and only their outputs are marked written.
  int64_t maxPoints = 0;
  // Polled before every block; past it the run stops with TimeBudgetExceeded.
  const Deadline* deadline = nullptr;
  // In-place outputs as the GPU runs them: where writeThrough[o] >= 0, every store into
  // graph output o also lands at once in (*inputBuffers)[writeThrough[o]], which must
  // be the `inputs` the kernel reads -- so a read of that input after the store, by this
  // kernel's later blocks or by the next kernel, sees the new value, as it would on the
  // GPU (canon/in_place_hazards stages the outputs where that would be wrong).
  std::vector<HostTensor>* inputBuffers = nullptr;
  std::vector<int> writeThrough;
  // A symbolic kernel's size symbols (Graph::symbols order): its rows, the row variant
  // that runs (codegen/symbolic_launch.h: kernelForRows, as the GPU launch picks), the
  // parameter size_<symbol> and the grid it is launched with (LaunchConfig::gridAt).
  // `g` is then the graph at these sizes (driver/pipeline's graphAtSizes).
  std::vector<int64_t> sizes;
};

struct CpuExecResult {
  // outputs[k] corresponds to Graph::outputs[k]; only those this kernel writes are
  // non-empty. written[k][e] says whether element e was computed (sampling).
  std::vector<HostTensor> outputs;
  std::vector<std::vector<bool>> written;
  bool sampled = false;
};

// `temporaries` holds the materialized reduction results of the kernel's partition
// (KernelPartition::temporaries), read and written as the kernel does.
CpuExecResult executeOnCpu(const Graph& g, const PolyKernel& k, const std::vector<HostTensor>& inputs,
                           std::vector<HostTensor>& temporaries, const CpuExecOptions& options = {});

// The host memory executeOnCpu(.., k, .., options) takes besides the tensors it is given
// and returns: the list of blocks it runs, the per-row workspace and the per-block
// partials of each reduction (32-byte Scalars, tuples on the heap), the tickets and
// the ordered-tuple witness. An upper bound, for driver/cpu_check's memory plan.
int64_t cpuExecutorBytes(const PolyKernel& k, const CpuExecOptions& options);

}  // namespace polyred
