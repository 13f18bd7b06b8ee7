// Ordered (non-commutative) tuple reductions on the GPU: contiguous chunks per thread,
// the InOrder warp and block trees, the block-order cross-block combine, launched and
// compared with the reference exactly (tests/ordered_tuples.h: any reordering changes
// the answer) in every form, with interleaved axes, many blocks and odd or tiny
// extents; repeated launches give identical bytes. The CPU half is
// tests/tuple_ordered_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "interp/reference.h"
#include "ordered_tuples.h"
#include "gpu/gpu_compile.h"
#include "runtime/executor.h"  // gpuAvailable

using namespace polyred;
using namespace polyred::ordered_tuples;

namespace {

struct Case {
  const char* name;
  Shape shape;
  std::vector<int64_t> axes;
};
const Case kCases[] = {{"all", {1000003}, {0}},          {"all-odd", {1000}, {0}},
                       {"x", {7, 300001}, {1}},          {"x-short", {4096, 33}, {1}},
                       {"x-tiny", {50, 5}, {1}},         {"x-interleaved", {40, 3, 7001}, {0, 2}},
                       {"y", {300001, 7}, {0}},          {"y-tiny", {5, 70}, {0}},
                       {"y-middle", {3, 20001, 5}, {1}}, {"row-resident", {64, 1000}, {1}}};

using test_support::compileForGpu;

int64_t reducedLength(const Case& c) {
  int64_t n = 1;
  for (int64_t a : c.axes) n *= c.shape[static_cast<size_t>(a)];
  return n;
}

}  // namespace

TEST(OrderedTupleGpu, AgreeWithTheReferenceExactly) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  for (const Case& c : kCases)
    for (bool deterministic : {false, true}) {
      const Graph g = orderedGraph(c.shape, c.axes);
      const std::vector<HostTensor> inputs = orderedInputs(c.shape, 21, 3.0 / static_cast<double>(reducedLength(c)));
      const std::vector<HostTensor> want = evaluateReference(g, inputs);
      const std::vector<HostTensor> got = launchOnGpu(compileForGpu(g, deterministic), inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < want.size(); ++o)
        for (int64_t k = 0; k < want[o].size(); ++k)
          if (!got[o].get(k).identical(want[o].get(k))) {
            ADD_FAILURE() << c.name << (deterministic ? " deterministic" : "") << " output " << o << " element " << k
                          << ": GPU " << got[o].get(k).toString() << ", reference " << want[o].get(k).toString();
            break;
          }
    }
}

TEST(OrderedTupleGpu, RepeatedLaunchesGiveIdenticalBytes) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  const Case& c = kCases[2];
  const CompiledGraph compiled = compileForGpu(orderedGraph(c.shape, c.axes));
  const std::vector<HostTensor> inputs = orderedInputs(c.shape, 8, 1e-5);
  const std::vector<HostTensor> first = launchOnGpu(compiled, inputs);
  for (int run = 0; run < 5; ++run) {
    const std::vector<HostTensor> again = launchOnGpu(compiled, inputs);
    for (size_t o = 0; o < first.size(); ++o) EXPECT_EQ(again[o].bytes, first[o].bytes) << "output " << o << " run " << run;
  }
}
