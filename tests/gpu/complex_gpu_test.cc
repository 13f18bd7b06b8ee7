// complex64 on the GPU: the pr_complex device type, its word-wise warp shuffles, the
// complex sum's two-float atomicAdd combine and the complex product's block-order
// combine, launched and compared with the reference interpreter within the float32
// tolerances of each part, in every reduction form with several blocks per row; the
// elementwise complex ops bit for bit. The CPU half is tests/complex_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "lowering_helpers.h"
#include "gpu/gpu_compile.h"
#include "runtime/executor.h"  // gpuAvailable

using namespace polyred;

namespace {

struct FormCase {
  const char* name;
  Shape shape;
  int64_t axis;
};
const FormCase kForms[] = {{"all", {1000003}, 0}, {"x", {7, 300001}, 1}, {"y", {300001, 7}, 0}, {"x-short", {4096, 33}, 1}};

using test_support::compileForGpu;

}  // namespace

TEST(ComplexGpu, SumAndProdAgreeWithTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  for (const FormCase& f : kForms)
    for (bool deterministic : {false, true}) {
      GraphBuilder b("complex_reduce");
      Value re = b.input("re", DType::Float32, f.shape);
      Value im = b.input("im", DType::Float32, f.shape);
      Value z = b.complex(re, im);
      Value s = b.reduceSum(b.mul(z, z), {f.axis});
      // The factors are 1, -1, i or -i (from the signs of the inputs, never zero), so
      // every partial product is exact in float32 whatever the order of the combine:
      // the result must match bit for bit. (A product of 300001 general factors
      // legitimately drifts by sqrt(N) float32 roundings, ~3e-5 relative, past the
      // per-element tolerance: measured on the H100, 2026-11-23.)
      Value half = b.constant(Scalar::ofFloat(DType::Float32, 0.5));
      Value one = b.constant(Scalar::ofFloat(DType::Float32, 1.0));
      Value s1 = b.unary(OpKind::Sign, re), s2 = b.unary(OpKind::Sign, im);
      Value realPart = b.mul(s2, b.mul(b.add(one, s1), half));  // s2 where s1 = 1, else 0
      Value imagPart = b.mul(s2, b.mul(b.sub(one, s1), half));  // s2 where s1 = -1, else 0
      Value p = b.reduce(b.complex(realPart, imagPart), Reduction::prod(DType::Complex64), {f.axis});
      b.output(s);
      b.output(p);
      b.output(b.creal(s));
      b.output(b.cimag(p));
      const Graph g = b.build();
      const std::vector<HostTensor> inputs = makeRandomInputs(g, 9);
      const std::vector<HostTensor> got = launchOnGpu(compileForGpu(g, deterministic), inputs);
      CpuCheckReport r = compareOutputs(g, got, {}, evaluateReference(g, inputs));
      EXPECT_TRUE(r.ok) << f.name << (deterministic ? " deterministic" : " atomic") << "\n" << r.message;
    }
}

TEST(ComplexGpu, ElementwiseOpsMatchTheReferenceBitForBit) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << "no GPU: " << why;
  GraphBuilder b("complex_ew");
  Value z = b.input("z", DType::Complex64, {333, 517});
  Value w = b.input("w", DType::Complex64, {517});
  Value q = b.binary(OpKind::Div, b.mul(b.sub(z, w), z), b.add(w, b.conj(z)));
  b.output(q);
  b.output(b.unary(OpKind::Abs, q));
  b.output(b.neg(b.complex(b.cimag(z), b.creal(w))));
  const Graph g = b.build();
  const std::vector<HostTensor> inputs = makeRandomInputs(g, 3);
  const std::vector<HostTensor> want = evaluateReference(g, inputs);
  test_support::expectIdenticalOutputs(launchOnGpu(compileForGpu(g, false), inputs), want, "GPU");
}
