// Integer negations feeding chains of min and max, on the GPU. ptxas of CUDA 13.0
// (sm_90) drops the negation of a 32-bit value that feeds two same-kind min or max
// (min(min(-a, b), c) became min(-max(a, b), c)); generated code negates through
// pr_neg (src/device/polyred_elementwise.cuh), which it compiles correctly. Each graph
// here -- the shapes that exposed it in tests/gpu/random_graphs_gpu_test.cc and the
// other spellings of a negation (Sub from 0, Mul by -1, Abs, Div by -1) -- must match
// the reference exactly. Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "runtime/executor.h"

namespace polyred {
namespace {

using Spelling = Value (*)(GraphBuilder&, Value);

Value negate(GraphBuilder& b, Value x) { return b.neg(x); }
Value subtractFromZero(GraphBuilder& b, Value x) {
  return b.binary(OpKind::Sub, b.constant(Scalar::ofInt(b.info(x).dtype, 0)), x);
}
Value timesMinusOne(GraphBuilder& b, Value x) {
  return b.binary(OpKind::Mul, x, b.constant(Scalar::ofInt(b.info(x).dtype, -1)));
}
Value dividedByMinusOne(GraphBuilder& b, Value x) {
  return b.binary(OpKind::Div, x, b.constant(Scalar::ofInt(b.info(x).dtype, -1)));
}
Value minusAbs(GraphBuilder& b, Value x) { return b.neg(b.unary(OpKind::Abs, x)); }

struct Case {
  std::string name;
  Graph graph;
};

// out = Minimum(Minimum(-a, b), c) (or Maximum), elementwise.
Graph chainOfTwo(DType t, OpKind op, Spelling negation, const std::string& name) {
  GraphBuilder b(name);
  Shape s = {4099};
  Value a = b.input("a", t, s), x = b.input("b", t, s), y = b.input("c", t, s);
  b.output(b.binary(op, b.binary(op, negation(b, a), x), y));
  return b.build();
}

// A min (max) reduction of negated values, unrolled per thread: all-reduce of 21 values
// (the first seed that failed), a row reduction of long rows, a column reduction.
Graph reductionOfNegated(DType t, bool min, const Shape& s, const std::vector<int64_t>& axes, const std::string& name) {
  GraphBuilder b(name);
  Value a = b.input("a", t, s), x = b.input("b", t, s);
  Value v = b.neg(b.binary(OpKind::Minimum, b.binary(OpKind::Maximum, a, x), b.input("c", t, s)));
  b.output(b.reduce(v, builtinReduction(min ? BuiltinCombiner::Min : BuiltinCombiner::Max, t), axes));
  return b.build();
}

TEST(IntegerNegationGpu, NegatedValuesFeedingMinMaxChainsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  std::vector<Case> cases;
  const std::vector<std::pair<std::string, Spelling>> spellings = {{"Neg", negate},
                                                                   {"Sub(0, x)", subtractFromZero},
                                                                   {"Mul(x, -1)", timesMinusOne},
                                                                   {"Div(x, -1)", dividedByMinusOne},
                                                                   {"Neg(Abs)", minusAbs}};
  for (DType t : {DType::Int32, DType::Int8, DType::Int64})
    for (OpKind op : {OpKind::Minimum, OpKind::Maximum})
      for (const auto& [spelling, negation] : spellings) {
        std::string name = std::string(dtypeName(t)) + " " + std::string(opName(op)) + " chain of " + spelling;
        cases.push_back({name, chainOfTwo(t, op, negation, "neg_chain")});
      }
  for (DType t : {DType::Int32, DType::Int8})
    for (bool min : {true, false}) {
      const std::string kind = std::string(dtypeName(t)) + (min ? " min" : " max");
      cases.push_back({kind + " of 21 negated values", reductionOfNegated(t, min, {7, 3}, {0, 1}, "neg_all")});
      cases.push_back({kind + " of negated rows", reductionOfNegated(t, min, {7, 3, 8192, 2}, {1, 3}, "neg_rows")});
      cases.push_back({kind + " of negated columns", reductionOfNegated(t, min, {64, 32, 33}, {1}, "neg_columns")});
    }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CompileOptions options;
    options.target = currentTarget();
    GpuRunOptions run;
    run.time = false;
    GpuRunReport r = runOnGpu(compileGraph(c.graph, options), run);
    EXPECT_TRUE(r.ok) << r.check;
  }
}

}  // namespace
}  // namespace polyred
