// Row cache of row-resident kernels: which loads of the later passes read shared memory.
//
// Takes: a PolyKernel (plan, binding, lanes, loop AST) and the shared memory a block of
// the target may have. Gives: a RowCache -- one shared-memory region per body value
// that pass 0 loads and a later pass loads again, the slots each thread has in it, and
// the bytes (the launch's dynamic shared memory). The emitter keeps those loads in
// pass 0 and reads them back in the later passes (src/device/polyred_row_cache.cuh).
//
// Why: a later pass re-reads its row, which costs L2 bandwidth as large as the DRAM
// stream itself (and DRAM once the resident rows outgrow the L2). Soundness: thread t
// finds its n-th load of a pass in slot n, so the passes must visit the same elements
// in the same order. That is checked on the loop program itself: a value is cached only
// where every later pass's statements sit under the same loops and guards (text) as
// pass 0's, one counter reset per mark, and read it at the same offset expression.
// Anything else (y-reduces, parts of a horizontally fused launch, gathers) keeps the
// global loads.
//
// Policy: off unless asked (KernelConfig `cache=on`, a `polyred tune` candidate). On the
// H100 the row-resident kernels measured are issue-bound, not L2-bound, and the cache
// costs occupancy (shared memory) and instructions: logsumexp f16 [8192,32000] 269.5 us
// without, 270.2 with; softmax f16 [4096,50257] 449.4 vs 600.3; cross-entropy 363.0 vs
// 339.5 (docs/results.md, "session 9").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "poly/poly_kernel.h"

namespace polyred {

struct RowCache {
  struct Region {
    int value = -1;          // the body value (a Load) kept
    std::string packType;    // "PrPack<8, __half>" (lanes) or the storage type (scalar)
    int64_t packBytes = 0;   // one slot
    int64_t offset = 0;      // bytes from the start of the dynamic shared memory
    std::vector<bool> readInPass;  // passes that read it back (pass 0 keeps it)
  };
  std::vector<Region> regions;
  int64_t slotsPerThread = 0;
  int64_t threads = 0;
  int64_t bytes = 0;

  bool empty() const { return regions.empty(); }
  const Region* regionOf(int value) const;
  // "row cache: 1 value(s) x 8 slot(s) per thread x 1024 threads, 131072 bytes of shared
  // memory" (dumps, comments).
  std::string describe() const;
  // The regions in the dynamic shared memory, this thread's number and the slot counter
  // (restarted at each pass's mark, advanced by each point statement); BX: blockDim.x.
  std::string declarations(int BX) const;
  // Where a load of body value v in `pass` goes: pr_load<suffix>'s last argument (this
  // thread's slot) and the suffix ("_kept" in pass 0, "_cached" in a pass that reads the
  // cache), or "" for a plain global load.
  std::string loadKind(int value, int pass, std::string& slot) const;
};

// `sharedLimit`: the block's shared memory on the target minus what the kernel declares
// statically. Empty unless `mode` is On, the kernel is row-resident (passes > 1), an x-
// or all-reduce, and the regions fit.
RowCache planRowCache(const PolyKernel& k, int64_t sharedLimit, RowCacheMode mode);

}  // namespace polyred
