// The body values of one vectorized statement instance, as arrays over its V lanes.
//
// Takes: the kernel, the instance (its offsets: one per access as poly/schedule.h
// orders them), where contiguous loads read (codegen/row_loads.h) and what the kernel
// emitter knows of totals and operands. Gives: `v<k>[V]` for every body value the
// instance evaluates -- loads one vector access (Contiguous), one scalar for all lanes
// (Invariant) or one element per lane (Gather); with masked lanes only lanes [lo, hi)
// load, lo and hi being the emitter's -- and the number of offsets they used (the
// stores' offsets follow). Sums, differences and products of float16 values are also
// computed on half pairs, `hv<k>[V/2]` (bit for bit the float op rounded to half), and
// a float16 load that such an op or a pair fold (pairFoldSource) reads loads as half
// pairs, its float lanes unpacked from them.
// A scan kernel evaluates its body in two calls: the values up to the scan's input,
// then (from the offsets the first left) those computed from the running fold.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/cuda_expr.h"
#include "codegen/row_loads.h"
#include "poly/poly_kernel.h"

namespace polyred {

struct LaneValuesSite {
  const PolyKernel& kernel;
  const AstUser& instance;
  RowLoads loads;
  std::vector<bool> evaluated;  // per body value (KernelPlan::valuesOfPass; RowCache::valuesOfPass)
  // Those whose offsets the instance lists (KernelPlan::valuesOfPass), where the row
  // cache's results leave some unevaluated; empty: `evaluated`.
  std::vector<bool> annotated;
  std::string vectorOk;         // "vector_ok" (or its value in a versioned loop), with masked lanes "... && whole"
  // Masked rows of a reduction whose consumers all mask their lanes by [lo, hi): the
  // alignment part of vectorOk ("vector_ok", "true", "false") and the graph, whose input
  // tensors bound the loads; a contiguous load of an input then takes its whole aligned
  // vector wherever that lies inside the tensor (pr_load_lanes_flat). Null: only vectors
  // whole in their row load as one.
  std::string alignedOk;
  const Graph* graph = nullptr;
  bool masked = false;
  // Invariant loads only where some lane lies in the row: a scan's tile padding may
  // address beyond the tensor (poly/schedule.cc).
  bool guardInvariant = false;
  std::function<std::string(int)> total;        // a Reduced value: that reduction's total
  std::function<OperandFacts(size_t)> facts;    // per body value
  std::function<bool(size_t)> hoisted;          // computed before the loop: inv<k> (codegen/loop_invariants.h)
  std::string indent;
  size_t firstOffset = 0;  // the instance's offsets before are other values'
  std::string scanned;     // a scan kernel's running fold: the array of its lanes
  std::vector<bool>* paired = nullptr;  // out, per body value: held as half pairs `hv<k>` too
};

size_t emitLaneValues(std::ostream& os, const LaneValuesSite& site);

// The bounds of a masked vector (Vectorization::masked) whose lane 0 is at `pos` of a
// row of `extent` elements: `pos`, lanes [lo, hi) inside the row, and `whole` (all V
// of them; computed from pos itself, so lo and hi are left to the partial vectors;
// unused where the loads take vectors across rows and the folds mask their lanes).
std::string maskedLaneBounds(const std::string& pos, int64_t extent, int width, const std::string& indent);

// The float16 value whose V lanes reduction r folds as half pairs at `site`
// (pr_fold_max_pairs / pr_fold_min_pairs: a Max or Min into a float accumulator of a
// float16 load from a staged row, or of its exact cast to float32), or -1. The vector's
// lanes must fold into one accumulator (Vectorization::accumulatorLanes 1, not a scan).
// Staged softmax kernels ran 8-10% faster so; from global memory, with the volatile
// pair loads of then (issued in order: its unrolled vectors' loads no longer
// overlapped), the first pass of logsumexp f16 [8192,32000] ran 3-4% slower (H200,
// 2026-11-29). With the plain global pair loads of since, under 0.5% either way
// (logsumexp and cross-entropy, H200, 2026-11-29): not taken.
int pairFoldSource(const LaneValuesSite& site, size_t r);

}  // namespace polyred
