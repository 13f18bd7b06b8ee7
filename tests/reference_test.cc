// Tests of the reference interpreter on small graphs whose results are worked out by
// hand, plus a check that every elementwise op agrees bit for bit with
// evalElementwise() (the interpreter has float fast paths that must not drift).
#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "frontend/builder.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "support/error.h"
#include "user_reductions.h"

using namespace polyred;

namespace {

std::vector<double> valuesOf(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t k = 0; k < t.size(); ++k) v.push_back(t.get(k).asDouble());
  return v;
}

// 0, 1, 2, ... in row-major order.
HostTensor iota(DType t, Shape s) {
  std::vector<double> v(static_cast<size_t>(numElements(s)));
  std::iota(v.begin(), v.end(), 0.0);
  return HostTensor::fromValues(t, std::move(s), v);
}

// Evaluates a one-output graph.
HostTensor evalOne(const GraphBuilder& b, const std::vector<HostTensor>& inputs) {
  std::vector<HostTensor> out = evaluateReference(b.build(), inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

using Values = std::vector<double>;

}  // namespace

TEST(Reference, SumOverInterleavedAxesAndKeepDims) {
  // x[i][j][k] = 12i + 4j + k over [2,3,4].
  GraphBuilder b("sum");
  Value x = b.input("x", DType::Float32, {2, 3, 4});
  b.output(b.reduceSum(x, {0, 2}));
  b.output(b.reduceSum(x, {0, 2}, true));
  b.output(b.reduceSum(x, {1}));
  b.output(b.reduceSum(x, {}));
  std::vector<HostTensor> out = evaluateReference(b.build(), {iota(DType::Float32, {2, 3, 4})});
  // (0,2): the sum over i,k of 12i+4j+k is 48 + 32j + 12
  EXPECT_EQ(valuesOf(out[0]), (Values{60, 92, 124}));
  EXPECT_EQ(out[1].shape, (Shape{1, 3, 1}));
  EXPECT_EQ(valuesOf(out[1]), (Values{60, 92, 124}));
  // (1): sum over j of 12i+4j+k = 36i + 12 + 3k
  EXPECT_EQ(valuesOf(out[2]), (Values{12, 15, 18, 21, 48, 51, 54, 57}));
  EXPECT_EQ(out[3].shape, Shape{});
  EXPECT_EQ(valuesOf(out[3]), (Values{276}));
}

TEST(Reference, MaxMinProdAndOr) {
  GraphBuilder b("reductions");
  Value x = b.input("x", DType::Float32, {2, 3});
  Value p = b.input("p", DType::Bool, {2, 3});
  b.output(b.reduceMax(x, {1}));
  b.output(b.reduce(x, Reduction::min(DType::Float32), {0}));
  b.output(b.reduce(x, Reduction::prod(DType::Float32), {1}));
  b.output(b.reduce(p, Reduction::logicalAnd(DType::Bool), {1}));
  b.output(b.reduce(p, Reduction::logicalOr(DType::Bool), {1}));
  HostTensor xv = HostTensor::fromValues(DType::Float32, {2, 3}, {3, -1, 2, 0.5, 4, -2});
  HostTensor pv = HostTensor::fromValues(DType::Bool, {2, 3}, {1, 1, 1, 0, 0, 1});
  std::vector<HostTensor> out = evaluateReference(b.build(), {xv, pv});
  EXPECT_EQ(valuesOf(out[0]), (Values{3, 4}));
  EXPECT_EQ(valuesOf(out[1]), (Values{0.5, -1, -2}));
  EXPECT_EQ(valuesOf(out[2]), (Values{-6, -4}));
  EXPECT_EQ(valuesOf(out[3]), (Values{1, 0}));
  EXPECT_EQ(valuesOf(out[4]), (Values{1, 1}));
}

TEST(Reference, UserCombinerUsesTheReductionExpression) {
  // The largest magnitude: max(|acc|, |x|) from 0 (|x| of an element is its partial).
  GraphBuilder b("max_abs");
  Value x = b.input("x", DType::Float32, {2, 3});
  b.output(b.reduce(x, test_support::maxAbsReduction(), {1}));
  EXPECT_EQ(valuesOf(evalOne(b, {HostTensor::fromValues(DType::Float32, {2, 3}, {1, -7, 3, -2, 0, 1.5})})),
            (Values{7, 2}));
}

// A fold-only combiner -- acc + x * x, right for a left-to-right fold of elements but
// squaring partials again where a tree merges them -- is refused where the graph is
// built, naming the law (ir/reduction_laws.h); so is a non-associative one.
TEST(Reference, CombinersThatCannotRunInParallelAreRefused) {
  auto refusal = [](ScalarExprPtr combiner) {
    Reduction r;
    r.name = "user";
    r.accType = DType::Float32;
    r.identity = Scalar::ofFloat(DType::Float32, 0);
    r.combiner = std::move(combiner);
    GraphBuilder b("user");
    b.output(b.reduce(b.input("x", DType::Float32, {4, 8}), r, {1}));
    try {
      b.build();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const ScalarExprPtr acc = ScalarExpr::argument(0), x = ScalarExpr::argument(1);
  const std::string sumsq = refusal(ScalarExpr::apply(OpKind::Add, {acc, ScalarExpr::apply(OpKind::Mul, {x, x})}));
  EXPECT_NE(sumsq.find("'user'"), std::string::npos) << sumsq;
  EXPECT_NE(sumsq.find("identity 0 is not neutral"), std::string::npos) << sumsq;
  const std::string difference = refusal(ScalarExpr::apply(OpKind::Sub, {acc, x}));
  EXPECT_NE(difference.find("not neutral on the left"), std::string::npos) << difference;
  // acc + |x| is not commutative on elements, but it is on its partials (sums of
  // magnitudes, never negative): the laws hold where a kernel uses them.
  EXPECT_EQ(refusal(ScalarExpr::apply(OpKind::Add, {acc, ScalarExpr::apply(OpKind::Abs, {x})})), "accepted");
  // The average of two: commutative, neutral nowhere, not associative.
  const std::string mean = refusal(ScalarExpr::apply(
      OpKind::Mul, {ScalarExpr::apply(OpKind::Add, {acc, x}), ScalarExpr::constant(Scalar::ofFloat(DType::Float32, 0.5))}));
  EXPECT_NE(mean.find("is not"), std::string::npos) << mean;
}

// The interpreter folds built-in reductions with typed loops; they must give what
// folding with Reduction::combine gives (float sums/products excepted: those
// accumulate in double on purpose).
TEST(Reference, BuiltinReductionsMatchReductionCombine) {
  using Factory = Reduction (*)(DType, std::optional<DType>);
  struct Case { Factory make; std::vector<DType> types; };
  const Case cases[] = {
      {Reduction::max, {DType::Float32, DType::Float16, DType::Int8, DType::UInt8, DType::Int32, DType::Int64}},
      {Reduction::min, {DType::Float32, DType::BFloat16, DType::Int8, DType::UInt8, DType::Int32}},
      {Reduction::sum, {DType::Int8, DType::UInt8, DType::Int32, DType::Int64, DType::Bool}},
      {Reduction::prod, {DType::Int8, DType::Int32, DType::Int64}},
      {Reduction::logicalAnd, {DType::Bool}},
      {Reduction::logicalOr, {DType::Bool}},
  };
  const int64_t rows = 5, length = 9;
  for (const Case& c : cases)
    for (DType t : c.types) {
      Reduction r = c.make(t, std::nullopt);
      GraphBuilder b("fold");
      Value x = b.input("x", t, {rows, length});
      b.output(b.reduce(x, r, {1}));
      HostTensor in = makeRandomTensor(t, {rows, length}, 3);
      if (isFloat(t)) in.set(length + 4, Scalar::ofFloat(DType::Float64, NAN));  // row 1 holds a NaN
      HostTensor got = evalOne(b, {in});
      for (int64_t row = 0; row < rows; ++row) {
        Scalar acc = r.identity.castTo(r.accType);
        for (int64_t k = 0; k < length; ++k) acc = r.combine(acc, in.get(row * length + k).castTo(r.accType));
        Scalar want = acc.castTo(t);
        EXPECT_TRUE(got.get(row).identical(want)) << r.name << " " << dtypeName(t) << " row " << row << ": got "
                                                  << got.get(row).toString() << ", want " << want.toString();
      }
    }
}

TEST(Reference, FloatSumAccumulatesInDouble) {
  // 2^24 + 1 + 1 is 2^24 in float32 step by step, 2^24 + 2 in double.
  GraphBuilder b("sum");
  Value x = b.input("x", DType::Float32, {3});
  b.output(b.reduceSum(x, {0}));
  HostTensor xv = HostTensor::fromValues(DType::Float32, {3}, {0x1p24, 1, 1});
  EXPECT_EQ(valuesOf(evalOne(b, {xv})), (Values{0x1p24 + 2}));
}

TEST(Reference, Float16RoundsEveryIntermediate) {
  GraphBuilder b("f16");
  Value x = b.input("x", DType::Float32, {2});
  Value h = b.cast(x, DType::Float16);
  b.output(b.cast(h, DType::Float32));
  // 1 + 2^-11 in float16 is a tie that rounds to even: 1.
  b.output(b.cast(b.add(h, b.constant(Scalar::ofFloat(DType::Float16, 0x1p-11))), DType::Float32));
  std::vector<HostTensor> out =
      evaluateReference(b.build(), {HostTensor::fromValues(DType::Float32, {2}, {0.1, 1.0})});
  EXPECT_EQ(valuesOf(out[0]), (Values{0.0999755859375, 1.0}));  // 0.1 to the nearest half
  EXPECT_EQ(valuesOf(out[1]), (Values{0.0999755859375 + 0x1p-11, 1.0}));
}

TEST(Reference, BroadcastingAddOfABias) {
  GraphBuilder b("bias");
  Value x = b.input("x", DType::Float32, {64, 128, 768});
  Value bias = b.input("bias", DType::Float32, {768});
  b.output(b.add(x, bias));
  std::vector<HostTensor> in = makeRandomInputs(b.build(), 7);
  HostTensor out = evalOne(b, in);
  ASSERT_EQ(out.shape, (Shape{64, 128, 768}));
  for (int64_t k : {int64_t{0}, int64_t{767}, int64_t{768}, int64_t{5 * 98304 + 3 * 768 + 100}, out.size() - 1})
    EXPECT_EQ(out.get(k).f, static_cast<float>(in[0].get(k).f + in[1].get(k % 768).f)) << k;
}

TEST(Reference, TransposeThenReduce) {
  GraphBuilder b("t");
  Value x = b.input("x", DType::Float32, {2, 3, 4});
  Value t = b.transpose(x, {2, 0, 1});  // [4,2,3]: t[k][i][j] = x[i][j][k]
  b.output(t);
  b.output(b.reduceSum(t, {1, 2}));
  std::vector<HostTensor> out = evaluateReference(b.build(), {iota(DType::Float32, {2, 3, 4})});
  ASSERT_EQ(out[0].shape, (Shape{4, 2, 3}));
  EXPECT_EQ(out[0].get(1 * 6 + 1 * 3 + 2).f, 12 + 8 + 1);  // t[1][1][2] = x[1][2][1]
  EXPECT_EQ(valuesOf(out[1]), (Values{60, 66, 72, 78}));  // sum_ij 12i+4j+k = 36+24+6k
}

TEST(Reference, ReshapeThenReduce) {
  GraphBuilder b("r");
  Value x = b.input("x", DType::Float32, {2, 6});
  b.output(b.reduceSum(b.reshape(x, {3, 4}), {1}));
  EXPECT_EQ(valuesOf(evalOne(b, {iota(DType::Float32, {2, 6})})), (Values{6, 22, 38}));
}

TEST(Reference, BroadcastToRepeatsAlongNewAndUnitDims) {
  GraphBuilder b("bcast");
  Value x = b.input("x", DType::Int32, {3, 1});
  b.output(b.broadcastTo(x, {2, 3, 2}));
  EXPECT_EQ(valuesOf(evalOne(b, {iota(DType::Int32, {3, 1})})), (Values{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
}

TEST(Reference, SelectBroadcastsItsOperands) {
  GraphBuilder b("select");
  Value c = b.input("c", DType::Bool, {2, 1});
  Value x = b.input("x", DType::Float32, {2, 3});
  b.output(b.select(c, x, b.constant(Scalar::ofFloat(DType::Float32, -1))));
  HostTensor cv = HostTensor::fromValues(DType::Bool, {2, 1}, {0, 1});
  EXPECT_EQ(valuesOf(evalOne(b, {cv, iota(DType::Float32, {2, 3})})), (Values{-1, -1, -1, 3, 4, 5}));
}

TEST(Reference, ConstantsBroadcastToTheirShape) {
  GraphBuilder b("const");
  Value x = b.input("x", DType::Float32, {2, 2});
  Value c = b.constant(Scalar::ofFloat(DType::Float32, 1.5), {2, 2});
  b.output(b.mul(x, b.constant(Scalar::ofFloat(DType::Float32, 2))));
  b.output(b.reduceSum(c, {}));
  b.output(c);
  std::vector<HostTensor> out = evaluateReference(b.build(), {iota(DType::Float32, {2, 2})});
  EXPECT_EQ(valuesOf(out[0]), (Values{0, 2, 4, 6}));
  EXPECT_EQ(valuesOf(out[1]), (Values{6}));
  EXPECT_EQ(valuesOf(out[2]), (Values{1.5, 1.5, 1.5, 1.5}));
}

TEST(Reference, IntegersWrapToTheirType) {
  GraphBuilder b("int8");
  Value x = b.input("x", DType::Int8, {3});
  b.output(b.reduceSum(x, {0}));                           // 300 wraps to 44
  b.output(b.add(x, x));                                   // 200 wraps to -56
  b.output(b.reduce(x, Reduction::sum(DType::Int8), {0}, false, DType::Int32));  // exact in int32
  std::vector<HostTensor> out = evaluateReference(b.build(), {HostTensor::fromValues(DType::Int8, {3}, {100, 100, 100})});
  EXPECT_EQ(valuesOf(out[0]), (Values{44}));
  EXPECT_EQ(valuesOf(out[1]), (Values{-56, -56, -56}));
  EXPECT_EQ(valuesOf(out[2]), (Values{300}));
}

TEST(Reference, CastsTruncateAndRound) {
  GraphBuilder b("cast");
  Value x = b.input("x", DType::Float32, {3});
  b.output(b.cast(x, DType::Int32));
  b.output(b.cast(x, DType::Bool));
  b.output(b.cast(b.cast(x, DType::BFloat16), DType::Float64));
  std::vector<HostTensor> out =
      evaluateReference(b.build(), {HostTensor::fromValues(DType::Float32, {3}, {-2.75, 0, 1.00390625})});
  EXPECT_EQ(valuesOf(out[0]), (Values{-2, 0, 1}));
  EXPECT_EQ(valuesOf(out[1]), (Values{1, 0, 1}));
  EXPECT_EQ(valuesOf(out[2]), (Values{-2.75, 0, 1.0}));  // 1 + 2^-8 ties to even in bfloat16
}

TEST(Reference, MaxPropagatesNaN) {
  GraphBuilder b("nan");
  Value x = b.input("x", DType::Float32, {2, 3});
  b.output(b.reduceMax(x, {1}));
  b.output(b.binary(OpKind::Maximum, x, b.constant(Scalar::ofFloat(DType::Float32, 0))));
  HostTensor xv = HostTensor::fromValues(DType::Float32, {2, 3}, {1, NAN, 2, 1, 2, 3});
  std::vector<HostTensor> out = evaluateReference(b.build(), {xv});
  EXPECT_TRUE(std::isnan(out[0].get(0).f));
  EXPECT_EQ(out[0].get(1).f, 3);
  EXPECT_TRUE(std::isnan(out[1].get(1).f));
}

TEST(Reference, AddNFoldsAndBroadcasts) {
  GraphBuilder b("addn");
  Value x = b.input("x", DType::Float32, {2, 2});
  Value y = b.input("y", DType::Float32, {2});
  b.output(b.addN({x, y, x}));
  HostTensor yv = HostTensor::fromValues(DType::Float32, {2}, {10, 20});
  EXPECT_EQ(valuesOf(evalOne(b, {iota(DType::Float32, {2, 2}), yv})), (Values{10, 22, 14, 26}));
}

TEST(Reference, AssignOutputsItsValue) {
  GraphBuilder b("assign");
  Value acc = b.input("acc", DType::Float32, {3});
  Value x = b.input("x", DType::Float32, {3});
  b.outputInto(b.add(acc, x), acc);
  HostTensor out = evalOne(b, {iota(DType::Float32, {3}), iota(DType::Float32, {3})});
  EXPECT_EQ(valuesOf(out), (Values{0, 2, 4}));
}

TEST(Reference, AllTensorsAreIndexedById) {
  GraphBuilder b("all");
  Value x = b.input("x", DType::Float32, {2});
  Value n = b.neg(x);
  b.output(b.reduceSum(n, {0}));
  std::vector<HostTensor> all = evaluateAllTensors(b.build(), {iota(DType::Float32, {2})});
  EXPECT_EQ(valuesOf(all[static_cast<size_t>(x.id)]), (Values{0, 1}));
  EXPECT_EQ(valuesOf(all[static_cast<size_t>(n.id)]), (Values{0, -1}));
}

TEST(Reference, RejectsInputsThatDoNotMatch) {
  GraphBuilder b("bad");
  Value x = b.input("x", DType::Float32, {2});
  b.output(b.neg(x));
  Graph g = b.build();
  EXPECT_THROW(evaluateReference(g, {}), Error);
  EXPECT_THROW(evaluateReference(g, {HostTensor::zeros(DType::Float32, {3})}), Error);
  EXPECT_THROW(evaluateReference(g, {HostTensor::zeros(DType::Float16, {2})}), Error);
}

// ---- every op vs evalElementwise ---------------------------------------------------

namespace {

const std::vector<double> kSpecialValues = {-3.7, -1, -0.5, -0.0, 0, 1e-3, 0.3, 0.5, 1, 2.5, 7,
                                            70000, INFINITY, -INFINITY, NAN};

// Checks every element of the graph's output against evalElementwise on its operands.
void expectMatchesEvalElementwise(OpKind k, DType t, const std::vector<HostTensor>& in) {
  GraphBuilder b("op");
  std::vector<Value> xs;
  for (size_t a = 0; a < in.size(); ++a) xs.push_back(b.input("x" + std::to_string(a), t, in[a].shape));
  Value y = xs.size() == 1 ? b.unary(k, xs[0]) : b.binary(k, xs[0], xs[1]);
  b.output(y);
  DType result = b.info(y).dtype;
  HostTensor out = evalOne(b, in);
  for (int64_t e = 0; e < out.size(); ++e) {
    std::vector<Scalar> args;
    for (const HostTensor& h : in) args.push_back(h.get(e));
    Scalar want = evalElementwise(k, args, result);
    EXPECT_TRUE(out.get(e).identical(want)) << opName(k) << " " << dtypeName(t) << " element " << e
                                            << ": got " << out.get(e).toString() << ", want " << want.toString();
  }
}

}  // namespace

TEST(Reference, EveryOpMatchesEvalElementwise) {
  std::vector<double> lhs, rhs;
  for (double a : kSpecialValues)
    for (double c : kSpecialValues) {
      lhs.push_back(a);
      rhs.push_back(c);
    }
  auto n = static_cast<int64_t>(kSpecialValues.size());
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int32, DType::Int8}) {
    for (int op = 0; op <= static_cast<int>(OpKind::LogicalOr); ++op) {
      auto k = static_cast<OpKind>(op);
      if (isComplexPart(k) || k == OpKind::Conj) continue;  // complex64 only: tests/complex_test.cc
      if (isLogical(k) && t != DType::Float32) continue;  // bool operands: once is enough
      if (isFloatMath(k) && !isFloat(t)) continue;           // refused by the verifier
      DType operand = isLogical(k) ? DType::Bool : t;
      if (opCategory(k) == OpCategory::Unary)
        expectMatchesEvalElementwise(k, operand, {HostTensor::fromValues(operand, {n}, kSpecialValues)});
      else
        expectMatchesEvalElementwise(k, operand, {HostTensor::fromValues(operand, {n * n}, lhs),
                                                  HostTensor::fromValues(operand, {n * n}, rhs)});
    }
  }
}

// Float math on integer tensors is refused with a reason, not computed in a dtype the
// graph did not ask for.
TEST(Reference, FloatMathOnIntegersIsRefused) {
  for (OpKind k : {OpKind::Exp, OpKind::Log, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Reciprocal, OpKind::Tanh}) {
    GraphBuilder b("int_math");
    b.output(b.unary(k, b.input("x", DType::Int32, {4})));
    try {
      b.build();
      ADD_FAILURE() << opName(k) << " of int32 was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Cast it to float32"), std::string::npos) << e.what();
    }
  }
}
