// GPU half of the symbolic-dimension tests (tests/symbolic_dims_test.cc runs the same
// programs on the CPU executor): a layer norm and a softmax whose rows are the size
// symbol S compile once, load once, and launch at many values of S -- 1, primes,
// sizes off the row tiles, and more rows than the compiled grid has blocks (the kernel
// loops over the tiles past it) -- each compared with the reference of the graph at
// that size. S = 0 launches nothing. A temporary between two kernels, sized by S,
// follows the sizes of one loaded program. A layer norm's row variants each launch at
// both ends of their rows; past 2^31 elements the 64-bit kernel runs, and the 32-bit one
// at the last size it serves. Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/symbolic_launch.h"
#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "frontend/builder.h"
#include "gpu/gpu_compile.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "runtime/executor.h"
#include "symbolic_graphs.h"

namespace polyred {
namespace {

using testgraphs::symbolicSoftmax;

// Layer norm of [S, H] rows in `t` without gamma or beta.
Graph plainLayerNorm(DType t, int64_t hidden) {
  GraphBuilder b("gpu_sym_layer_norm");
  Value x = b.cast(b.symbolicInput("x", t, {"S", hidden}), DType::Float32);
  Value n = b.constant(Scalar::ofFloat(DType::Float32, static_cast<double>(hidden)));
  Value mean = b.binary(OpKind::Div, b.reduceSum(x, {1}, true), n);
  Value c = b.sub(x, mean);
  Value var = b.binary(OpKind::Div, b.reduceSum(b.mul(c, c), {1}, true), n);
  Value inv = b.unary(OpKind::Rsqrt, b.add(var, b.constant(Scalar::ofFloat(DType::Float32, 1e-5))));
  b.output(b.cast(b.mul(c, inv), t));
  return b.build();
}

void expectMatchesAtSizes(const Graph& g, const std::vector<int64_t>& sizes) {
  const CompiledGraph c = test_support::compileForGpu(g);
  ASSERT_EQ(c.program.symbols, std::vector<std::string>{"S"});
  for (int64_t s : sizes) {
    const Graph at = graphAtSizes(c, {s});
    const std::vector<HostTensor> inputs = makeRandomInputs(at, static_cast<uint64_t>(s) + 1);
    const std::vector<HostTensor> got = launchOnGpu(c, inputs, {s});
    const CpuCheckReport r = compareWholeOutputs(at, inputs, got, evaluateReference(at, inputs));
    EXPECT_TRUE(r.ok) << g.name << " at S = " << s << ":\n" << r.message;
  }
}

// One launch of a loaded program at S = s (inputs drawn from seed s + seedOffset),
// compared with the reference of the graph at that size; `what` names the launch.
void expectLaunchMatches(CompiledProgram& program, const CompiledGraph& c, int64_t s, uint64_t seedOffset,
                         const std::string& what) {
  const Graph at = graphAtSizes(c, {s});
  const std::vector<HostTensor> inputs = makeRandomInputs(at, static_cast<uint64_t>(s) + seedOffset);
  const std::vector<HostTensor> got = launchOnGpu(program, c, inputs, {s});
  const CpuCheckReport r = compareWholeOutputs(at, inputs, got, evaluateReference(at, inputs));
  EXPECT_TRUE(r.ok) << "at S = " << s << what << ":\n" << r.message;
}

TEST(SymbolicGpu, LayerNormOneKernelForEveryRowCount) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  // 200003 rows of 768: more row tiles than the compiled grid.y, so blocks loop.
  expectMatchesAtSizes(plainLayerNorm(DType::Float16, 768), {1, 2, 3, 31, 97, 1000, 4099, 200003});
}

// Layer norm of [4, S, 1024] bfloat16 (the H100 measurement's): one kernel per binding
// the policy takes over the rows (driver/row_variants.h) -- 256 threads on one staged
// row a block at a few rows, then 2 and 4 rows a block. Each variant launches at both
// ends of its rows and beside them, from one loaded program.
TEST(SymbolicGpu, LayerNormRowVariantsAtBothEndsOfTheirRows) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const CompiledGraph compiled =
      test_support::compileForGpu(testgraphs::symbolicLayerNorm(4, 1024, DType::BFloat16));
  const KernelSpec& launch = compiled.program.kernels.at(0);
  ASSERT_FALSE(launch.rowVariants.empty()) << describeLaunches(compiled.program);
  std::vector<int64_t> sizes = {1, 2, 3, 20011};
  for (const KernelSpec& v : launch.rowVariants) {
    const int64_t last = v.launch.rows.mostRows / 4;  // the last S it serves
    // The end where only the index width changes, at 2^31 elements, is
    // LayerNormPast2To31ElementsAtBothIndexWidths's (a whole reference there takes minutes).
    if (last * 4 * 1024 > (int64_t{1} << 28)) continue;
    for (int64_t s : {v.launch.rows.fewestRows / 4, last - 1, last, last + 1})
      if (s >= 1) sizes.push_back(s);
  }
  CompiledProgram program = CompiledProgram::load(compiled.program, currentDevice());
  for (int64_t s : sizes) expectLaunchMatches(program, compiled, s, 7, " (" + kernelForRows(launch, {s}).name + ")");
}

