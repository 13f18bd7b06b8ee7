// The compiler pipeline, from a verified Graph to launchable CUDA:
//   partition (canon/partition: flatten + propagate + group into kernels)
//   -> launch groups (canon/launch_groups: independent kernels share one launch)
//   -> bind (poly/binding; one block size per launch) -> schedule + AST (poly/)
//   -> CUDA (codegen/; codegen/horizontal_fusion joins the kernels of a launch)
// Every stage can print its result: CompileOptions::dump names the stages
// ("graph", "partition", "binding", "schedule", "ast", "cuda", "launches" or "all").
#pragma once

#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "codegen/kernel_spec.h"
#include "ir/graph.h"
#include "poly/binding.h"
#include "poly/poly_kernel.h"

namespace polyred {

struct CompileOptions {
  Target target;
  bool deterministic = false;
  // The policy's knobs for every kernel of the graph (poly/kernel_config.h).
  KernelConfig config;
  // Independent kernels of one sub-graph share one launch (codegen/horizontal_fusion.h).
  bool horizontalFusion = true;
  // f32 Exp through ex2.approx (codegen/cuda_emitter.h, CodegenOptions::fastExp).
  bool fastExp = false;
  std::set<std::string> dump;       // stage names to print
  std::ostream* dumpTo = nullptr;   // where dumps go (stderr if null)
  // When set, each stage's wall time is added here in milliseconds (`polyred -v`).
  std::map<std::string, double>* stageMillis = nullptr;
};

struct CompiledGraph {
  // The graph the kernels compute; for a symbolic source (ir/symbolic_dims.h), at the
  // symbols' probe values (graphAtSizes gives it at others).
  Graph graph;
  Graph symbolic;          // the symbolic source (no symbols: a concrete compile)
  CompileOptions options;  // as compiled (without the dump and timing pointers)
  KernelPartition partition;
  // One per partition kernel, in partition order; a symbolic kernel holds the variants
  // bound for fewer rows (PolyKernel::rowVariants).
  std::vector<PolyKernel> kernels;
  Program program;                  // one kernel per launch (several parts when fused)
};

// The stage names accepted by CompileOptions::dump.
const std::vector<std::string>& dumpStages();

// A symbolic source compiles once for every value of its symbols: its kernels whose
// rows follow a symbol take it as a parameter (driver/symbolic_kernels.h), one kernel
// per launch (no horizontal fusion), with a variant for each binding the policy takes
// over the row counts (driver/row_variants.h), picked at launch.
CompiledGraph compileGraph(const Graph& g, const CompileOptions& options);

// The graph the kernels compute from `source` (the rewrites of compileGraph).
Graph rewriteForKernels(const Graph& source, const CompileOptions& options);

// c.graph at the symbol values `sizes` (Graph::symbols order; empty for a concrete
// compile, which returns c.graph): what the kernels compute when launched with them.
Graph graphAtSizes(const CompiledGraph& c, const std::vector<int64_t>& sizes);

// Whether `sizes` give c's symbolic graph no elements at all (a symbol is 0): every
// output is then empty and nothing runs. Throws Error if a symbol is 0 but an output
// would still have elements (not supported: the graph at such sizes is not built).
bool emptyAtSizes(const CompiledGraph& c, const std::vector<int64_t>& sizes);
// The shapes of c's outputs at `sizes` (those of c.graph for a concrete compile).
std::vector<Shape> outputShapesAtSizes(const CompiledGraph& c, const std::vector<int64_t>& sizes);

// The launches of a program, one per line, with the parts of fused ones and their block
// ranges (--dump=launches).
std::string describeLaunches(const Program& program);

}  // namespace polyred
