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
#include "codegen/kernel_emitter.h"
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

// The only way text derived from the user's graph (tensor and reduction names, the
// partitioner's explanations that quote them) enters generated source: as the rest of
// a // comment line, which printable() cannot end, extend or cut short. Identifiers
// in the code are polyred's own numbering (in3, out0, v7, polyred_k0_reduce).
std::string KernelEmitter::comment(const std::string& text) { return printable(text, 400); }

std::string KernelEmitter::indent(int depth) { return std::string(static_cast<size_t>(depth) * 2, ' '); }

KernelEmitter::KernelEmitter(const Graph& g, const PolyKernel& k, const CodegenOptions& o)
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

KernelSpec KernelEmitter::run() {
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
KernelPart KernelEmitter::part(int n) {
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

// Many reductions in one kernel (or wide tuple accumulators) can need more shared
// memory than a block may have even dynamically on the target.
void KernelEmitter::checkSharedMemory() const {
  const int64_t bytes = dynamicArrays_ ? dynamicReductionBytes(k_) : staticSharedBytes(k_);
  const int64_t limit = dynamicArrays_ ? o_.sharedBytesPerBlock : kMaxStaticSharedBytes;
  if (bytes > limit)
    throw UnsupportedError(g_.sourceFile, p_.name,
                           "its " + std::to_string(p_.reductions.size()) + " reductions need " + std::to_string(bytes) +
                               " bytes of shared memory, more than a block's " + std::to_string(limit / 1024) +
                               " KiB on this target");
}

void KernelEmitter::emitCombiners(std::ostream& os) {
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

void KernelEmitter::emitHeaderComment(std::ostream& os) const {
  os << "// Generated by polyred: " << p_.name << " (" << formName(p_.form) << ", i < "
     << (p_.symbolicRows ? p_.symbolicRows->extent() : std::to_string(p_.M)) << ", j < " << p_.N
     << ")\n// " << comment(p_.why) << "\n// " << k_.binding.toString() << (o_.deterministic ? ", deterministic" : "")
     << "\n" << (cache_.empty() ? "" : "// " + cache_.describe() + "\n")
     << (stage_.empty() ? "" : "// " + stage_.describe() + "\n")
     << (k_.tiling.empty() ? "" : "// " + comment(k_.tiling.describe(p_)) + "\n");
}

// The kernel's parameters: its pointers (codegen/kernel_params), then its workspaces
// (whose specs are appended to `workspaces`).
std::vector<KernelPart::Param> KernelEmitter::emitParams(std::vector<WorkspaceSpec>& workspaces) {
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

void KernelEmitter::emitDeclarations(std::ostream& os) {
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

bool KernelEmitter::drawsNormals() const {
  auto normal = [](const BodyValue& v) { return v.kind == BodyValue::Kind::Op && v.op == OpKind::PhiloxNormal; };
  return std::any_of(p_.body.begin(), p_.body.end(), normal) ||
         std::any_of(p_.epilogue.begin(), p_.epilogue.end(), normal);
}

// The accumulators the blocks combine (codegen/cross_block.h): reduction r's, and all
// the owners'.
CrossBlockAccumulator KernelEmitter::crossBlockAccumulator(size_t r) const {
  return {static_cast<int>(r), "acc" + std::to_string(r), accType(r), (tuple(r) ? qualifier_ : "") + accType(r),
          functor(r), identity(r), treeOrder(r), &p_.reductions[r].reduction};
}
std::vector<CrossBlockAccumulator> KernelEmitter::crossBlockAccumulators() const {
  std::vector<CrossBlockAccumulator> accs;
  for (size_t r = 0; r < p_.reductions.size(); ++r)
    if (owns(r)) accs.push_back(crossBlockAccumulator(r));
  return accs;
}

ScanCode KernelEmitter::scanCode() const {
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
OperandFacts KernelEmitter::factsOf(size_t v) const {
  const bool invariant = (!stage_.empty() || coarseQuotient_[v]) && dividesByTotals(p_, ofTotals_, v);
  return {.fastExp = fastExp_[v],
          .invariantDivisor = invariant,
          .divisor = invariant && divisorHoisted(v) ? hoistedDivisorName(v) : "",
          .coarseQuotient = coarseQuotient_[v],
          .roundedByStore = roundedByStore_[v]};
}

InvariantHoist KernelEmitter::invariantHoist() const {
  return {.plan = p_,
          .ofTotals = ofTotals_,
          .invariantDivision = [this](size_t v) { return dividesByInvariant(p_.body[v].dtype, factsOf(v)); },
          .total = [this](int r) { return total(static_cast<size_t>(r)); },
          .facts = [this](size_t v) { return factsOf(v); }};
}

std::string KernelEmitter::passLoopUnroll() const {
  return cache_.passLoopUnroll(loopUnrollFor(p_, k_.vector, o_.unroll, launchPolicyFor(o_.ccMajor, o_.ccMinor)));
}

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
