// Compiling a graph for the GPU the tests run on (its compute capability and SM count).
#pragma once

#include "driver/pipeline.h"
#include "runtime/executor.h"

namespace polyred::test_support {

inline CompiledGraph compileForGpu(const Graph& g, bool deterministic = false) {
  CompileOptions o;
  o.target = currentTarget();
  o.deterministic = deterministic;
  return compileGraph(g, o);
}

}  // namespace polyred::test_support
