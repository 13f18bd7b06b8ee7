// Kernels on tensors that start one element into their allocation, as a view with a
// storage offset does (torch's x[1:] of a flat buffer, which the Python package passes
// through as it is): every vector access finds its pointer off the 16-byte boundary,
// so the kernels must take their element-by-element code -- the other copy of a pass
// loop versioned on alignment (codegen, "one loop per alignment"), the checked branch
// of all-reduces and row-resident passes, a staged row's alignment shift. Each case
// runs in atomic and deterministic mode against the reference interpreter. Without a
// GPU every test is skipped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/gpu_compile.h"
#include "row_resident_graphs.h"

namespace polyred {
namespace {

struct Case {
  std::string name;
  Graph graph;
};

Graph reduced(DType t, const Shape& shape, const std::vector<int64_t>& axes, Reduction r) {
  return test_support::singleReduction("misaligned", t, shape, axes, r);
}

Graph castSum(const Shape& shape) {
  GraphBuilder b("misaligned_cast_sum");
  b.output(b.cast(b.add(b.input("x", DType::Float32, shape), b.input("y", DType::Float32, shape)), DType::Float16));
  return b.build();
}

Graph argmaxRows(const Shape& shape) {
  GraphBuilder b("misaligned_argmax");
  b.output(b.argmax(b.input("x", DType::Float16, shape), 1));
  return b.build();
}

// Shapes whose kernels have vector lanes in each form (the policy in poly/vectorize.cc).
std::vector<Case> cases() {
  return {
      {"sum f16 [300,4100] over the rows (x-reduce, masked lanes)",
       reduced(DType::Float16, {300, 4100}, {1}, Reduction::sum(DType::Float32))},
      {"sum f16 [8192,1024] over the columns (y-reduce, 4 lanes)",
       reduced(DType::Float16, {8192, 1024}, {0}, Reduction::sum(DType::Float32))},
      {"max f16 [8192,768] over the columns (y-reduce pairs, partials)",
       reduced(DType::Float16, {8192, 768}, {0}, Reduction::max(DType::Float16))},
      {"sum f32 [1048579] (all-reduce)", reduced(DType::Float32, {1048579}, {0}, Reduction::sum(DType::Float32))},
      {"and bool [512,2048] over the rows", reduced(DType::Bool, {512, 2048}, {1}, Reduction::logicalAnd(DType::Bool))},
      {"cast(x + y) f32 -> f16 [1048576] (elementwise)", castSum({1048576})},
      {"softmax f16 [300,20001] (row-resident)", testgraphs::softmax(DType::Float16, {300, 20001}, 1)},
      {"argmax f16 [64,50257] (tuple lanes)", argmaxRows({64, 50257})},
  };
}

TEST(MisalignedGpu, KernelsOnOffsetTensorsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (const Case& c : cases())
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(c.name + (deterministic ? ", deterministic" : ""));
      CompiledGraph compiled = test_support::compileForGpu(c.graph, deterministic);
      bool vectorized = false;
      for (const KernelSpec& k : compiled.program.kernels)
        vectorized = vectorized || k.source.find("vector_ok") != std::string::npos;
      ASSERT_TRUE(vectorized) << "no kernel with vector accesses: the case tests nothing";
      GpuRunOptions run;
      run.misalignElements = 1;
      run.repeatChecks = deterministic ? 2 : 0;
      test_support::expectMatchesOnGpu(compiled, deterministic, run);
    }
}

}  // namespace
}  // namespace polyred
