// Running a sharded program on several GPUs through NCCL: the runtime room beside
// runtime/ for multi-GPU work (no home-made transport: every byte between GPUs moves
// by NCCL).
//
// Takes: a ShardedProgram -- the ShardedLowering (shard/shard_lowering.h) and, per
// rank, the Programs the pipeline compiled from its local graphs (the driver compiles
// them; this layer never includes the driver) -- plus NCCL communicators and, per local
// rank, the caller's device buffers and CUDA stream. Gives: launch(), which enqueues
// everything on the callers' streams and returns without synchronizing:
//   per round   the local kernels (partials in the accumulator type), then in one NCCL
//               group per round each combine: ncclAllReduce, or ncclAllGather of the
//               partials followed by the combine kernels (rank-order fold);
//   final       the epilogue kernels; outputs that are whole on every rank are written
//               straight into the caller's buffer, split ones into a staging buffer and
//               gathered in rank order by one ncclBroadcast per rank (uneven splits)
//               into the caller's buffer (a strided cuMemcpy2DAsync per rank when the
//               split axis is not the outermost).
// Every rank ends with every output whole.
//
// Two ways to make communicators: one process per GPU (Communicator::initRank with a
// unique id made by rank 0 and passed by the caller, e.g. over MPI or a file), or one
// process driving several GPUs (Communicator::initAll); a ShardedExecutor drives the
// local ranks it is given (one, or all) and groups their NCCL calls as NCCL requires.
//
// NOT RUN YET: this file has been compiled but never executed on a GPU (see
// docs/multigpu.md); the CPU simulation (driver/shard_check.h) checks the plan.
#pragma once

#include <cuda.h>
#include <nccl.h>

#include <memory>
#include <optional>
#include <vector>

#include "codegen/kernel_spec.h"
#include "runtime/executor.h"
#include "shard/shard_lowering.h"

namespace polyred::multigpu {

struct RankPrograms {
  std::vector<Program> rounds;  // per round: the local graph's program
  Program final;
};

struct ShardedProgram {
  ShardedLowering lowering;
  std::vector<RankPrograms> ranks;             // per rank
  std::vector<std::optional<Program>> combines;  // per combine: the combine kernels (all-gather ones)
};

class Communicator {
 public:
  // A new NCCL unique id (rank 0 makes it; the caller sends its bytes to the others).
  static ncclUniqueId newUniqueId();
  // One process per GPU: this process is `rank` of `ranks`, on CUDA device `device`.
  static Communicator initRank(const ncclUniqueId& id, int ranks, int rank, int device);
  // One process, several GPUs: rank k on devices[k].
  static std::vector<Communicator> initAll(const std::vector<int>& devices);

  ~Communicator();
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&&) = delete;
  Communicator(const Communicator&) = delete;

  ncclComm_t comm() const { return comm_; }
  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  int device() const { return device_; }
  CUcontext context() const { return context_; }  // the device's primary context

 private:
  Communicator() = default;
  ncclComm_t comm_ = nullptr;
  int rank_ = 0, ranks_ = 1, device_ = 0;
  CUcontext context_ = nullptr;
};

// The primary context of CUDA device `ordinal` (retained for the process).
CUcontext primaryContext(int ordinal);

class ShardedExecutor {
 public:
  // Loads every program of the given local ranks in their devices' contexts and
  // allocates the partial, gathered, combined and staging buffers.
  ShardedExecutor(const ShardedProgram& program, std::vector<const Communicator*> local);
  ~ShardedExecutor();

  struct RankIo {
    std::vector<void*> inputs;   // per graph input: the rank's slice if split, else the whole tensor
    std::vector<void*> outputs;  // per graph output: the whole output
    CUstream stream = nullptr;
  };
  // io[k] belongs to local rank k (the order given to the constructor).
  void launch(const std::vector<RankIo>& io);

 private:
  struct Local;
  const ShardedProgram& program_;
  std::vector<std::unique_ptr<Local>> locals_;
};

}  // namespace polyred::multigpu
