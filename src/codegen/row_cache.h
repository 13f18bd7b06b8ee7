// Row cache of row-resident kernels: which loads of the later passes read what pass 0
// kept, in shared memory or in registers -- and, in registers, which results of an
// earlier pass a later one reads instead of computing them again.
//
// Takes: a PolyKernel (plan, binding, lanes, loop AST) and the shared memory a block of
// the target may have. Gives: a RowCache -- one region per body value that pass 0 loads
// and a later pass loads again, the slots each thread has in it, and the bytes (the
// launch's dynamic shared memory; 0 in registers). The emitter keeps those loads in
// pass 0 and reads them back in the later passes (src/device/polyred_row_cache.cuh).
//
// In registers (`cache=regs`): each region is an array of the thread's own, indexed by
// the slot counter. It stays in registers only if every index is a constant once the
// pass loops are unrolled, so the plan asks that every loop between a pass's mark and
// its statements has constant bounds (or bounds of the thread's coordinates around one
// statement: boundAsGuard) and every guard there holds one statement and no loop; the
// emitter unrolls the pass loops fully and advances the counter after the guard,
// whether its statement ran or not (a thread past the row's end skips a slot in every
// pass alike). The regions take at most kRegisterCacheBytes a thread.
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
// Policy (auto): in registers where the kernel makes three passes or more (two re-reads
// saved) and is not staged (codegen/row_stage.h), if the conditions above hold; else
// none. On the H100 (2026-11-27, docs/results/notes-2026-11-27.md): layer norm f16
// [8192,1024] 19.8 -> 18.5 us, f32 [8192,1024] 31.5 -> 27.7, softmax f16 [8192,1024]
// 19.5 -> 16.8, layer norm and softmax f16 [4096,4096] within 1%; with two passes it
// costs more occupancy than the one re-read it saves (RMS norm f16 [8192,1024] 15.2 ->
// 16.7), and a staged softmax f16 [2048,8192] is faster staged (28.4 against 29.7).
// Results (in registers, vector lanes only): a later pass that evaluates a value an
// earlier pass computed -- an op of the row's elements, not of totals and constants
// alone (those are hoisted: codegen/loop_invariants.h), computed through a division or
// a transcendental function (a few additions or a cast cost less than the registers of
// a second copy of the row) -- where the value is what the later pass's own new values
// or its folds and stores read, reads it from a slot the first pass computing it kept,
// and does not evaluate what only fed it (its loads need no slot then). A softmax's last pass reads exp(x - max) and divides, where it took
// x's slot and computed the Exp again. Same soundness condition: the two passes'
// statements sit under the same loops and guards. Each thread holds the results at the
// value's storage type (exact: a value is already rounded to its type). If the results
// and loads together pass kRegisterCacheBytes, the plan keeps the loads alone.
// Why: the short-row softmax of bert (16613891787345259176, [24576,128] f16, three
// passes) is bound by instructions issued, not by DRAM (docs/results/notes-2026-11-30.md).
//
// In shared memory (`cache=on`) only when asked: the row-resident kernels measured are
// issue-bound, not L2-bound, and that cache costs occupancy and instructions:
// logsumexp f16 [8192,32000] 269.5 us without, 270.2 with; softmax f16 [4096,50257]
// 449.4 vs 600.3; cross-entropy 363.0 vs 339.5 (docs/results/notes-2026-11-25.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "poly/poly_kernel.h"

namespace polyred {

struct RowCache {
  struct Region {
    int value = -1;          // the body value kept: a Load, or a result (an Op)
    std::string packType;    // "PrPack<8, __half>" (lanes) or the storage type (scalar)
    int64_t packBytes = 0;   // one slot
    int64_t offset = 0;      // bytes from the start of the dynamic shared memory
    bool result = false;     // an Op's lanes (vector kernels in registers only)
    int keptInPass = 0;      // a load's: 0; a result's: the first pass computing it
    std::vector<bool> readInPass;  // later passes that read it back
  };
  std::vector<Region> regions;
  // Per pass, the body values it evaluates (KernelPlan::valuesOfPass, the results it
  // reads taken as given); empty: every pass evaluates its values as the plan says.
  std::vector<std::vector<bool>> evaluatedInPass;
  bool registers = false;  // each thread's arrays, not shared memory
  int64_t slotsPerThread = 0;
  int64_t threads = 0;
  int64_t bytes = 0;

  bool empty() const { return regions.empty(); }
  const Region* regionOf(int value) const;
  // The body values `pass` evaluates (evaluatedInPass, else the plan's).
  std::vector<bool> valuesOfPass(const KernelPlan& plan, int pass) const;
  // For result `value` (an Op) in `pass`: "" when the pass computes it with nothing to
  // keep, else the statement (at indentation `in`) that keeps its lanes `v<value>` in
  // this thread's slot (the keeping pass) or reads them from there (a reading pass).
  // (the read continues the line of its declaration: no indentation)
  std::string resultKeep(int value, int pass, int width, const std::string& in) const;
  std::string resultRead(int value, int pass, int width) const;
  // "row cache: 1 value(s) x 8 slot(s) per thread x 1024 threads, 131072 bytes of shared
  // memory" (dumps, comments).
  std::string describe() const;
  // The regions (in the dynamic shared memory, or the thread's arrays), this thread's
  // number and the slot counter (restarted at each pass's mark, advanced by each point
  // statement); BX: blockDim.x.
  std::string declarations(int BX) const;
  // Where a load of body value v in `pass` goes: pr_load<suffix>'s last argument (this
  // thread's slot) and the suffix ("_kept" in pass 0, "_cached" in a pass that reads the
  // cache), or "" for a plain global load.
  std::string loadKind(int value, int pass, std::string& slot) const;
  // The slot counter's advance (C text at indentation `in`, or "") after a point
  // statement (`guarded`: under an If), and after an outermost If of the pass loops.
  std::string advanceAfterStatement(bool guarded, const std::string& in) const;
  std::string advanceAfterGuard(const std::string& in) const;
  // In registers, for a pass loop `loop` whose trip count depends on the thread (isl
  // folds a row's end into the bound: c1 <= 4 - (tx + 35) / 32): the loop condition for
  // the most trips any thread of a BX x BY block makes ("(c1 <= 3)"), the original
  // condition becoming the statement's guard; else "".
  std::string boundAsGuard(const AstNode& loop, int64_t BX, int64_t BY) const;
  // The pass loops' unroll pragma argument: " <factor>", or "" (whole) in registers.
  std::string passLoopUnroll(int factor) const;
};

// The most bytes a thread keeps in registers (32 registers), and the fewest passes for
// which the policy keeps a row there.
inline constexpr int64_t kRegisterCacheBytes = 128;
inline constexpr int kRegisterCachePasses = 3;

// `sharedLimit`: the block's shared memory on the target minus what the kernel declares
// statically. Empty unless `mode` is On or Registers (or Auto, by the policy above), the
// kernel is row-resident (passes > 1), an x- or all-reduce, and the regions fit.
RowCache planRowCache(const PolyKernel& k, int64_t sharedLimit, RowCacheMode mode);

}  // namespace polyred
