// The compiler pipeline, from a verified Graph to launchable CUDA:
//   partition (canon/partition: flatten + propagate + group into kernels)
//   -> bind (poly/binding) -> schedule + AST (poly/) -> CUDA (codegen/)
// Every stage can print its result: CompileOptions::dump names the stages
// ("graph", "partition", "binding", "schedule", "ast", "cuda" or "all").
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
  std::set<std::string> dump;       // stage names to print
  std::ostream* dumpTo = nullptr;   // where dumps go (stderr if null)
  // When set, each stage's wall time is added here in milliseconds (`polyred -v`).
  std::map<std::string, double>* stageMillis = nullptr;
};

struct CompiledGraph {
  Graph graph;
  KernelPartition partition;
  std::vector<PolyKernel> kernels;
  Program program;
};

// The stage names accepted by CompileOptions::dump.
const std::vector<std::string>& dumpStages();

CompiledGraph compileGraph(const Graph& g, const CompileOptions& options);

}  // namespace polyred
