#include "codegen/cuda_emitter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "codegen/accumulator_names.h"
#include "codegen/alignment_check.h"
#include "codegen/cross_block.h"
#include "codegen/coarse_results.h"
#include "codegen/exp_range.h"
#include "codegen/gather_lanes.h"
#include "codegen/lane_values.h"
#include "codegen/loop_invariants.h"
#include "codegen/row_loads.h"
#include "codegen/symbolic_launch.h"
#include "codegen/scan_emitter.h"
#include "codegen/shared_memory.h"
#include "codegen/store_rounding.h"
#include "codegen/tile_code.h"
#include "codegen/tuple_emitter.h"
#include "ir/tuple_reduction.h"
#include "poly/launch_policy.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

// The only way text derived from the user's graph (tensor and reduction names, the
// partitioner's explanations that quote them) enters generated source: as the rest of
// a // comment line, which printable() cannot end, extend or cut short. Identifiers
// in the code are polyred's own numbering (in3, out0, v7, polyred_k0_reduce).
std::string comment(const std::string& text) { return printable(text, 400); }

std::string indent(int depth) { return std::string(static_cast<size_t>(depth) * 2, ' '); }

// What vector accesses know of vector_ok: checked at run time, or in a loop versioned on it.
enum class Alignment { Checked, Aligned, Unaligned };

// The names of the accumulators come from AccumulatorNames (codegen/accumulator_names.h),
// which also holds the plan (p_) and the accumulator lanes (lanes_).
class KernelEmitter : private AccumulatorNames {
 public:
  KernelEmitter(const Graph& g, const PolyKernel& k, const CodegenOptions& o)
      : AccumulatorNames(k.plan, k.vector.accumulatorLanes),
        g_(g),
        k_(k),
        o_(o),
        fastExp_(fastExps(k.plan)),
        coarseQuotient_(coarseQuotients(k.plan)),
        ofTotals_(valuesOfTotals(k.plan)),
        roundedByStore_(roundedByStores(k.plan, g)) {
    idx_ = k.index64 ? "long long" : "int";
    y_ = p_.form == CanonicalForm::YReduce;
    scan_ = p_.hasScan();
    lanesTogether_ = reducesLanesTogether(k);
    dynamicArrays_ = reductionArraysAreDynamic(k);
    // Tuples cannot use atomics: their blocks always combine through the partials, in block order
    // (device/polyred_reduce.cuh, "Protocol"); so do complex products (no atomic multiplies two
    // floats at once) and kernels whose binding chose the partials (Binding::partials).
    o_.deterministic = o_.deterministic || p_.needsBlockOrderCombine() || k.binding.partials;
    crossBlock_ = {.yReduce = y_, .partials = o_.deterministic, .M = p_.M, .GX = k.binding.GX,
                   .tiles = k.binding.tiles, .BX = k.binding.BX, .BY = k.binding.BY, .lanes = lanes_,
                   .lanesTogether = lanesTogether_, .index = idx_};
  }

  KernelSpec run() {
    checkSharedMemory();
    const int64_t staticBytes = staticSharedBytes(k_);
    // A cache asked for comes first, then the row stage, then the policy's cache; none
    // where the reductions' own arrays take the dynamic shared memory.
    const int64_t cacheLimit = o_.sharedBytesPerBlock - staticBytes;
    if (!dynamicArrays_ && o_.rowCache != RowCacheMode::Auto) cache_ = planRowCache(k_, cacheLimit, o_.rowCache);
    if (!dynamicArrays_ && cache_.empty())
      stage_ = planRowStage(k_, o_.sharedBytesPerBlock, staticBytes, o_.rowStage, o_.ccMajor);
    if (!dynamicArrays_ && o_.rowCache == RowCacheMode::Auto && stage_.empty())
      cache_ = planRowCache(k_, cacheLimit, o_.rowCache);
    KernelSpec spec;
    spec.launch.dynamicSharedBytes = static_cast<uint32_t>(cache_.bytes + stage_.bytes + dynamicReductionBytes(k_));
    spec.name = p_.name;
    spec.launch.grid = {static_cast<uint32_t>(k_.binding.GX), static_cast<uint32_t>(k_.binding.GY), 1};
    spec.launch.block = {static_cast<uint32_t>(k_.binding.BX), static_cast<uint32_t>(k_.binding.BY), 1};
    spec.launch.rows = gridRuleOf(k_);
    std::ostringstream os;
    emitHeaderComment(os);
    os << deviceLibraryPrelude(o_, scan_);
    if (!cache_.empty()) os << "#include \"polyred_row_cache.cuh\"\n\n";
    if (!stage_.empty()) os << "#include \"polyred_row_stage.cuh\"\n\n";
    emitCombiners(os);
    // A row stage sets its own blocks per SM; other kernels leave them to the runtime.
    spec.registerFit = stage_.empty() ? o_.registerFit : RegisterFitMode::Off;
    os << "extern \"C\" __global__ void "
       << launchBounds(k_.binding.threadsPerBlock(), spec.registerFit, stage_.empty() ? 0 : stage_.blocksPerSM) << " "
       << p_.name << "(";
    std::vector<KernelPart::Param> params = emitParams(spec.workspaces);
    for (size_t k = 0; k < params.size(); ++k) {
      os << (k ? ",\n    " : "\n    ") << params[k].declaration;
      spec.params.push_back(params[k].param);
    }
    os << ") {\n";
    if (k_.binding.multiBlockScan())  // bx: the chunk of its rows the block takes (Init)
      os << "  " << idx_ << " bx = 0;\n  const " << idx_ << " by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;\n";
    else os << "  const " << idx_ << " bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;\n";
    emitDeclarations(os);
    emitNode(os, *k_.ast, 1);
    os << "}\n";
    spec.source = os.str();
    return spec;
  }

