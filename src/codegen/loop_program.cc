// The loop program of a kernel (KernelEmitter, codegen/kernel_emitter.h).
//
// Takes: the emitter's kernel (its loop AST from isl, plan, binding, row cache and row
// stage). Gives: the text of the AST as it is -- marks, loops, guards -- with each
// statement's meaning: the pass loops (versioned on alignment, with their invariants
// hoisted), the fused producers and the accumulation or stores of Red/Apply/Elem/Fold
// (per element, or per vector of lanes), Init, BlockReduce, Store with the epilogue,
// and the combine across blocks (Contribute, Arrive, Final) and a scan's LookBack.
#include <algorithm>
#include <sstream>
#include <utility>

#include "codegen/cross_block.h"
#include "codegen/cuda_expr.h"
#include "codegen/gather_lanes.h"
#include "codegen/kernel_emitter.h"
#include "codegen/lane_values.h"
#include "codegen/loop_invariants.h"
#include "codegen/row_stage.h"
#include "codegen/scan_emitter.h"
#include "codegen/tile_code.h"
#include "poly/loop_ast.h"
#include "support/error.h"

namespace polyred {

// Vector accesses whose alignment is checked at run time go through a loop of their
// own per answer: with the check inside, NVRTC kept a branch around every access of
// the unrolled loop, one load in flight per thread. Gains and losses measured (H100,
// docs/design/schedule-and-binding.md "Vector lanes", docs/results/notes-2026-11-28.md): all-reduces lost, and
// row-resident kernels (their register-cached passes duplicated whole) keep the branch.
bool KernelEmitter::versionsPassLoops() const {
  return k_.vector.width > 1 && !k_.vector.strided && !scan_ && p_.passes() == 1 &&
         p_.form != CanonicalForm::AllReduce;
}

// The accumulation and pointwise loops of a pass: unrolled so each thread keeps
// several independent loads in flight (the loads do not depend on the accumulator);
// `aligned` is what the loop's vector accesses know of vector_ok. What the loop does
// not change is computed before it, in a scope of the loop's own (loop_invariants.h).
void KernelEmitter::emitPassLoop(std::ostream& os, const AstNode& mark, int d, Alignment aligned) {
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

void KernelEmitter::emitLoopWith(std::ostream& os, const AstNode& mark, int d, Alignment aligned,
                                 LoopInvariants invariants) {
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

void KernelEmitter::emitNode(std::ostream& os, const AstNode& n, int d) {
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

void KernelEmitter::emitStatement(std::ostream& os, const AstUser& u, int d) {
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

// Row i is complete: store the reduction outputs, then the epilogue's. The epilogue
// of accumulator lane `lane` reads the statement's offsets of that lane.
void KernelEmitter::emitFinish(std::ostream& os, const AstUser& u, const std::vector<std::string>& totals,
                               const std::string& i, int lane, int d) {
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
void KernelEmitter::emitValues(std::ostream& os, const std::vector<BodyValue>& values, const std::string& prefix,
                               const AstUser& u, const std::vector<std::string>& reduced, int d,
                               const std::vector<bool>* evaluated, size_t firstOffset) {
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
void KernelEmitter::emitLanes(std::ostream& os, const AstUser& u, int d) {
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
bool KernelEmitter::loadsAcrossRows() const {
  return k_.vector.masked() && !scan_ && p_.form != CanonicalForm::Elementwise && !p_.hasTupleReduction();
}

LaneValuesSite KernelEmitter::laneSite(const AstUser& u, std::string vectorOk, bool masked, const std::string& in) {
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
void KernelEmitter::emitLaneBody(std::ostream& os, const AstUser& u, int d, const std::string& vectorOk, bool masked) {
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

// The fused producers at one point, then the accumulation or the stores of the
// statement's pass; a later pass of a row-resident kernel reads earlier totals.
void KernelEmitter::emitBody(std::ostream& os, const AstUser& u, int d) {
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

}  // namespace polyred
