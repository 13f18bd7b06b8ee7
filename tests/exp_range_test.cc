// Which Exps the kernels compute on the approximate unit (codegen/exp_range.h): those of
// x - max(x) over the row and those only rounded to 16 bits; every other f32 Exp stays
// expf. Checked on the generated CUDA of small graphs (no GPU needed); the GPU half,
// against the reference on rows with wide spreads and non-finite values, is
// RowResidentGpu.FastExpRowsMatchTheReference.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "row_resident_graphs.h"

namespace polyred {
namespace {

struct ExpCalls {
  int fast = 0;
  int exact = 0;
};

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

ExpCalls expCalls(const Graph& g, const std::string& knobs = "") {
  CompileOptions o;
  o.config = KernelConfig::parse(knobs, "test");
  CompiledGraph c = compileGraph(g, o);
  ExpCalls calls;
  for (const KernelSpec& k : c.program.kernels) {
    // The device library's prelude is #included, not pasted: only the kernel's calls count.
    calls.fast += count(k.source, "pr_expf_fast(");
    calls.exact += count(k.source, "pr_expf(");
  }
  return calls;
}

const Shape kRows = {64, 1000};

TEST(ExpRange, SoftmaxOfFloat32RowsTakesTheFastExp) {
  ExpCalls c = expCalls(testgraphs::softmax(DType::Float32, kRows, 1));
  EXPECT_GT(c.fast, 0);
  EXPECT_EQ(c.exact, 0);
}

TEST(ExpRange, LogSumExpRowsTakeTheFastExp) {
  GraphBuilder b("lse");
  b.output(b.logSumExp(b.input("x", DType::Float32, kRows), {1}));
  ExpCalls c = expCalls(b.build(), "lse=split");  // max-then-sum (canon/logsumexp_rows): Select(IsInf(m), 0, m)
  EXPECT_GT(c.fast, 0);
  EXPECT_EQ(c.exact, 0);
}

// The Exps of sum(exp(argument(b, x)), axis 1) over x of float32 [64, 1000].
ExpCalls sumOfExp(const std::function<Value(GraphBuilder&, Value)>& argument) {
  GraphBuilder b("sum_exp");
  Value x = b.input("x", DType::Float32, kRows);
  b.output(b.reduceSum(b.unary(OpKind::Exp, argument(b, x)), {1}));
  return expCalls(b.build());
}

TEST(ExpRange, AnExpOfAnUnshiftedArgumentStaysExact) {
  ExpCalls c = sumOfExp([](GraphBuilder&, Value x) { return x; });
  EXPECT_EQ(c.fast, 0);
  EXPECT_GT(c.exact, 0);
}

TEST(ExpRange, AShiftByTheMaxOfAnotherTensorStaysExact) {
  ExpCalls c = sumOfExp([](GraphBuilder& b, Value x) {
    return b.sub(x, b.reduceMax(b.input("y", DType::Float32, kRows), {1}, true));
  });
  EXPECT_EQ(c.fast, 0);
  EXPECT_GT(c.exact, 0);
}

TEST(ExpRange, AShiftByTheMinStaysExact) {
  ExpCalls c = sumOfExp([](GraphBuilder& b, Value x) {
    return b.sub(x, b.reduce(x, Reduction::min(DType::Float32), {1}, true));
  });
  EXPECT_EQ(c.fast, 0);
  EXPECT_GT(c.exact, 0);
}

TEST(ExpRange, AnExpOnlyRoundedToSixteenBitsTakesTheFastExp) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    GraphBuilder b("exp_to_16");
    b.output(b.cast(b.unary(OpKind::Exp, b.input("x", DType::Float32, {1000})), t));
    ExpCalls c = expCalls(b.build());
    EXPECT_EQ(c.fast, 1) << dtypeName(t);
    EXPECT_EQ(c.exact, 0) << dtypeName(t);
  }
}

TEST(ExpRange, AnExpAlsoStoredAsFloat32StaysExact) {
  GraphBuilder b("exp_both");
  Value e = b.unary(OpKind::Exp, b.input("x", DType::Float32, {1000}));
  b.output(b.cast(e, DType::Float16));
  b.output(e);
  ExpCalls c = expCalls(b.build());
  EXPECT_EQ(c.fast, 0);
  EXPECT_GT(c.exact, 0);
}

TEST(ExpRange, SixteenBitExpsTakeTheFastExpAndFloat64StaysDouble) {
  GraphBuilder h("exp_f16");
  h.output(h.unary(OpKind::Exp, h.input("x", DType::Float16, {1000})));
  EXPECT_EQ(expCalls(h.build()).fast, 1);
  ExpCalls c = expCalls(testgraphs::softmax(DType::Float64, kRows, 1));
  EXPECT_EQ(c.fast + c.exact, 0);
}

}  // namespace
}  // namespace polyred
