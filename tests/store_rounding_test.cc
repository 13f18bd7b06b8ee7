// 16-bit values that only stores read stay in float (codegen/store_rounding.h): the
// store rounds them, so their own rounding (pr_fit_float16 / pr_fit_bfloat16) is left
// out -- and kept wherever something else reads the value, or where rounding from float
// is not the cast's own rounding (an integer to bfloat16). Each program matches the
// reference on the CPU and compiles under NVRTC; the GPU runs casts of edge values bit
// for bit against the reference (tests/gpu, EdgeValuesGpu and OpsGpu).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/store_rounding.h"
#include "frontend/builder.h"
#include "lowering_helpers.h"

namespace polyred {
namespace {

using test_support::compileWithKnobs;
using test_support::occurrences;

struct Lowered {
  CompiledGraph compiled;
  std::string source;
};

Lowered lower(const Graph& g) {
  CompiledGraph c = compileWithKnobs(g, "");
  EXPECT_EQ(c.program.kernels.size(), 1u);
  test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/3);
  std::string source = c.program.kernels.empty() ? "" : c.program.kernels[0].source;
  return {std::move(c), std::move(source)};
}

TEST(StoreRounding, CastsOnlyStoredAreLeftToTheStore) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtypeName(t));
    GraphBuilder b("cast_out");
    Value x = b.input("x", DType::Float32, {37, 1001});
    Value y = b.input("y", t, {37, 1001}), z = b.input("z", t, {37, 1001});
    b.output(b.cast(b.unary(OpKind::Exp, x), t));
    b.output(b.binary(OpKind::Maximum, y, z));  // a 16-bit op computed in float, only stored
    const Lowered l = lower(b.build());
    EXPECT_EQ(l.source.find("pr_fit_"), std::string::npos) << l.source;
    const std::vector<bool> rounded = roundedByStores(l.compiled.kernels[0].plan, l.compiled.graph);
    EXPECT_GE(std::count(rounded.begin(), rounded.end(), true), 2) << l.source;
  }
}

TEST(StoreRounding, ValuesReadElsewhereKeepTheirRounding) {
  GraphBuilder b("cast_read");
  Value x = b.input("x", DType::Float32, {64, 3000});
  Value h = b.cast(x, DType::Float16);
  b.output(h);
  b.output(b.reduceSum(b.cast(h, DType::Float32), {1}));  // the sum reads the rounded halves
  const Lowered l = lower(b.build());
  EXPECT_GE(occurrences(l.source, "pr_fit_float16("), 1u) << l.source;
  const KernelPlan& plan = l.compiled.kernels[0].plan;
  const std::vector<bool> rounded = roundedByStores(plan, l.compiled.graph);
  for (size_t v = 0; v < plan.body.size(); ++v)
    if (plan.body[v].kind == BodyValue::Kind::Op && plan.body[v].op == OpKind::Cast &&
        plan.body[v].dtype == DType::Float16)
      EXPECT_FALSE(rounded[v]) << "value " << v << " is read by another value";
}

TEST(StoreRounding, IntegersToBFloat16RoundOnceFromTheInteger) {
  GraphBuilder b("int_to_bf16");
  b.output(b.cast(b.input("n", DType::Int32, {4099}), DType::BFloat16));  // float first would round twice
  b.output(b.cast(b.input("m", DType::Int32, {4099}), DType::Float16));   // as before: through float
  const Lowered l = lower(b.build());
  EXPECT_NE(l.source.find("pr_int_to_bfloat16("), std::string::npos) << l.source;
  EXPECT_EQ(l.source.find("pr_fit_float16("), std::string::npos) << l.source;
}

}  // namespace
}  // namespace polyred