// `rows` rows of `x` ([S, H]) from row `first`, as a [rows, H] tensor.
HostTensor rowsOf(const HostTensor& x, int64_t first, int64_t rows) {
  const int64_t rowBytes = x.byteSize() / x.shape.at(0);
  HostTensor part = HostTensor::zeros(x.dtype, {rows, x.shape.at(1)});
  std::memcpy(part.data(), x.bytes.data() + first * rowBytes, static_cast<size_t>(rows * rowBytes));
  return part;
}

// Past 2^31 elements: a layer norm of [S, 1024] bfloat16 launches its kernel of 32-bit
// indices at the last S it serves (its last index near 2^31 - 1) and the 64-bit kernel
// at the next (more than 2^31 elements; 8.6 GB in and out). The rows of a layer norm are
// independent, so the first and last 64 rows of the output are compared with the
// reference of those rows alone (the whole reference would take minutes on the host).
TEST(SymbolicGpu, LayerNormPast2To31ElementsAtBothIndexWidths) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  constexpr int64_t kHidden = 1024, kChecked = 64;
  const CompiledGraph c = test_support::compileForGpu(plainLayerNorm(DType::BFloat16, kHidden));
  const KernelSpec& launch = c.program.kernels.at(0);
  int64_t last32 = 0;  // the most rows (S) a kernel of 32-bit indices serves
  for (const PolyKernel& v : c.kernels.at(0).rowVariants)
    if (!v.index64) last32 = std::max(last32, v.plan.symbolicRows->mostRows);
  ASSERT_GT((last32 + 1) * kHidden, int64_t{1} << 31) << describeLaunches(c.program);
  const Graph part = graphAtSizes(c, {kChecked});
  for (int64_t s : {last32, last32 + 1}) {
    HostTensor x = HostTensor::zeros(DType::BFloat16, {s, kHidden});
    uint16_t* bits = static_cast<uint16_t*>(x.data());
    uint32_t state = static_cast<uint32_t>(s);
    for (int64_t e = 0; e < x.size(); ++e) {  // bfloat16 values in [-2, 2): a float's upper half
      state = state * 1664525u + 1013904223u;
      const float v = static_cast<float>(state >> 8) * (4.0f / 16777216.0f) - 2.0f;
      uint32_t f;
      std::memcpy(&f, &v, sizeof f);
      bits[e] = static_cast<uint16_t>(f >> 16);
    }
    const std::vector<HostTensor> got = launchOnGpu(c, {x}, {s});
    ASSERT_EQ(got.size(), 1u);
    for (int64_t first : {int64_t{0}, s - kChecked}) {
      const std::vector<HostTensor> in = {rowsOf(x, first, kChecked)};
      const CpuCheckReport r =
          compareWholeOutputs(part, in, {rowsOf(got[0], first, kChecked)}, evaluateReference(part, in));
      EXPECT_TRUE(r.ok) << "at S = " << s << " (" << kernelForRows(launch, {s}).name << "), rows from " << first
                        << ":\n" << r.message;
    }
  }
}

TEST(SymbolicGpu, SoftmaxOverAVocabularyForEveryRowCount) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  expectMatchesAtSizes(symbolicSoftmax(50257), {1, 5, 64, 333});
}

// Kernels with temporaries of S * 4 row statistics between them, one loaded program
// launched at sizes that grow (the temporary is reallocated larger) and shrink (it is
// kept), each compared with the reference.
TEST(SymbolicGpu, ATemporarySizedByTheSymbolFollowsEveryLaunch) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  GraphBuilder b("gpu_sym_norm_then_softmax");
  Value x = b.symbolicInput("x", DType::Float32, {4, "S", 256});
  Value centered = b.sub(x, b.binary(OpKind::Div, b.reduceSum(x, {2}, true),
                                     b.constant(Scalar::ofFloat(DType::Float32, 256.0))));
  Value rows = b.reshape(centered, {b.symbolSize("S") * 4, 256});
  Value e = b.unary(OpKind::Exp, b.sub(rows, b.reduceMax(rows, {1}, true)));
  b.output(b.binary(OpKind::Div, e, b.reduceSum(e, {1}, true)));
  const CompiledGraph c = test_support::compileForGpu(b.build());
  ASSERT_FALSE(c.program.temporaries.empty());
  for (const TemporarySpec& t : c.program.temporaries) ASSERT_EQ(t.symbol, 0);
  CompiledProgram program = CompiledProgram::load(c.program, currentDevice());
  for (int64_t s : {3, 1000, 7, 4099, 2, 20011, 1}) expectLaunchMatches(program, c, s, 5, "");
}

// No rows: the kernel is not launched, and nothing else is touched.
TEST(SymbolicGpu, ZeroRowsLaunchNothing) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const CompiledGraph c = test_support::compileForGpu(symbolicSoftmax(1000));
  CompiledProgram program = CompiledProgram::load(c.program, currentDevice());
  DeviceBuffer x(16), y(16);  // never read or written at S = 0
  program.launch(std::vector<void*>{x.data()}, std::vector<void*>{y.data()}, nullptr, {0});
  EXPECT_THROW(program.launch(std::vector<void*>{x.data()}, std::vector<void*>{y.data()}, nullptr), Error);
}

}  // namespace
}  // namespace polyred