  // The kernel as namespace polyred_part<n> { run(bx, by, params...) } for flat blocks of
  // BX * BY threads: the caller (a horizontally fused kernel) gives the block coordinates.
  KernelPart part(int n) {
    checkSharedMemory();
    POLYRED_CHECK(!dynamicArrays_, p_.name << ": a kernel whose reductions need dynamic shared memory in a fused launch");
    KernelPart kp;
    // The parameters are also declared by the fused kernel, outside the namespace.
    qualifier_ = "polyred_part" + std::to_string(n) + "::";
    kp.params = emitParams(kp.workspaces);
    std::ostringstream os;
    emitHeaderComment(os);
    os << "namespace polyred_part" << n << " {\n\n";
    emitCombiners(os);
    const bool chunked = k_.binding.multiBlockScan();  // bx is then the chunk the block takes (Init)
    os << "__device__ __forceinline__ void run(const " << idx_ << (chunked ? " block_x" : " bx") << ", const " << idx_ << " by";
    for (const KernelPart::Param& p : kp.params) os << ",\n    " << p.declaration;
    os << ") {\n";
    os << "  const " << idx_ << " tx = threadIdx.x % " << k_.binding.BX << ", ty = threadIdx.x / " << k_.binding.BX
       << ";  // flat block of " << k_.binding.threadsPerBlock() << " threads\n";
    if (chunked) os << "  " << idx_ << " bx = 0;\n";
    emitDeclarations(os);
    emitNode(os, *k_.ast, 1);
    os << "}\n\n}  // namespace polyred_part" << n << "\n";
    kp.code = os.str();
    return kp;
  }

 private:
  // Many reductions in one kernel (or wide tuple accumulators) can need more shared
  // memory than a block may have even dynamically on the target.
  void checkSharedMemory() const {
    const int64_t bytes = dynamicArrays_ ? dynamicReductionBytes(k_) : staticSharedBytes(k_);
    const int64_t limit = dynamicArrays_ ? o_.sharedBytesPerBlock : kMaxStaticSharedBytes;
    if (bytes > limit)
      throw UnsupportedError(g_.sourceFile, p_.name,
                             "its " + std::to_string(p_.reductions.size()) + " reductions need " + std::to_string(bytes) +
                                 " bytes of shared memory, more than a block's " + std::to_string(limit / 1024) +
                                 " KiB on this target");
  }

