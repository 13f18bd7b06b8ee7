// Row stage of row-resident kernels: which loads read their row from shared memory,
// brought there by bulk copies (sm_90's TMA) before the first pass.
//
// Takes: a PolyKernel (plan, binding, lanes, loop AST), the shared memory a block of the
// target may have, the `stage` knob and the target's compute capability. Gives: a
// RowStage -- one shared-memory buffer per body value staged (a load read in two or
// more passes whose rows are contiguous, poly/row_access.h), the mbarriers of its
// chunks, the bytes (the launch's dynamic shared memory) and the code pieces the
// emitter prints (src/device/polyred_row_stage.cuh has the protocol).
//
// Why: a row-resident kernel re-reads its row in each later pass; by default from the
// L2 with loads each thread issues, so a block's later passes keep its threads busy
// while its DRAM traffic waits for the next row. Staged, the row crosses DRAM once by
// copies no thread issues, and the block's compute runs beside the DRAM traffic of the
// other block on its SM. Softmax f16 [4096,50257] on the H100 (2026-11-26): 346 us
// unstaged, 307.5 staged (a plain copy of its bytes: 297.9; docs/results/notes-2026-11-26.md).
//
// Soundness: each block stages one row (one row per block: BY = 1, GX = 1) at the mark
// of pass 0, where the row index is block-uniform (it depends on no loop inside the
// mark and the mark sits under no thread-dependent loop or guard, so the protocol's
// barriers are reached by every thread); a row of an i-tile loop restages after a
// barrier. The first pass waits for each vector's chunk; every thread then waits for
// all chunks before the block reduction's barrier, after which the later passes read
// freely. Parts of a horizontally fused launch and kernels with the row cache do not
// stage.
//
// Policy (auto): stage on sm_90+ where the last pass stores (a last pass that only
// reads -- logsumexp, cross-entropy -- was faster re-reading the L2) and the buffers
// take at most half of a block's shared memory (two blocks of a row each still fit an
// SM). `__launch_bounds__` then asks for the blocks an SM can hold (blocksPerSM), and
// the runtime asks for the whole L1 as shared memory (runtime/executor.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "poly/kernel_config.h"
#include "poly/poly_kernel.h"

namespace polyred {

struct RowStage {
  struct Region {
    int value = -1;        // the body value (a Load) staged
    std::string pointer;   // the kernel parameter it reads ("in0", "tmp1")
    AstExpr rowBase;       // the row's first element offset, over the identifier i
    int64_t bytes = 0;     // its buffer (the row, its alignment shift, rounded to 128)
    int64_t offset = 0;    // the buffer's bytes from the start of the dynamic shared memory
    int64_t chunks = 0;    // bulk copies (and mbarriers) per row
    int64_t barrierOffset = 0;
  };
  std::vector<Region> regions;
  int64_t rowLength = 0;  // N
  int64_t bytes = 0;      // the dynamic shared memory: buffers, then barriers
  // Blocks an SM can hold by threads and shared memory: __launch_bounds__'s minimum, so
  // the registers do not hold fewer (NVRTC gave softmax's staged kernel 34 registers
  // per thread, one 1024-thread block per SM, 461 us instead of two).
  int64_t blocksPerSM = 1;

  bool empty() const { return regions.empty(); }
  const Region* regionOf(int value) const;
  // "row stage: 1 row buffer(s) by bulk copies, 100608 bytes of shared memory"
  std::string describe() const;
  // The buffers and barriers (kernel scope, every thread): "PrRowStage stage<v> = ...".
  std::string declarations() const;
  // Stages row `row` (C text) of every region; `in`: the indentation.
  std::string fillRow(const std::string& row, const std::string& in) const;
  // After pass 0's loop: this thread has seen every chunk of every region land.
  std::string waitAll(const std::string& in) const;
  // The stage variable of a region ("stage3").
  static std::string name(const Region& r) { return "stage" + std::to_string(r.value); }
};

// `sharedPerBlock`: the shared memory a block may have on the target; `staticBytes`:
// what the kernel declares statically. Empty unless the kernel can stage (above) and
// `mode` and the target let it.
RowStage planRowStage(const PolyKernel& k, int64_t sharedPerBlock, int64_t staticBytes, RowStageMode mode,
                      int ccMajor);

// The pass-0 mark's row index (C text) where planRowStage staged, else "": the row index
// of the first point statement under `mark`.
std::string stagedRowAt(const AstNode& mark);

}  // namespace polyred
