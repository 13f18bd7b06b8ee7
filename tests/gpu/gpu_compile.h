// What the GPU tests share: compiling a graph for the GPU they run on (its compute
// capability and SM count), and a graph of one reduction.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "runtime/executor.h"

namespace polyred::test_support {

inline CompiledGraph compileForGpu(const Graph& g, bool deterministic = false) {
  CompileOptions o;
  o.target = currentTarget();
  o.deterministic = deterministic;
  return compileGraph(g, o);
}

// x [shape] of type t reduced by r over `axes`.
inline Graph singleReduction(const std::string& name, DType t, const Shape& shape, const std::vector<int64_t>& axes,
                             Reduction r) {
  GraphBuilder b(name);
  b.output(b.reduce(b.input("x", t, shape), r, axes, false));
  return b.build();
}

// Runs `compiled` on the GPU (untimed) as `run` says and expects every launch to match
// the reference -- and, for a deterministic kernel, its repeated launches to equal the
// first bit for bit.
inline void expectMatchesOnGpu(const CompiledGraph& compiled, bool deterministic, GpuRunOptions run) {
  run.time = false;
  GpuRunReport r = runOnGpu(compiled, run);
  EXPECT_TRUE(r.ok) << r.check;
  if (deterministic) {
    EXPECT_TRUE(r.bitwiseRepeatable) << r.check;
  }
}

}  // namespace polyred::test_support