  void emitCombiners(std::ostream& os) {
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      const Reduction& red = p_.reductions[r].reduction;
      if (red.isTuple()) {
        os << tupleDefinitions(red, static_cast<int>(r), static_cast<int>(holder(r)));
        continue;
      }
      if (red.builtin() != BuiltinCombiner::None) continue;
      os << "// user-defined reduction " << comment(quotedName(red.name) + ": " + toString(*red.combiner)) << "\n";
      os << "struct Combine" << r << " {\n  __device__ " << accType(r) << " operator()(" << accType(r) << " a, "
         << accType(r) << " b) const { return " << scalarExprToCuda(*red.combiner, red.accType) << "; }\n};\n\n";
    }
  }

  void emitHeaderComment(std::ostream& os) const {
    os << "// Generated by polyred: " << p_.name << " (" << formName(p_.form) << ", i < "
       << (p_.symbolicRows ? p_.symbolicRows->extent() : std::to_string(p_.M)) << ", j < " << p_.N
       << ")\n// " << comment(p_.why) << "\n// " << k_.binding.toString() << (o_.deterministic ? ", deterministic" : "")
       << "\n" << (cache_.empty() ? "" : "// " + cache_.describe() + "\n")
       << (stage_.empty() ? "" : "// " + stage_.describe() + "\n")
       << (k_.tiling.empty() ? "" : "// " + comment(k_.tiling.describe(p_)) + "\n");
  }

  // The kernel's parameters: its pointers (codegen/kernel_params), then its workspaces
  // (whose specs are appended to `workspaces`).
  std::vector<KernelPart::Param> emitParams(std::vector<WorkspaceSpec>& workspaces) {
    std::vector<KernelPart::Param> params = pointerParams(g_, p_);
    for (ParamDeclaration& size : sizeParams(p_)) params.push_back(std::move(size));
    if (k_.binding.multiBlock())
      addCrossBlockWorkspaces(crossBlock_, crossBlockAccumulators(), params, workspaces);
    if (k_.binding.multiBlockScan())
      for (ScanWorkspace& w : scanWorkspaces(scanCode())) {
        params.push_back({{KernelParam::Kind::Workspace, static_cast<int>(workspaces.size())}, w.type + w.name, w.name});
        workspaces.push_back(std::move(w.spec));
      }
    return params;
  }

  // x-reduce and all-reduce combine along threadIdx.x (one row per threadIdx.y). The
  // "allreduce" variants leave the total in every thread of the row.
  std::string blockReduceFn(bool everyThread) const {
    return std::string(everyThread ? "block_allreduce_" : "block_reduce_") + (y_ ? "y" : "x");
  }

  // Whether a later pass of a row-resident kernel reads reduction r's total.
  bool broadcastsTotal(size_t r) const { return p_.reductions[r].stage + 1 < p_.passes(); }

  std::string shape() const { return std::to_string(k_.binding.BX) + ", " + std::to_string(k_.binding.BY); }

  void emitDeclarations(std::ostream& os) {
    const std::string smemSize = lanesTogether_ ? "smem_y_lanes<" + shape() + ", " + std::to_string(lanes_) + ">()"
                                                : (y_ ? "smem_y<" : "smem_x<") + shape() + ">()";  // block reductions
    if (dynamicArrays_) os << dynamicArrayBuffer();
    const std::vector<ReductionArrays> carved = dynamicArrays_ ? reductionArrays(k_) : std::vector<ReductionArrays>{};
    int64_t offset = 0;  // into the dynamic buffer
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      if (!owns(r)) continue;
      if (scan_) {  // a carry per thread; no block reduction
        os << "  " << scanSharedMemory(scanCode()) << "  " << accType(r) << " acc" << r << ";\n";
        continue;
      }
      os << reductionArrayDeclarations(k_, r, accType(r), "polyred_dev::" + smemSize, broadcastsTotal(r),
                                       dynamicArrays_ ? &carved : nullptr, offset);
      os << "  " << accType(r) << " acc" << r << (lanes_ > 1 ? "[" + std::to_string(lanes_) + "]" : "") << ";\n";
    }
    if (k_.binding.multiBlock()) os << "  bool last_block = false;\n";
    if (k_.vector.strided) os << "  const bool vector_ok = false;  // lanes down a column: element by element\n";
    else if (k_.vector.width > 1 || k_.tiling.Vb > 1) os << "  " << alignmentCheck(k_) << "\n";
    else if (scan_) os << "  const bool vector_ok = false;  // one lane: element by element\n";
    if (!cache_.empty()) os << cache_.declarations(k_.binding.BX);
    if (!stage_.empty()) os << stage_.declarations();
    if (drawsNormals()) os << "  PrPhiloxMemo " << kPhiloxMemo << ";  // the Philox block this thread drew last\n";
    if (!k_.tiling.empty()) os << tileDeclarations(k_, "  ");
  }

  bool drawsNormals() const {
    auto normal = [](const BodyValue& v) { return v.kind == BodyValue::Kind::Op && v.op == OpKind::PhiloxNormal; };
    return std::any_of(p_.body.begin(), p_.body.end(), normal) ||
           std::any_of(p_.epilogue.begin(), p_.epilogue.end(), normal);
  }

  // --- the loop program --------------------------------------------------------------
  // Vector accesses whose alignment is checked at run time go through a loop of their
  // own per answer: with the check inside, NVRTC kept a branch around every access of
  // the unrolled loop, one load in flight per thread. Gains and losses measured (H100,
  // docs/design/schedule-and-binding.md "Vector lanes", docs/results/notes-2026-11-28.md): all-reduces lost, and
  // row-resident kernels (their register-cached passes duplicated whole) keep the branch.
  bool versionsPassLoops() const {
    return k_.vector.width > 1 && !k_.vector.strided && !scan_ && p_.passes() == 1 &&
           p_.form != CanonicalForm::AllReduce;
  }

  // The accumulation and pointwise loops of a pass: unrolled so each thread keeps
  // several independent loads in flight (the loads do not depend on the accumulator);
  // `aligned` is what the loop's vector accesses know of vector_ok. What the loop does
  // not change is computed before it, in a scope of the loop's own (loop_invariants.h).
  void emitPassLoop(std::ostream& os, const AstNode& mark, int d, Alignment aligned) {
    const InvariantHoist h = invariantHoist();
    LoopInvariants invariants = loopInvariantsUnder(h, *mark.children[0]);
    const std::string hoist = hoistInvariants(h, invariants, indent(d + 1));
    if (!hoist.empty()) {
      os << indent(d) << "{\n" << hoist;
      emitLoopWith(os, mark, d + 1, aligned, std::move(invariants));
      os << indent(d) << "}\n";
    } else {
      emitLoopWith(os, mark, d, aligned, std::move(invariants));
    }
  }
  void emitLoopWith(std::ostream& os, const AstNode& mark, int d, Alignment aligned, LoopInvariants invariants) {
    if (!cache_.empty()) os << indent(d) << "cache_slot = 0;  // this pass's loads take slots 0, 1, ...\n";
    const Alignment outerAligned = std::exchange(alignment_, aligned);
    const int outerGuards = std::exchange(guards_, 0);
    LoopInvariants outerInvariants = std::exchange(invariants_, std::move(invariants));
    // A loop whose last iteration only some threads run comes as the loop over the
    // iterations all threads run, then that guarded one (poly/schedule, separated
    // accumulation loops): each loop of the block is unrolled.
    const AstNode& loops = *mark.children[0];
    for (const auto& part : loops.kind == AstNode::Kind::Block ? loops.children : mark.children) {
      if (part->kind == AstNode::Kind::For) os << indent(d) << "#pragma unroll" << passLoopUnroll() << "\n";
      emitNode(os, *part, d);
    }
    invariants_ = std::move(outerInvariants);
    guards_ = outerGuards;
    alignment_ = outerAligned;
  }
  bool hoisted(size_t v) const { return v < invariants_.values.size() && invariants_.values[v]; }
  bool divisorHoisted(size_t v) const {
    return std::find(invariants_.divisions.begin(), invariants_.divisions.end(), v) != invariants_.divisions.end();
  }

  void emitNode(std::ostream& os, const AstNode& n, int d) {
    switch (n.kind) {
      case AstNode::Kind::Block:
        for (const auto& c : n.children) emitNode(os, *c, d);
        return;
      case AstNode::Kind::Mark: {
        os << indent(d) << "// mark: " << n.mark << "\n";
        const std::string stagedRow = stage_.empty() ? "" : stagedRowAt(n);  // pass 0 of a staged kernel
        if (!stagedRow.empty()) os << stage_.fillRow(stagedRow, indent(d));
        if (isPassLoopMark(n) && versionsPassLoops()) {
          os << indent(d) << "if (vector_ok) {  // one loop per alignment (a branch per access kept loads apart)\n";
          emitPassLoop(os, n, d + 1, Alignment::Aligned);
          os << indent(d) << "} else {\n";
          emitPassLoop(os, n, d + 1, Alignment::Unaligned);
          os << indent(d) << "}\n";
        } else if (isPassLoopMark(n)) {
          emitPassLoop(os, n, d, Alignment::Checked);
        } else {
          emitNode(os, *n.children[0], d);
        }
        if (!stagedRow.empty()) os << stage_.waitAll(indent(d));
        return;
      }
      case AstNode::Kind::For: {
        // A row cache in registers runs a thread-dependent trip count as a constant one
        // with the bound as the guard of its statement (codegen/row_cache.h).
        const std::string bound = guards_ == 0 ? cache_.boundAsGuard(n, k_.binding.BX, k_.binding.BY) : "";
        os << indent(d) << "for (" << idx_ << " " << n.iterator << " = " << toC(n.init) << "; "
           << (bound.empty() ? toC(n.cond) : bound) << "; " << n.iterator << " += " << toC(n.inc) << ") {\n";
        if (bound.empty()) {
          emitNode(os, *n.children[0], d + 1);
        } else {  // guards_ goes 0 -> 1 -> 0 around the statement
          os << indent(d + 1) << "if " << toC(n.cond) << " {\n";
          ++guards_;
          emitNode(os, *n.children[0], d + 2);
          --guards_;
          os << indent(d + 1) << "}\n" << cache_.advanceAfterGuard(indent(d + 1));
        }
        os << indent(d) << "}\n";
        return;
      }
      case AstNode::Kind::If: {
        // A guard whose statements emit nothing (a Contribute done by the block
        // reduction) is left out, outside the pass loops (which count their guards).
        std::ostringstream then;
        if (guards_ >= 0) ++guards_;
        emitNode(then, *n.children[0], d + 1);
        if (then.str().empty() && n.children.size() == 1 && guards_ < 0) return;
        os << indent(d) << "if " << toC(n.cond) << " {\n" << then.str();
        if (n.children.size() > 1) {
          os << indent(d) << "} else {\n";
          emitNode(os, *n.children[1], d + 1);
        }
        os << indent(d) << "}\n";
        if (guards_ > 0 && --guards_ == 0) os << cache_.advanceAfterGuard(indent(d));
        return;
      }
      case AstNode::Kind::User: emitStatement(os, n.user, d); return;
    }
  }

  void emitStatement(std::ostream& os, const AstUser& u, int d) {
    const std::string& s = u.statement;
    if (s == "Red" || s == "Apply" || s == "Elem" || s == "Fold") return emitBody(os, u, d);
    if (s == "Stage") return emitTileStage(os, k_, u, indent(d), vectorCondition(false));
    if (s == "Sync") {  // a tiled transpose's tiles: written, then read (Sync_1: before the next tile's Stage)
      os << indent(d) << "__syncthreads();\n";
      return;
    }
    std::string i = u.coords.empty() ? "" : toC(u.coords[0]);
    std::string in = indent(d);
    if (s == "Init") {
      if (k_.binding.multiBlockScan()) os << scanTakeChunk(i, in);
      for (size_t r = 0; r < p_.reductions.size(); ++r)
        for (int l = 0; l < lanes_ && owns(r); ++l)
          os << in << acc(r, l) << " = " << identity(r) << ";  // Init\n";
    } else if (s == "LookBack") {
      os << scanLookBack(scanCode(), i, in);
    } else if (s == "BlockReduce") {
      // A y-reduce's lanes (columns of their own) reduce together; other lanes one after
      // another through the same shared memory (each block reduction begins with a barrier).
      for (size_t r = 0; r < p_.reductions.size(); ++r) {
        if (p_.reductions[r].stage != u.pass || !owns(r)) continue;
        bool everyThread = broadcastsTotal(r);
        if (lanesTogether_ && k_.binding.multiBlock()) {
          emitContributeLanes(os, crossBlock_, crossBlockAccumulator(r), i, in);
        } else if (lanesTogether_) {
          os << in << "polyred_dev::block_reduce_y_lanes<" << accType(r) << ", " << functor(r) << ", " << shape() << ", "
             << lanes_ << treePolicy(r) << ">(acc" << r << ", " << op(r) << ", smem" << r << ");\n";
        } else {
          for (int l = 0; l < lanes_; ++l)
            os << in << acc(r, l) << " = polyred_dev::" << blockReduceFn(everyThread) << "<" << accType(r) << ", "
               << functor(r) << ", " << shape() << treePolicy(r) << ">(" << acc(r, l) << ", " << op(r) << ", smem" << r
               << (everyThread ? ", totals" + std::to_string(r) : "") << ");\n";
        }
      }
    } else if (s == "Store") {
      for (int l = 0; l < lanes_; ++l) {
        std::vector<std::string> totals;
        for (size_t r = 0; r < p_.reductions.size(); ++r) totals.push_back(acc(holder(r), l));
        emitFinish(os, u, totals, row(i, l), l, d);
      }
    } else if (s == "Contribute") {
      std::vector<std::string> rowOfLane;
      for (int l = 0; l < lanes_; ++l) rowOfLane.push_back(row(i, l));
      emitContribute(os, crossBlock_, crossBlockAccumulators(), rowOfLane, in);
    } else if (s == "Arrive") {
      os << in << "last_block = polyred_dev::block_arrive_last(&tickets[" << i << "], " << k_.binding.GX << "u);\n";
      if (o_.deterministic) emitGatherPartials(os, crossBlock_, crossBlockAccumulators(), i, indent(d));
    } else if (s == "Final") {
      os << in << "if (last_block) {\n";
      for (int l = 0; l < lanes_; ++l) {
        const std::string at = row(i, l), suffix = lanes_ > 1 ? "_" + std::to_string(l) : "";
        std::vector<std::string> totals;
        for (size_t r = 0; r < p_.reductions.size(); ++r) {
          if (o_.deterministic) {  // gathered at the Arrive
            totals.push_back(acc(holder(r), l));
            continue;
          }
          std::string v = "total" + std::to_string(holder(r)) + suffix;
          totals.push_back(v);
          if (owns(r))
            os << in << "  " << accType(r) << " " << v << " = polyred_dev::take_and_reset(&ws" << r << "[" << at
               << "], " << emitLiteral(p_.reductions[r].reduction.identity) << ");\n";
        }
        emitFinish(os, u, totals, at, l, d + 1);
      }
      os << in << "}\n";
    } else {
      POLYRED_CHECK(false, "unknown statement " << s);
    }
  }

  // The accumulators the blocks combine (codegen/cross_block.h): reduction r's, and all
  // the owners'.
  CrossBlockAccumulator crossBlockAccumulator(size_t r) const {
    return {static_cast<int>(r), "acc" + std::to_string(r), accType(r), (tuple(r) ? qualifier_ : "") + accType(r),
            functor(r), identity(r), treeOrder(r), &p_.reductions[r].reduction};
  }
  std::vector<CrossBlockAccumulator> crossBlockAccumulators() const {
    std::vector<CrossBlockAccumulator> accs;
    for (size_t r = 0; r < p_.reductions.size(); ++r)
      if (owns(r)) accs.push_back(crossBlockAccumulator(r));
    return accs;
  }

  // Row i is complete: store the reduction outputs, then the epilogue's. The epilogue
  // of accumulator lane `lane` reads the statement's offsets of that lane.
  void emitFinish(std::ostream& os, const AstUser& u, const std::vector<std::string>& totals, const std::string& i,
                  int lane, int d) {
    std::string in = indent(d);
    std::vector<std::string> results;
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      const ReductionOutput& ro = p_.reductions[r];
      results.push_back(result(r, totals[r]));
      if (ro.output >= 0) os << in << "pr_store(out" << ro.output << ", " << i << ", " << results.back() << ");\n";
      if (ro.temporary >= 0) os << in << "pr_store(tmp" << ro.temporary << ", " << i << ", " << results.back() << ");\n";
    }
    if (p_.epilogue.empty()) return;
    os << in << "{  // epilogue\n";
    size_t offsetsPerLane = u.offsets.size() / static_cast<size_t>(lanes_);
    emitValues(os, p_.epilogue, "e", u, results, d + 1, nullptr, offsetsPerLane * static_cast<size_t>(lane));
    for (const ElementwiseOutput& s : p_.epilogueStores)
      os << in << "  pr_store(out" << s.output << ", " << i << ", e" << s.value << ");\n";
    os << in << "}\n";
  }

  // Declares one const variable per value (per `evaluated` one, if given); loads take
  // their offsets from the statement, from number `firstOffset` on.
  void emitValues(std::ostream& os, const std::vector<BodyValue>& values, const std::string& prefix, const AstUser& u,
                  const std::vector<std::string>& reduced, int d, const std::vector<bool>* evaluated = nullptr,
                  size_t firstOffset = 0) {
    size_t load = firstOffset;
    for (size_t v = 0; v < values.size(); ++v) {
      const BodyValue& b = values[v];
      if (evaluated && !(*evaluated)[v]) continue;
      os << indent(d) << "const " << computeType(b.dtype) << " " << prefix << v << " = ";
      switch (b.kind) {
        case BodyValue::Kind::Load: {
          const std::string offset = toC(u.offsets.at(load++));
          if (b.gathers()) {  // (never from the row cache or the staged row)
            os << gatherScalar(b, loadPointer(b), offset, prefix);
            break;
          }
          if (evaluated && k_.tiling.stages(v)) {  // a tiled transpose's Elem: the slot of its tile
            os << "tile" << v << "[" << offset << "]";
            break;
          }
          // (epilogue values: no row source)
          os << (evaluated ? loads().scalar(static_cast<int>(v), u.pass, loadPointer(b), offset)
                           : "pr_load(" + loadPointer(b) + ", " + offset + ")");
          break;
        }
        case BodyValue::Kind::Constant: os << emitLiteral(b.value); break;
        case BodyValue::Kind::Reduced: os << reduced.at(static_cast<size_t>(b.reduction)); break;
        case BodyValue::Kind::Scanned: POLYRED_CHECK(false, "a scan kernel's values are lanes"); break;
        case BodyValue::Kind::Index: os << "(" << computeType(b.dtype) << ")" << toC(u.offsets.at(load++)); break;
        case BodyValue::Kind::Op: {
          if (&values == &p_.body && hoisted(v)) {
            os << hoistedValueName(v);
            break;
          }
          std::vector<std::string> a;
          std::vector<DType> ts;
          for (int o : b.operands) {
            a.push_back(prefix + std::to_string(o));
            ts.push_back(values[static_cast<size_t>(o)].dtype);
          }
          // (fastExp_ numbers the body's values; the epilogue's Exps stay exact.)
          os << emitElementwise(b.op, a, ts, b.dtype, &values == &p_.body ? factsOf(v) : OperandFacts{});
          break;
        }
      }
      os << ";  // " << comment(b.label) << "\n";
    }
  }

  // A vectorized instance: values are arrays over the V lanes of the contiguous axis
  // (elements V*i .. V*i+V-1 of an Elem or a y-reduce Red, V*j .. V*j+V-1 of an x/all-
  // reduce Red); loads are contiguous (one access), invariant or gathered. An x/all-
  // reduce Red folds every lane into the thread's accumulator, a y-reduce Red each lane
  // into its own; an Elem stores the lanes as one access.
  //
  // In a row-resident kernel each pass evaluates its own values (an earlier pass's
  // total is the same in every lane), folds its own reductions and issues its stores.
  //
  // Masked lanes (vectorize.h): lanes [lo, hi) of the vector lie in the row; a whole
  // vector (the rule inside a row) runs the code above, a partial one loads and stores
  // only its valid lanes, element by element, and folds only those (loads across rows:
  // loadsAcrossRows).
  // Whether the kernel's pointers allow vector accesses: "false", "true" or "vector_ok".
  std::string alignedCondition() const {
    return alignment_ == Alignment::Unaligned ? "false" : alignment_ == Alignment::Aligned ? "true" : "vector_ok";
  }
  // The condition for a vector (a masked one: `whole` in its row) to move as one access.
  std::string vectorCondition(bool masked) const {
    return masked ? conjunction(alignedCondition(), "whole") : alignedCondition();
  }

  void emitLanes(std::ostream& os, const AstUser& u, int d) {
    const int V = k_.vector.width;
    const bool masked = k_.vector.masked() || scan_;  // a scan masks its tiles' padding too
    const std::string in = indent(d);
    os << in << "{\n";
    if (scan_) {
      os << scanLaneBounds(toC(u.offsets.back()), toC(u.coords.at(0)), p_.M, p_.N, V, in + "  ");
      LaneValuesSite site = laneSite(u, vectorCondition(true), true, in);
      os << (u.statement == "Fold" ? scanFoldLanes(scanCode(), site) : scanStepLanes(scanCode(), site)) << in << "}\n";
      return;
    }
    // (the mask's bound: a row's N, an elementwise kernel's M)
    if (masked) os << maskedLaneBounds(toC(u.offsets.back()), k_.vector.extentAlongAxis(p_), V, in + "  ");
    emitLaneBody(os, u, d, vectorCondition(masked), masked);
    os << cache_.advanceAfterStatement(guards_ > 0, in + "  ");
    os << in << "}\n";
  }

  // Masked rows of a reduction, whose folds and stores mask every lane by [lo, hi): their
  // loads take whole aligned vectors across rows (LaneValuesSite::alignedOk). Not for
  // tuples (their lane trees) nor scans (their tiles' padding).
  bool loadsAcrossRows() const {
    return k_.vector.masked() && !scan_ && p_.form != CanonicalForm::Elementwise && !p_.hasTupleReduction();
  }
  LaneValuesSite laneSite(const AstUser& u, std::string vectorOk, bool masked, const std::string& in) {
    const bool acrossRows = masked && loadsAcrossRows();
    return {.kernel = k_, .instance = u, .loads = loads(), .evaluated = cache_.valuesOfPass(p_, u.pass),
            .annotated = cache_.evaluatedInPass.empty() ? std::vector<bool>{} : p_.valuesOfPass(u.pass),
            .vectorOk = std::move(vectorOk), .alignedOk = acrossRows ? alignedCondition() : "",
            .graph = acrossRows ? &g_ : nullptr,
            .masked = masked, .guardInvariant = scan_,
            .total = [this](int r) { return total(static_cast<size_t>(r)); },
            .facts = [this](size_t v) { return factsOf(v); },
            .hoisted = [this](size_t v) { return hoisted(v); }, .indent = in, .firstOffset = 0, .scanned = ""};
  }

  // The lane values of one vector, its folds and its stores, at indent d + 1; `masked`:
  // lanes [lo, hi) in its row (`whole`, `lo`, `hi` in scope), `vectorOk` when its
  // accesses move as one.
  void emitLaneBody(std::ostream& os, const AstUser& u, int d, const std::string& vectorOk, bool masked) {
    const int V = k_.vector.width;
    const std::string in = indent(d), w = std::to_string(V), lanesInRow = masked ? ", lo, hi" : "";
    const std::string each = "#pragma unroll\n" + in + "  for (int l = 0; l < " + w + "; ++l) ";
    const bool lastPass = u.pass == p_.passes() - 1;  // where the cache hints apply (poly/cache_hints.h)
    LaneValuesSite site = laneSite(u, vectorOk, masked, in);
    std::vector<bool> paired;
    site.paired = &paired;
    size_t offset = emitLaneValues(os, site);
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      if (p_.reductions[r].stage != u.pass || !owns(r)) continue;
      std::string fold = acc(r, "l") + " = " + op(r) + "(" + acc(r, "l") + ", " + element(r, "v", "[l]") + ");\n";
      std::string whole = each + fold, part = each + "if (l >= lo && l < hi) " + fold;
      // (loads across rows: the lanes off the row fold the identity, no branch)
      std::string selected = loadsAcrossRows() ? each + acc(r, "l") + " = " + op(r) + "(" + acc(r, "l") +
                                                     ", l >= lo && l < hi ? " + element(r, "v", "[l]") + " : " +
                                                     identity(r) + ");\n"
                                               : "";
      if (const int s = pairFoldSource(site, r); s >= 0 && paired[static_cast<size_t>(s)]) {
        // The lanes' half pairs (codegen/lane_values.h), the float lanes then unused.
        const std::string call = acc(r, 0) + " = pr_fold_" +
                                 (p_.reductions[r].reduction.builtin() == BuiltinCombiner::Max ? "max" : "min") +
                                 "_pairs<" + w + ">(" + acc(r, 0) + ", hv" + std::to_string(s);
        whole = call + ");\n";
        part = call + ", lo, hi);\n";
        selected.clear();
      }
      if (tuple(r)) os << laneFold(r, k_.vector.width, k_.vector.masked(), indent(d + 1));
      else if (!masked) os << in << "  " << whole;
      else if (!selected.empty()) os << in << "  " << selected;
      else os << in << "  if (whole) {\n" << in << "  " << whole << in << "  } else {\n" << in << "  " << part << in << "  }\n";
    }
    for (const ElementwiseOutput& s : p_.stores)
      if (s.pass == u.pass && s.zeroWhereNonzero)
        os << in << "  pr_zero_where_set_lanes<" << V << ">(" << storePointer(s) << ", " << toC(u.offsets.at(offset++))
           << ", v" << s.value << lanesInRow << ");\n";
      else if (s.pass == u.pass)
        os << in << "  pr_store_lanes<" << V << (lastPass && k_.hints.streamingStores ? ", true" : "") << ">("
           << storePointer(s) << ", " << toC(u.offsets.at(offset++)) << ", v" << s.value << ", " << vectorOk << lanesInRow
           << ");\n";
  }

  ScanCode scanCode() const {
    const ReductionOutput& scan = p_.reductions.at(0);
    return {.accType = accType(0), .functor = functor(0), .identity = identity(0), .element = element(0, "v", "[l]"),
            .outType = computeType(scan.outType), .result = result(0, "s0[l]"),
            .accBytes = dtypeBytes(scan.reduction.accType), .width = k_.vector.width, .BX = k_.binding.BX,
            .BY = k_.binding.BY, .alongX = !y_, .exclusive = scan.exclusive, .tiles = k_.binding.tiles,
            .chunks = k_.binding.GX};
  }

  // What codegen knows of body value v's operands: an Exp in range (exp_range.h); a
  // division by an earlier pass's total with its divisor declared before the pass loop
  // (loop_invariants.h) where the kernel is staged or the quotient only rounded to 16
  // bits (coarse_results.h; an unstaged float32 quotient keeps the IEEE division,
  // docs/design/schedule-and-binding.md on pr_div_coarse); a 16-bit value only stores read (store_rounding.h).
  OperandFacts factsOf(size_t v) const {
    const bool invariant = (!stage_.empty() || coarseQuotient_[v]) && dividesByTotals(p_, ofTotals_, v);
    return {.fastExp = fastExp_[v],
            .invariantDivisor = invariant,
            .divisor = invariant && divisorHoisted(v) ? hoistedDivisorName(v) : "",
            .coarseQuotient = coarseQuotient_[v],
            .roundedByStore = roundedByStore_[v]};
  }
  InvariantHoist invariantHoist() const {
    return {.plan = p_,
            .ofTotals = ofTotals_,
            .invariantDivision = [this](size_t v) { return dividesByInvariant(p_.body[v].dtype, factsOf(v)); },
            .total = [this](int r) { return total(static_cast<size_t>(r)); },
            .facts = [this](size_t v) { return factsOf(v); }};
  }

  RowLoads loads() const { return {k_, cache_, stage_}; }
  std::string passLoopUnroll() const {
    return cache_.passLoopUnroll(loopUnrollFor(p_, k_.vector, o_.unroll, launchPolicyFor(o_.ccMajor, o_.ccMinor)));
  }

  // The fused producers at one point, then the accumulation or the stores of the
  // statement's pass; a later pass of a row-resident kernel reads earlier totals.
  void emitBody(std::ostream& os, const AstUser& u, int d) {
    if (k_.vector.width > 1 || scan_) return emitLanes(os, u, d);  // Elem or Red (a scan's: lanes, maybe one)
    std::string in = indent(d);
    std::vector<std::string> totals;
    for (size_t r = 0; r < p_.reductions.size(); ++r) totals.push_back(total(r));
    std::vector<bool> evaluated = p_.valuesOfPass(u.pass);
    os << in << "{\n";
    emitValues(os, p_.body, "v", u, totals, d + 1, &evaluated);
    for (size_t r = 0; r < p_.reductions.size(); ++r) {
      const ReductionOutput& ro = p_.reductions[r];
      if (ro.stage != u.pass || !owns(r)) continue;
      os << in << "  acc" << r << " = " << op(r) << "(acc" << r << ", " << element(r, "v") << ");\n";
    }
    // Store offsets follow the load offsets in the statement's annotation.
    size_t store = static_cast<size_t>(p_.loadsOfPass(u.pass));
    for (const ElementwiseOutput& s : p_.stores) {
      if (s.pass != u.pass) continue;
      const std::string at = toC(u.offsets.at(store++));
      if (s.zeroWhereNonzero)
        os << in << "  pr_zero_where_set(" << storePointer(s) << ", " << at << ", v" << s.value << ");\n";
      else if (s.scatters())
        os << in << "  pr_scatter_add(" << storePointer(s) << ", " << at << ", (long long)v" << s.scatterIndex << ", "
           << s.scatterStride << "LL, " << s.scatterExtent << "LL, v" << s.value << ");\n";
      else os << in << "  pr_store(" << storePointer(s) << ", " << at << ", v" << s.value << ");\n";
    }
    os << cache_.advanceAfterStatement(guards_ > 0, in + "  ");
    os << in << "}\n";
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

}  // namespace

std::string deviceLibraryPrelude(const CodegenOptions& options, bool scans) {
  return std::string(options.fastExp ? "#define POLYRED_FAST_EXP 1\n" : "") +
         "#include \"polyred_elementwise.cuh\"\n#include \"polyred_reduce.cuh\"\n" +
         (scans ? "#include \"polyred_scan.cuh\"\n" : "") + "\n";
}

std::string launchBounds(int threads, RegisterFitMode fit, int64_t minBlocksPerSM) {
  if (minBlocksPerSM > 0) return "__launch_bounds__(" + std::to_string(threads) + ", " + std::to_string(minBlocksPerSM) + ")";
  return (fit == RegisterFitMode::Off ? "__launch_bounds__(" : "POLYRED_LAUNCH_BOUNDS(") + std::to_string(threads) + ")";
}

KernelSpec emitCuda(const Graph& g, const PolyKernel& k, const CodegenOptions& options) {
  return KernelEmitter(g, k, options).run();
}

KernelPart emitCudaPart(const Graph& g, const PolyKernel& k, const CodegenOptions& options, int part) {
  return KernelEmitter(g, k, options).part(part);
}

}  // namespace polyred
