// Helpers shared by the CPU tests of lowered programs: NVRTC compiles every kernel,
// the lowered kernels run on the CPU executor, and how many blocks split a row.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "runtime/nvrtc.h"
#include "support/budget.h"

namespace polyred::test_support {

// Compiles every kernel of `c` for sm_90 (NVRTC needs no GPU); a rejection shows
// NVRTC's log and the source.
inline void expectNvrtcCompiles(const CompiledGraph& c, const std::string& what = "") {
  ASSERT_FALSE(c.program.kernels.empty()) << what;
  for (const KernelSpec& k : c.program.kernels) {
    try {
      NvrtcResult r = compileCuda(k.source, k.name + ".cu", 9, 0);
      EXPECT_FALSE(r.cubin.empty()) << what;
      EXPECT_NE(r.ptx.find(".entry " + k.name), std::string::npos) << what << ": no entry point " << k.name;
    } catch (const CompileError& e) {
      ADD_FAILURE() << what << ": NVRTC rejected " << k.name << ":\n" << e.log() << "\n" << k.source;
    }
  }
}

// `g` compiled with the KernelConfig knobs `knobs` ("cache=on,threads=512").
inline CompiledGraph compileWithKnobs(const Graph& g, const std::string& knobs) {
  CompileOptions o;
  o.config = KernelConfig::parse(knobs, "test");
  return compileGraph(g, o);
}

// How often `what` occurs in `text` (calls in a generated kernel's source).
inline size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The lowered kernels of `c` match the reference on the CPU (every point, blocks in the
// order `seed` picks) and compile under NVRTC.
inline void expectMatchesOnCpuAndCompiles(const CompiledGraph& c, uint64_t seed) {
  CpuCheckReport r = checkOnCpu(c, seed, /*maxPoints=*/0, /*deterministic=*/false);
  EXPECT_TRUE(r.ok) << r.message;
  expectNvrtcCompiles(c);
}

// The outputs of the lowered kernels on the CPU executor, every point; `seed` picks
// the order in which blocks run.
inline std::vector<HostTensor> lowered(const CompiledGraph& c, const std::vector<HostTensor>& inputs,
                                       uint64_t seed = 1, bool deterministic = false) {
  CpuCheckOptions o;
  o.maxPoints = 0;
  o.seed = seed;
  o.deterministic = deterministic;
  Deadline none = Deadline::none();
  return runLoweredOnCpu(c, inputs, o, none).outputs;
}

// `got` equals `want` bit for bit (NaN matching NaN); one failure per output, naming the
// first element that differs and where `got` was computed (`where`: "GPU", "CPU").
inline void expectIdenticalOutputs(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want,
                                   const std::string& where) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t out = 0; out < want.size(); ++out)
    for (int64_t k = 0; k < want[out].size(); ++k)
      if (!got[out].get(k).identical(want[out].get(k))) {
        ADD_FAILURE() << "output " << out << " element " << k << ": " << where << " " << got[out].get(k).toString()
                      << ", reference " << want[out].get(k).toString();
        break;
      }
}

// The most blocks any kernel of `c` splits one row into (grid.x).
inline int64_t blocksAlongJ(const CompiledGraph& c) {
  int64_t gx = 1;
  for (const PolyKernel& k : c.kernels) gx = std::max<int64_t>(gx, k.binding.GX);
  return gx;
}

}  // namespace polyred::test_support
