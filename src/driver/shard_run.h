// Sharded runs on GPUs from the tools: compiles a ShardedLowering's local graphs into
// a multigpu::ShardedProgram, and runs it in one process driving N GPUs
// (ncclCommInitAll) on random inputs, checked against the unsharded reference.
//
// Takes: a Graph, a ShardSpec (ranks = GPUs) and options. Gives: a report, or Error
// (exit 2) when fewer GPUs are present than asked for, NoGpuError when there is no GPU
// or no NCCL. NOT RUN YET on a GPU (docs/multigpu.md).
#pragma once

#include <cstdint>
#include <string>

#include "driver/pipeline.h"
#include "multigpu/sharded_runtime.h"
#include "shard/shard_lowering.h"

namespace polyred {

// Every local graph of every rank, every combine graph, compiled by the pipeline.
multigpu::ShardedProgram compileSharded(const ShardedLowering& lowering, const CompileOptions& options);

// The number of CUDA devices (0 without a driver).
int cudaDeviceCount(std::string* whyNone);

struct ShardedGpuRunOptions {
  uint64_t seed = 1;
  bool deterministic = false;
  bool time = true;
  int iterations = 20;
  // false: skip the reference (benchmarks of GiB-sized inputs); ranks must still agree.
  bool check = true;
};

struct ShardedGpuRunReport {
  bool ok = true;
  bool ranksAgree = true;  // every rank ended with the same output bytes
  bool bitwiseRepeatable = true;  // a second launch gave the same bytes
  double micros = 0;  // median wall time of one sharded launch, all GPUs synchronized
  std::string plan;
  std::string message;
};

ShardedGpuRunReport runShardedOnGpus(const Graph& g, const ShardSpec& spec, const ShardedGpuRunOptions& options);

}  // namespace polyred
