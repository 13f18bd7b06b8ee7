#include "driver/pipeline.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "canon/constant_powers.h"
#include "canon/launch_groups.h"
#include "canon/gather_sources.h"
#include "canon/in_place_hazards.h"
#include "canon/logsumexp_rows.h"
#include "canon/scatter_fallback.h"
#include "canon/partition.h"
#include "canon/temporary_reset.h"
#include "codegen/cuda_emitter.h"
#include "codegen/horizontal_fusion.h"
#include "codegen/shared_memory.h"
#include "driver/artifacts.h"
#include "driver/kernel_binding.h"
#include "driver/row_variants.h"
#include "driver/symbolic_kernels.h"
#include "ir/symbolic_dims.h"
#include "poly/binding.h"
#include "support/error.h"

namespace polyred {

const std::vector<std::string>& dumpStages() {
  static const std::vector<std::string> stages = {"graph", "rewrite", "partition", "binding", "schedule", "ast", "cuda", "launches"};
  return stages;
}

namespace {

class Dumper {
 public:
  explicit Dumper(const CompileOptions& o) : o_(o) {}
  void operator()(const std::string& stage, const std::string& text) const {
    if (!o_.dump.count(stage) && !o_.dump.count("all")) return;
    std::ostream& os = o_.dumpTo ? *o_.dumpTo : std::cerr;
    os << "// ----- after " << stage << " -----\n" << text << (text.empty() || text.back() == '\n' ? "" : "\n");
  }

