// The edge-value test on the GPU: every op, cast and exact reduction of
// tests/edge_value_cases.h launched as generated kernels, compared bit for bit (NaN
// matching NaN) with the reference interpreter, CUDA's transcendental functions within
// the dtype's tolerance (EdgeCase::exact). The CPU half, in CI, compares the
// reference with the lowered code (tests/numeric_semantics_test.cc); this half checks
// that the device library (pr_f2int, pr_int_to_bfloat16, pr_max/pr_min, pr_sign, the
// Max/Min combiners) implements the same choices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "edge_value_cases.h"
#include "interp/reference.h"
#include "runtime/executor.h"  // gpuAvailable

using namespace polyred;

namespace {
// Each output element bit for bit (NaN matching NaN); the first difference of each
// output reported, at most 40 reports in all (`mismatched` counts them).
void expectIdentical(const std::string& name, const std::vector<HostTensor>& got, const std::vector<HostTensor>& want,
                     int& mismatched) {
  for (size_t out = 0; out < want.size(); ++out)
    for (int64_t k = 0; k < want[out].size(); ++k)
      if (!got[out].get(k).identical(want[out].get(k))) {
        if (++mismatched <= 40)
          ADD_FAILURE() << name << " output " << out << " element " << k << ": GPU " << got[out].get(k).toString()
                        << ", reference " << want[out].get(k).toString();
        break;  // one line per case and output
      }
}
}  // namespace

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
      expectIdentical(name, got, want, mismatched);
    }
    ++cases;
  }
  EXPECT_EQ(mismatched, 0);
  EXPECT_GT(cases, 250);
}

namespace {
// Every pair (a, b) of float edge values (with a NaN of each sign) as a column (y) of
// 512 elements or a row (x) of 1024: a in the first half, b in the second. Split over 8
// blocks (one element a thread), the halves meet only in the cross-block combine.
HostTensor splitPairs(DType t, bool columns) {
  std::vector<double> values = edge::floatEdges();
  values.push_back(-std::nan(""));
  const HostTensor edges = edge::floatTensor(t, values);
  auto [a, b] = edge::allPairs(edges);
  const int64_t pairs = a.size(), length = columns ? 512 : 1024;
  HostTensor x = HostTensor::zeros(t, columns ? std::vector<int64_t>{length, pairs} : std::vector<int64_t>{pairs, length});
  for (int64_t p = 0; p < pairs; ++p)
    for (int64_t l = 0; l < length; ++l)
      x.set(columns ? l * pairs + p : p * length + l, l < length / 2 ? a.get(p) : b.get(p));
  return x;
}
}  // namespace

// The blocks of a float maximum / minimum combine through integer atomics on the bit
// patterns (device/polyred_reduce.cuh, ordered_atomic_extremum) unless deterministic or
// told to take the partials: each way must give Max / Min's answer for NaN of either
// sign, signed zeros, infinities and subnormals.
TEST(EdgeValuesGpu, FloatExtremaCombineAcrossBlocksBitForBit) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  int mismatched = 0;
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (bool columns : {true, false})
      for (int mode = 0; mode < 3; ++mode) {  // atomics, partials, deterministic
        HostTensor x = splitPairs(t, columns);
        GraphBuilder b("split_extrema");
        Value v = b.input("x", t, x.shape);
        b.output(b.reduce(v, Reduction::max(t), {columns ? 0 : 1}));
        b.output(b.reduce(v, Reduction::min(t), {columns ? 0 : 1}));
        Graph g = b.build();
        CompileOptions o;
        o.target = currentTarget();
        o.deterministic = mode == 2;
        o.config.splitBlocks = 8;
        o.config.threadsPerBlock = 64;  // x: blocks of 128 threads (the least), y: of 32 x 2
        o.config.maxVectorWidth = 1;
        if (mode == 1) o.config.combine = CombineMode::Partials;
        CompiledGraph compiled = compileGraph(g, o);
        ASSERT_EQ(compiled.kernels.size(), 1u);
        const Binding& bound = compiled.kernels[0].binding;
        ASSERT_EQ(bound.GX, 8) << "the pairs' halves must meet across blocks";
        ASSERT_EQ(bound.partials || o.deterministic, mode != 0);
        std::vector<HostTensor> got = launchOnGpu(compiled, {x});
        std::vector<HostTensor> want = evaluateReference(g, {x});
        const std::string name = std::string(dtypeName(t)) + (columns ? " columns" : " rows") + " mode " + std::to_string(mode);
        expectIdentical(name, got, want, mismatched);
      }
  EXPECT_EQ(mismatched, 0);
}
