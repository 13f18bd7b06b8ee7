// The CPU simulation of a sharded run (shard/shard_lowering.h), checked against the
// unsharded reference.
//
// Takes: a Graph, a ShardSpec and options. Gives: the simulated outputs and a report.
// The simulation is the GPU plan with the CPU executor in place of the GPUs and host
// loops in place of NCCL: the inputs are split as the ranks would hold them; each
// round's local graph of each rank is compiled by the normal pipeline and its lowered
// kernels run on the CPU (codegen/cpu_executor, every point, no sampling); the partials
// are combined per CombineStep -- all-reduce: folded on the host in rank order with the
// reduction's combiner in its accumulator type (NCCL's order may differ, see
// docs/multigpu.md); all-gather + combine: gathered rank-major and reduced by the
// lowered kernels of combineGraph, as the GPU does; then the final local graphs run and
// the outputs are joined in rank order (split) or taken from rank 0 after checking
// that every rank computed the same bytes (whole). Compared with interp/reference on
// the whole, unsplit graph with the usual tolerances.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/pipeline.h"
#include "interp/host_tensor.h"
#include "shard/shard_lowering.h"

namespace polyred {

struct ShardCheckOptions {
  uint64_t seed = 1;            // random inputs
  uint64_t blockOrderSeed = 1;  // the CPU executor's block order
  bool deterministic = false;
  Target target;
  double timeoutSeconds = 0;  // 0 = none
};

struct ShardSimulation {
  std::vector<HostTensor> outputs;  // the original graph's outputs, whole
  int localKernels = 0;             // lowered kernels run, all ranks and rounds
};

// Runs `s` (lowered from `g`) on `inputs` (whole, in g.inputs order).
ShardSimulation simulateSharded(const Graph& g, const ShardedLowering& s, const std::vector<HostTensor>& inputs,
                                const ShardCheckOptions& options);

struct ShardCheckReport {
  bool ok = true;
  std::string plan;     // ShardedLowering::toString()
  std::string message;  // one line per output
  ShardSimulation simulation;
};

// Lowers, simulates on random inputs and compares with the reference. Throws Error /
// UnsupportedError for a sharding the graph cannot take.
ShardCheckReport checkShardedOnCpu(const Graph& g, const ShardSpec& spec, const ShardCheckOptions& options);

}  // namespace polyred