 private:
  const CompileOptions& o_;
};

}  // namespace

// Runs f, adding its wall time to (*millis)[stage] when timings are asked for.
template <class F>
auto timed(std::map<std::string, double>* millis, const std::string& stage, F&& f) {
  auto start = std::chrono::steady_clock::now();
  auto result = f();
  if (millis) (*millis)[stage] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace {

// A scatter whose output is its own base input's buffer (canon/scatter_fallback): the
// buffer holds the base already, so nothing is set before the launch.
bool writesItsBaseInPlace(const Graph& g, const ElementwiseOutput& s) {
  const std::optional<TensorId>& alias = g.outputs[static_cast<size_t>(s.output)].aliasOfInput;
  return s.scatterBase >= 0 && alias && g.inputIndex(*alias) == s.scatterBase;
}

// What the runtime sets before `spec`'s launch for the scatters of `plan`: a scatter's
// temporary to zero (unless kept zero), its output to zero or to a copy of its base
// (unless the output is the base's own buffer, or staged: then its temporary).
void setBeforeScatters(const CompiledGraph& c, const KernelPlan& plan, KernelSpec& spec) {
  const Graph& g = c.graph;
  for (const ElementwiseOutput& s : plan.stores) {
    if (!s.scatters()) continue;
    if (s.temporary >= 0) {
      const TemporarySpec& t = c.program.temporaries.at(static_cast<size_t>(s.temporary));
      if (!t.zeroWhenAllocated) spec.initFirst.push_back({-1, t.bytes, -1, s.temporary});
      continue;
    }
    const Tensor& t = g.tensor(g.outputs[static_cast<size_t>(s.output)].tensor);
    const int64_t bytes = numElements(t.shape) * dtypeBytes(t.dtype);
    if (const int staging = c.partition.stagingTemporary(s.output); staging >= 0)
      spec.initFirst.push_back({-1, bytes, s.scatterBase, staging});
    else if (!writesItsBaseInPlace(g, s))
      spec.initFirst.push_back({s.output, bytes, s.scatterBase});
  }
}

// A staged in-place output (canon/in_place_hazards) is the kernel's out<n> parameter
// still, but the runtime passes its temporary there.
void redirectStagedOutputs(const KernelPartition& partition, KernelSpec& spec) {
  for (KernelParam& param : spec.params)
    if (const int staging = param.kind == KernelParam::Kind::Output ? partition.stagingTemporary(param.index) : -1;
        staging >= 0)
      param = {KernelParam::Kind::Temporary, staging};
}

// Static shared memory one fused launch may declare: the parts' block reductions add
// up, and a block may have at most 48 KiB of static shared memory; the rest is margin.
constexpr int64_t kFusedSharedBudget = 40 * 1024;

// A launch group as launches: consecutive chunks of its kernels whose static shared
// memory fits kFusedSharedBudget (a kernel over it alone is its own launch).
std::vector<std::vector<int>> splitBySharedMemory(const LaunchGroup& group, const std::vector<PolyKernel>& kernels) {
  std::vector<std::vector<int>> launches;
  int64_t used = 0;
  for (int k : group.kernels) {
    const int64_t bytes = staticSharedBytes(kernels[static_cast<size_t>(k)]);
    if (launches.empty() || used + bytes > kFusedSharedBudget) {
      launches.emplace_back();
      used = 0;
    }
    launches.back().push_back(k);
    used += bytes;
  }
  return launches;
}

// `plan` as the kernel of row variant `v`: the rows it serves, and its name with
// `suffix` (the kernels of one launch's variants are told apart in dumps and files).
KernelPlan servingRows(KernelPlan plan, const RowVariant& v, const std::string& suffix) {
  plan.symbolicRows->fewestRows = v.fewestRows;
  plan.symbolicRows->mostRows = v.mostRows;
  plan.name += suffix;
  return plan;
}

// A variant whose rows reach past 2^31 elements has 64-bit indices (the last one has no
// bound on its rows at all). Up to the rows where its indices still fit 32 bits, its
// binding serves again with 32-bit ones, as one more variant: 64-bit indices cost
// registers, and so blocks a SM (a layer norm over 1024 at 128x2 threads: 46 registers,
// 6 blocks of 256 a SM, against 30 and 8).
struct SplitVariant {
  RowVariant variant;
  // Its loops, built to find the split: kept for every range that keeps the variant's
  // most rows (their index width is the same); the 32-bit part is built again.
  std::optional<PolyKernel> built;
};

std::vector<SplitVariant> splitAtInt32Indices(const KernelPlan& plan, const std::vector<RowVariant>& variants) {
  std::vector<SplitVariant> split;
  for (const RowVariant& v : variants) {
    PolyKernel k = buildPolyKernel(servingRows(plan, v, ""), v.bound.binding, v.bound.vector, v.bound.tiling);
    const int64_t most = mostRowsWithInt32Indices(k);
    if (k.index64 && most >= v.fewestRows) {
      split.push_back({v, std::nullopt});
      split.back().variant.mostRows = most;
      split.push_back({v, std::move(k)});
      split.back().variant.fewestRows = most + 1;
    } else {
      split.push_back({v, std::move(k)});
    }
  }
  return split;
}

// A kernel's CUDA, with its row variants' (KernelSpec::rowVariants).
KernelSpec emitWithRowVariants(const Graph& g, const PolyKernel& k, const CodegenOptions& codegen) {
  KernelSpec spec = emitCuda(g, k, codegen);
  for (const PolyKernel& variant : k.rowVariants) spec.rowVariants.push_back(emitCuda(g, variant, codegen));
  return spec;
}

// "grid (1,65535) block (64,4), grid y = min(65535, ceil(4*S / 4))".
std::string describeGrid(const Program& program, const LaunchConfig& c) {
  std::ostringstream os;
  os << "grid (" << c.grid[0] << "," << c.grid[1] << ") block (" << c.block[0] << "," << c.block[1] << ")";
  if (c.rows.symbol < 0) return os.str();
  const std::string rows = (c.rows.coefficient == 1 ? "" : std::to_string(c.rows.coefficient) + "*") +
                           program.symbols.at(static_cast<size_t>(c.rows.symbol));
  os << ", grid " << "xyz"[c.rows.axis] << " = min(" << c.grid[static_cast<size_t>(c.rows.axis)] << ", ceil(" << rows
     << " / " << c.rows.rowsPerBlock << "))";
  if (!c.rows.servesEveryRowCount())
    os << ", where " << rows << " is " << c.rows.fewestRows
       << (c.rows.mostRows < std::numeric_limits<int64_t>::max() ? " to " + std::to_string(c.rows.mostRows) : " or more");
  return os.str();
}

}  // namespace

std::string describeLaunches(const Program& program) {
  std::ostringstream os;
  for (size_t l = 0; l < program.kernels.size(); ++l) {
    const KernelSpec& k = program.kernels[l];
    os << "launch " << l << ": " << k.name << " " << describeGrid(program, k.launch);
    if (!k.parts.empty()) os << ", " << k.parts.size() << " parts (horizontal fusion):";
    os << "\n";
    for (const KernelSpec& v : k.rowVariants)
      os << "  or, for fewer rows: " << v.name << " " << describeGrid(program, v.launch) << "\n";
    for (const OutputInit& z : k.initFirst)
      os << "  before it: " << (z.temporary >= 0 ? "temporary " + std::to_string(z.temporary) : "output " + std::to_string(z.output))
         << " set to "
         << (z.fromInput >= 0 ? "a copy of input " + std::to_string(z.fromInput) : std::string("zero")) << " (" << z.bytes
         << " bytes, ScatterAdd adds into it)\n";
    for (const LaunchPart& p : k.parts)
      os << "  " << p.kernel << ": blocks [" << p.firstBlock << ", " << p.firstBlock + p.blocks << ")\n";
  }
  for (const OutputCopy& copy : program.copiesAfter)
    os << "after the last launch: temporary " << copy.temporary << " copied into output " << copy.output << " ("
       << copy.bytes << " bytes, an in-place output staged)\n";
  return os.str();
}

// The graph the kernels compute (and the reference checks them against): the
// source, with Pow by the exponents PyTorch special-cases written as its forms, gathers
// of computed params pushed into what computes them, logsumexp over block-sized rows as
// max-then-sum, and the scatters whose atomic store cannot be a finished output through
// temporaries (or, deterministic float ones, masked sums).
Graph rewriteForKernels(const Graph& source, const CompileOptions& options) {
  const RowsFitOneBlock rowsFit = [&](const CanonicalSpace& space) { return rowsFitOneBlock(space, options.target); };
  const LogSumExpRowsMode lse = options.config.logSumExpRows;
  const SplitLogSumExpRows splitRows = lse == LogSumExpRowsMode::Split    ? SplitLogSumExpRows::Always
                                       : lse == LogSumExpRowsMode::Online ? SplitLogSumExpRows::Never
                                                                          : SplitLogSumExpRows::Policy;
  const Graph powers = strengthReduceConstantPowers(source);
  return lowerUnstorableScatters(splitLogSumExpRows(gathersFromInputs(powers), rowsFit, splitRows), options.deterministic);
}

namespace {

KernelPartition partitionKernels(const Graph& g, const Target& target) {
  const RowsFitOneBlock rowsFit = [&](const CanonicalSpace& space) { return rowsFitOneBlock(space, target); };
  KernelPartition p = partitionGraph(g, rowsFit);
  keepScatterTemporariesZero(p);
  stageInPlaceHazards(p, g);
  return p;
}

// The partition of c.graph; for a symbolic source, with its symbolic kernels marked
// against the partition at the second probe set (driver/symbolic_kernels.h).
KernelPartition partitionOf(const CompiledGraph& c) {
  KernelPartition p = partitionKernels(c.graph, c.options.target);
  if (c.symbolic.symbols.empty()) return p;
  const Graph second = rewriteForKernels(instantiate(c.symbolic, probeValues(c.symbolic, 1)), c.options);
  markSymbolicKernels(p, partitionKernels(second, c.options.target), c.symbolic);
  return p;
}

}  // namespace

Graph graphAtSizes(const CompiledGraph& c, const std::vector<int64_t>& sizes) {
  if (c.symbolic.symbols.empty()) {
    if (!sizes.empty()) throw Error(c.graph.sourceFile, "", "sizes given for a graph without size symbols");
    return c.graph;
  }
  if (sizes.size() != c.symbolic.symbols.size())
    throw Error(c.graph.sourceFile, "", "the graph has " + std::to_string(c.symbolic.symbols.size()) +
                                            " size symbols but " + std::to_string(sizes.size()) + " values were given");
  Graph g = rewriteForKernels(instantiate(c.symbolic, sizes), c.options);
  POLYRED_CHECK(g.tensors.size() == c.graph.tensors.size() && g.nodes.size() == c.graph.nodes.size() &&
                    g.inputs.size() == c.graph.inputs.size() && g.outputs.size() == c.graph.outputs.size(),
                "the rewrites of " << c.graph.name << " depend on its sizes");
  return g;
}

std::vector<Shape> outputShapesAtSizes(const CompiledGraph& c, const std::vector<int64_t>& sizes) {
  const Graph& g = c.symbolic.symbols.empty() ? c.graph : c.symbolic;
  const Graph at = c.symbolic.symbols.empty() ? Graph{} : instantiate(c.symbolic, sizes);
  std::vector<Shape> shapes;
  for (size_t o = 0; o < g.outputs.size(); ++o)
    shapes.push_back((c.symbolic.symbols.empty() ? g : at).tensor(g.outputs[o].tensor).shape);
  return shapes;
}

bool emptyAtSizes(const CompiledGraph& c, const std::vector<int64_t>& sizes) {
  if (std::find(sizes.begin(), sizes.end(), 0) == sizes.end()) return false;
  if (sizes.size() != c.symbolic.symbols.size()) graphAtSizes(c, sizes);  // throws: the wrong number of values
  const std::vector<Shape> shapes = outputShapesAtSizes(c, sizes);
  for (size_t o = 0; o < shapes.size(); ++o)
    if (numElements(shapes[o]) > 0)
      throw Error(c.graph.sourceFile, "", "a size symbol is 0 but output " + std::to_string(o) +
                                              " has elements: not supported (the kernels run only where every "
                                              "output is empty or every size positive)");
  return true;
}

namespace {

// `plan` bound as `b`: its cache hints and its schedule and loops, each stage dumped.
// Refuses a symbolic kernel whose binding ties it to its row count.
PolyKernel scheduleKernel(const CompiledGraph& c, const KernelPlan& plan, const BoundKernel& b,
                          const KernelReads& reads, const Dumper& dump, std::map<std::string, double>* ms,
                          std::optional<PolyKernel> built = std::nullopt) {
  checkSymbolicBinding(plan, b.binding, b.vector, b.tiling, c.symbolic);
  // Only lane loads and stores (pr_load_lanes, pr_store_lanes) carry hints: a scalar
  // kernel or one of strided lanes (every access scalar) keeps plain accesses, and its
  // dump says so.
  const CacheHintMode hintMode =
      b.vector.width > 1 && !b.vector.strided ? c.options.config.cacheHints : CacheHintMode::Off;
  CacheHints hints = chooseCacheHints(plan, hintMode, reads, c.options.target.l2Bytes);
  const bool variant = plan.symbolicRows && !plan.symbolicRows->servesEveryRowCount();
  dump("binding", plan.name + (variant ? " (" + describeRows(*plan.symbolicRows) + ")" : "") + ": " +
                      b.binding.toString() +
                      (b.vector.width > 1 ? ", " + std::to_string(b.vector.width) + " elements per thread and step" +
                                                (b.vector.masked() ? " (masked lanes, row shift " + b.vector.shift + ")" : "") +
                                                (b.vector.strided ? " (strided lanes down each column)" : "")
                                          : "") +
                      (b.tiling.empty() ? "" : ", " + b.tiling.describe(plan)) + hints.describe(plan));
  // `built`: these loops, built for a plan that differs from `plan` only in its name and
  // fewest rows (splitAtInt32Indices), which neither the loops nor the index width read.
  PolyKernel pk;
  if (built) {
    pk = std::move(*built);
    pk.plan = plan;
  } else {
    pk = timed(ms, "schedule+ast", [&] { return buildPolyKernel(plan, b.binding, b.vector, b.tiling); });
  }
  pk.hints = std::move(hints);
  dump("schedule", plan.name + ":\n" + pk.scheduleTree);
  dump("ast", plan.name + ":\n" + pk.islAst);
  return pk;
}

}  // namespace

CompiledGraph compileGraph(const Graph& source, const CompileOptions& options) {
  Dumper dump(options);
  std::map<std::string, double>* ms = options.stageMillis;
  CompiledGraph c;
  c.options = options;
  c.options.dumpTo = nullptr;
  c.options.stageMillis = nullptr;
  c.options.dump.clear();
  dump("graph", source.toString());
  if (!source.symbols.empty()) c.symbolic = source;
  c.graph = timed(ms, "rewrite", [&] {
    return rewriteForKernels(source.symbols.empty() ? source : instantiate(source, probeValues(source, 0)), options);
  });
  const Graph& g = c.graph;
  dump("rewrite", g.nodes.size() == source.nodes.size() ? std::string("(nothing to rewrite)\n") : g.toString());
  c.partition = timed(ms, "partition", [&] { return partitionOf(c); });
  c.program.symbols = source.symbols;
  std::vector<LaunchGroup> groups;
  if (options.horizontalFusion && source.symbols.empty()) {
    groups = groupIndependentKernels(c.partition, g);
  } else {
    for (size_t k = 0; k < c.partition.kernels.size(); ++k) groups.push_back({{static_cast<int>(k)}});
  }
  dump("partition", c.partition.toString(g) + toString(groups, c.partition));
  for (const Temporary& t : c.partition.temporaries)
    c.program.temporaries.push_back(
        {t.elements * dtypeBytes(t.dtype), t.keptZero, t.symbol, t.elementsPerSymbol * dtypeBytes(t.dtype)});
  std::vector<BoundKernel> bound = timed(ms, "binding", [&] { return bindKernels(c.partition, groups, options.target, options.config); });
  for (size_t k = 0; k < c.partition.kernels.size(); ++k) {
    const KernelPlan& plan = c.partition.kernels[k];
    const KernelReads reads = kernelReads(c.partition, k, g);
    if (!plan.symbolicRows) {
      c.kernels.push_back(scheduleKernel(c, plan, bound[k], reads, dump, ms));
      continue;
    }
    // A symbolic kernel: one kernel per binding the policy takes over its row counts,
    // the one of the most rows (the probe's) holding the others.
    std::vector<RowVariant> variants =
        timed(ms, "binding", [&] { return chooseRowVariants(plan, options.target, options.config); });
    std::vector<SplitVariant> split = timed(ms, "schedule+ast", [&] { return splitAtInt32Indices(plan, variants); });
    auto schedule = [&](SplitVariant& s, const std::string& suffix) {
      return scheduleKernel(c, servingRows(plan, s.variant, suffix), s.variant.bound, reads, dump, ms,
                            std::move(s.built));
    };
    PolyKernel pk = schedule(split.back(), "");
    for (size_t v = 0; v + 1 < split.size(); ++v) pk.rowVariants.push_back(schedule(split[v], "_v" + std::to_string(v)));
    c.kernels.push_back(std::move(pk));
  }
  const CodegenOptions codegen{options.deterministic,          options.config.unroll,
                               options.fastExp,                options.config.rowCache,
                               options.target.sharedBytesPerBlock(), options.config.rowStage,
                               options.target.ccMajor,         options.target.ccMinor,
                               options.config.registerFit};
  for (const LaunchGroup& group : groups)
    for (const std::vector<int>& members : splitBySharedMemory(group, c.kernels)) {
      KernelSpec spec = timed(ms, "cuda", [&] {
        if (members.size() == 1) return emitWithRowVariants(g, c.kernels[static_cast<size_t>(members[0])], codegen);
        std::vector<const PolyKernel*> parts;
        for (int k : members) parts.push_back(&c.kernels[static_cast<size_t>(k)]);
        return fuseHorizontally(g, parts, codegen, "polyred_parallel" + std::to_string(c.program.kernels.size()));
      });
      for (int k : members) setBeforeScatters(c, c.kernels[static_cast<size_t>(k)].plan, spec);
      redirectStagedOutputs(c.partition, spec);
      dump("cuda", spec.source);
      for (KernelSpec& variant : spec.rowVariants) {
        redirectStagedOutputs(c.partition, variant);
        dump("cuda", variant.source);
      }
      c.program.kernels.push_back(std::move(spec));
    }
  for (const StagedOutput& st : c.partition.staged)
    c.program.copiesAfter.push_back({st.temporary, st.output, c.program.temporaries.at(static_cast<size_t>(st.temporary)).bytes});
  dump("launches", describeLaunches(c.program));
  dumpCudaFromEnvironment(c.program);
  return c;
}

}  // namespace polyred
