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
  Graph graph;
  KernelPartition partition;
  std::vector<PolyKernel> kernels;  // one per partition kernel, in partition order
  Program program;                  // one kernel per launch (several parts when fused)
};

// The stage names accepted by CompileOptions::dump.
const std::vector<std::string>& dumpStages();

CompiledGraph compileGraph(const Graph& g, const CompileOptions& options);

// The launches of a program, one per line, with the parts of fused ones and their block
// ranges (--dump=launches).
std::string describeLaunches(const Program& program);

}  // namespace polyred
