// CPU half of the reduction sweep of issue 4 (tests/gpu/sweep_gpu_test.cc is the GPU
// half, over the same cases -- tests/sweep_cases.h -- plus the large sizes). For every built-in reduction (sum,
// prod, min, max, and, or) and every dtype:
//   - each canonical form (all-reduce [n], x-reduce [3, n] axis 1, y-reduce [n, 5] axis
//     0) at reduced extents 1, 2, 31, 32, 33, 1000 and 4097, plus kept-heavy x/y cases,
//     compiles with compileGraph into exactly one kernel of the intended form, and the
//     lowered loop program run on the CPU (checkOnCpu: SIMT emulation, barrier and
//     workspace-restore checks) matches the reference interpreter; cases split over
//     several blocks are checked in deterministic mode too;
//   - one kernel per (op, dtype, form), in atomic and in deterministic mode, compiles
//     through NVRTC for sm_90 (what CI can say about the device code without a GPU);
// and a reduction over more than 2^31 elements is emitted with 64-bit indices.
//
// Semantics of each (op, dtype) pair, as the graph states them: sum, prod, min and max
// reduce with Reduction::<op>(dtype) (float16/bfloat16 accumulate in float32, bool/int8/
// uint8 in int32) and produce the input dtype (integers wrap to it); and/or compare
// each element with 0 and produce bool.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "runtime/nvrtc.h"
#include "support/error.h"
#include "sweep_cases.h"

namespace polyred {
namespace {

using namespace sweep;

constexpr int64_t kMultiBlockExtent = 4097;  // splits j over several blocks in every form

// A reduction over a size-1 axis has nothing to combine; the partitioner may treat it
// as elementwise. Every other case must land in the form it was built for.
bool formIsDetermined(const SweepCase& c) { return c.reduced > 1; }

CompileOptions optionsFor(bool deterministic) {
  CompileOptions o;
  o.deterministic = deterministic;
  return o;
}

struct Pair {
  SweepOp op;
  DType dtype;
};

std::vector<Pair> allPairs() {
  std::vector<Pair> pairs;
  for (SweepOp op : kSweepOps)
    for (DType t : kAllDTypes) pairs.push_back({op, t});
  return pairs;
}

std::string pairName(const testing::TestParamInfo<Pair>& info) {
  return sweepOpName(info.param.op) + "_" + std::string(dtypeName(info.param.dtype));
}

class SweepCpu : public testing::TestWithParam<Pair> {};

TEST_P(SweepCpu, EveryFormAndSizeMatchesTheReference) {
  const auto [op, dtype] = GetParam();
  uint64_t seed = 1;
  for (const SweepCase& sc : casesFor(op, dtype)) {
    SCOPED_TRACE(describe(sc));
    for (bool deterministic : {false, true}) {
      CompiledGraph c;
      try {
        c = compileGraph(sweepGraph(sc), optionsFor(deterministic));
      } catch (const std::exception& e) {
        ADD_FAILURE() << "compileGraph rejected it: " << e.what();
        break;
      }
      ASSERT_EQ(c.program.kernels.size(), 1u) << "a single reduction must be one launch";
      if (formIsDetermined(sc)) {
        EXPECT_EQ(c.partition.kernels[0].form, sc.form);
      }
      CpuCheckReport r = checkOnCpu(c, ++seed, 0, deterministic);
      EXPECT_TRUE(r.ok) << (deterministic ? "deterministic mode:\n" : "") << r.message;
      EXPECT_FALSE(r.sampled);
      // The deterministic variant differs only where blocks combine partials.
      if (!c.kernels[0].binding.multiBlock()) break;
    }
  }
}

TEST_P(SweepCpu, EveryFormCompilesThroughNvrtc) {
  const auto [op, dtype] = GetParam();
  for (CanonicalForm form : kForms) {
    SweepCase sc = makeCase(op, dtype, form, kMultiBlockExtent);
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(describe(sc) + (deterministic ? ", deterministic" : ", atomic"));
      CompiledGraph c = compileGraph(sweepGraph(sc), optionsFor(deterministic));
      ASSERT_EQ(c.program.kernels.size(), 1u);
      ASSERT_TRUE(c.kernels[0].binding.multiBlock()) << c.kernels[0].binding.toString();
      const KernelSpec& k = c.program.kernels[0];
      try {
        NvrtcResult r = compileCuda(k.source, k.name, 9, 0);
        EXPECT_FALSE(r.cubin.empty());
      } catch (const CompileError& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPairs, SweepCpu, testing::ValuesIn(allPairs()), pairName);

// 2^31 + 11 int8 elements: flat offsets pass INT_MAX, so every index must be 64-bit.
TEST(SweepCpuLargeIndex, OverTwoToTheThirtyOneElementsUsesLongLongIndices) {
  constexpr int64_t kHuge = (int64_t{1} << 31) + 11;
  for (SweepOp op : {SweepOp::Sum, SweepOp::Max}) {
    SweepCase sc = makeCase(op, DType::Int8, CanonicalForm::AllReduce, kHuge);
    SCOPED_TRACE(describe(sc));
    CompiledGraph c = compileGraph(sweepGraph(sc), CompileOptions{});
    ASSERT_EQ(c.program.kernels.size(), 1u);
    EXPECT_TRUE(c.kernels[0].index64);
    const KernelSpec& k = c.program.kernels[0];
    EXPECT_NE(k.source.find("const long long bx = blockIdx.x"), std::string::npos) << k.source;
    EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0));
  }
  // The contrast: a small reduction keeps 32-bit indices.
  CompiledGraph small = compileGraph(sweepGraph(makeCase(SweepOp::Sum, DType::Int8, CanonicalForm::AllReduce, 4097)),
                                     CompileOptions{});
  EXPECT_FALSE(small.kernels[0].index64);
  EXPECT_EQ(small.program.kernels[0].source.find("long long"), std::string::npos);
}

}  // namespace
}  // namespace polyred
