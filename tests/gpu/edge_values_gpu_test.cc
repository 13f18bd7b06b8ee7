// The edge-value test on the GPU: every op, cast and exact reduction of
// tests/edge_value_cases.h launched as generated kernels, compared bit for bit (NaN
// matching NaN) with the reference interpreter, CUDA's transcendental functions within
// the dtype's tolerance (EdgeCase::exact). The CPU half, in CI, compares the
// reference with the lowered code (tests/numeric_semantics_test.cc); this half checks
// that the device library (pr_f2int, pr_int_to_bfloat16, pr_max/pr_min, pr_sign, the
// Max/Min combiners) implements the same choices.
#include <gtest/gtest.h>

#include <string>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "edge_value_cases.h"
#include "interp/reference.h"
#include "runtime/executor.h"  // gpuAvailable

using namespace polyred;

TEST(EdgeValuesGpu, KernelsAgreeWithTheReferenceBitForBit) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  int cases = 0, mismatched = 0;
  for (const edge::EdgeCase& c : edge::edgeCases()) {
    for (bool deterministic : {false, true}) {
      CompileOptions o;
      o.target = currentTarget();
      o.deterministic = deterministic;
      CompiledGraph compiled = compileGraph(c.graph, o);
      std::vector<HostTensor> got = launchOnGpu(compiled, c.inputs);
      std::vector<HostTensor> want = evaluateReference(c.graph, c.inputs);
      const std::string name = c.name + (deterministic ? " (deterministic)" : "");
      if (!c.exact) {
        CpuCheckReport r = compareOutputs(c.graph, got, {}, want);
        if (!r.ok && ++mismatched <= 40) ADD_FAILURE() << name << ": " << r.message;
        continue;
      }
      for (size_t out = 0; out < want.size(); ++out)
        for (int64_t k = 0; k < want[out].size(); ++k)
          if (!got[out].get(k).identical(want[out].get(k))) {
            if (++mismatched <= 40)
              ADD_FAILURE() << name << " output " << out << " element " << k << ": GPU " << got[out].get(k).toString()
                            << ", reference " << want[out].get(k).toString();
            k = want[out].size();  // one line per case and output
          }
    }
    ++cases;
  }
  EXPECT_EQ(mismatched, 0);
  EXPECT_GT(cases, 250);
}
