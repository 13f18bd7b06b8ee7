// The kernel emitter behind emitCuda and emitCudaPart (codegen/cuda_emitter.h), shared
// by the two files that define it; nothing else includes it.
//
// Takes: a Graph, one of its PolyKernels and the CodegenOptions. Gives: the kernel's
// CUDA text -- run(): a KernelSpec with the whole translation unit; part(n): a
// KernelPart for a horizontally fused kernel. codegen/cuda_emitter.cc writes the kernel
// around its loops (header comment, combiners, signature, parameters, declarations)
// and the pieces both files read; codegen/loop_program.cc walks the loop AST and gives
// each statement its meaning (accumulation, block reduction, combine across blocks,
// stores and the epilogue).
#pragma once

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/accumulator_names.h"
#include "codegen/cross_block.h"
#include "codegen/cuda_emitter.h"
#include "codegen/lane_values.h"
#include "codegen/loop_invariants.h"
#include "codegen/row_cache.h"
#include "codegen/row_loads.h"
#include "codegen/row_stage.h"
#include "codegen/scan_emitter.h"

namespace polyred {

// The names of the accumulators come from AccumulatorNames (codegen/accumulator_names.h),
// which also holds the plan (p_) and the accumulator lanes (lanes_).
class KernelEmitter : private AccumulatorNames {
 public:
  KernelEmitter(const Graph& g, const PolyKernel& k, const CodegenOptions& o);

  KernelSpec run();
  KernelPart part(int n);  // (a part of a horizontally fused kernel)

 private:
  // What vector accesses know of vector_ok: checked at run time, or in a loop versioned on it.
  enum class Alignment { Checked, Aligned, Unaligned };

  // --- the kernel around its loops, and what both files read (cuda_emitter.cc) --------
  static std::string comment(const std::string& text);
  static std::string indent(int depth);
  void checkSharedMemory() const;
  void emitCombiners(std::ostream& os);
  void emitHeaderComment(std::ostream& os) const;
  std::vector<KernelPart::Param> emitParams(std::vector<WorkspaceSpec>& workspaces);
  void emitDeclarations(std::ostream& os);
  bool drawsNormals() const;
  CrossBlockAccumulator crossBlockAccumulator(size_t r) const;
  std::vector<CrossBlockAccumulator> crossBlockAccumulators() const;
  ScanCode scanCode() const;
  OperandFacts factsOf(size_t v) const;
  InvariantHoist invariantHoist() const;
  std::string passLoopUnroll() const;

  // Whether a later pass of a row-resident kernel reads reduction r's total.
  bool broadcastsTotal(size_t r) const { return p_.reductions[r].stage + 1 < p_.passes(); }
  std::string shape() const { return std::to_string(k_.binding.BX) + ", " + std::to_string(k_.binding.BY); }
  RowLoads loads() const { return {k_, cache_, stage_}; }

  // --- the loop program (loop_program.cc) ---------------------------------------------
  bool versionsPassLoops() const;
  void emitPassLoop(std::ostream& os, const AstNode& mark, int d, Alignment aligned);
  void emitLoopWith(std::ostream& os, const AstNode& mark, int d, Alignment aligned, LoopInvariants invariants);
  void emitNode(std::ostream& os, const AstNode& n, int d);
  void emitStatement(std::ostream& os, const AstUser& u, int d);
  void emitFinish(std::ostream& os, const AstUser& u, const std::vector<std::string>& totals, const std::string& i,
                  int lane, int d);
  void emitValues(std::ostream& os, const std::vector<BodyValue>& values, const std::string& prefix, const AstUser& u,
                  const std::vector<std::string>& reduced, int d, const std::vector<bool>* evaluated = nullptr,
                  size_t firstOffset = 0);
  void emitLanes(std::ostream& os, const AstUser& u, int d);
  bool loadsAcrossRows() const;
  LaneValuesSite laneSite(const AstUser& u, std::string vectorOk, bool masked, const std::string& in);
  void emitLaneBody(std::ostream& os, const AstUser& u, int d, const std::string& vectorOk, bool masked);
  void emitBody(std::ostream& os, const AstUser& u, int d);

  // x-reduce and all-reduce combine along threadIdx.x (one row per threadIdx.y). The
  // "allreduce" variants leave the total in every thread of the row.
  std::string blockReduceFn(bool everyThread) const {
    return std::string(everyThread ? "block_allreduce_" : "block_reduce_") + (y_ ? "y" : "x");
  }
  bool hoisted(size_t v) const { return v < invariants_.values.size() && invariants_.values[v]; }
  bool divisorHoisted(size_t v) const {
    return std::find(invariants_.divisions.begin(), invariants_.divisions.end(), v) != invariants_.divisions.end();
  }
  // Whether the kernel's pointers allow vector accesses: "false", "true" or "vector_ok".
  std::string alignedCondition() const {
    return alignment_ == Alignment::Unaligned ? "false" : alignment_ == Alignment::Aligned ? "true" : "vector_ok";
  }
  // The condition for a vector (a masked one: `whole` in its row) to move as one access.
  std::string vectorCondition(bool masked) const {
    return masked ? conjunction(alignedCondition(), "whole") : alignedCondition();
  }

  const Graph& g_;
  const PolyKernel& k_;
  CodegenOptions o_;
  std::string idx_;
  bool y_ = false;
  bool scan_ = false;  // a scan kernel (KernelPlan::hasScan)
  Alignment alignment_ = Alignment::Checked;  // of the vector accesses being emitted
  CrossBlockKernel crossBlock_;  // the kernel as the combine across blocks sees it
  bool lanesTogether_ = false;  // a y-reduce's lanes reduce in one block reduction (reducesLanesTogether)
  bool dynamicArrays_ = false;  // the block reductions' arrays in dynamic shared memory (reductionArraysAreDynamic)
  std::string qualifier_;  // "polyred_part<n>::" for the types of a part's parameters
  RowCache cache_;  // empty in parts of a horizontally fused kernel
  int guards_ = -1;  // the Ifs around the node being emitted inside a pass's loops (-1: outside)
  RowStage stage_;  // likewise
  std::vector<bool> fastExp_;  // per body value: an Exp computed fast (codegen/exp_range.h)
  std::vector<bool> coarseQuotient_;  // per body value: a Div only rounded to 16 bits (codegen/coarse_results.h)
  std::vector<bool> ofTotals_;  // per body value: computed from earlier totals alone (loop_invariants.h)
  LoopInvariants invariants_;  // what the enclosing pass loop computed before it (loop_invariants.h)
  std::vector<bool> roundedByStore_;  // per body value: its rounding left to its stores (codegen/store_rounding.h)
};

}  // namespace polyred
