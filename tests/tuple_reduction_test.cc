// Tuple reductions (ir/tuple_reduction.h) in the IR and the reference interpreter:
// argmax/argmin with PyTorch's tie and NaN rules, Welford mean/variance (and the
// numerics that motivate it), online logsumexp, an order-dependent user tuple, and the
// validation of malformed tuples.
#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "frontend/builder.h"
#include "interp/reference.h"
#include "ir/tuple_reduction.h"
#include "support/error.h"

using namespace polyred;

namespace {

std::vector<double> valuesOf(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t k = 0; k < t.size(); ++k) v.push_back(t.get(k).asDouble());
  return v;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// argmax, argmin, and both with values, of x over `axis`.
std::vector<HostTensor> argAll(DType t, Shape s, const std::vector<double>& x, int64_t axis) {
  GraphBuilder b("arg");
  Value in = b.input("x", t, s);
  b.output(b.argmax(in, axis));
  b.output(b.argmin(in, axis));
  auto [imax, vmax] = b.argmaxWithValue(in, axis);
  auto [imin, vmin] = b.argminWithValue(in, axis);
  b.output(imax);
  b.output(vmax);
  b.output(imin);
  b.output(vmin);
  return evaluateReference(b.build(), {HostTensor::fromValues(t, s, x)});
}

}  // namespace

TEST(TupleReference, ArgmaxTiesNaNAndEqualRows) {
  // Row 0: a tie between indices 1 and 2 (first wins); row 1: NaN at 1 and 3 (the
  // first NaN wins for both argmax and argmin); row 2: all equal; row 3: all -inf.
  std::vector<double> x = {1, 3, 3, 2, 0,  1, kNaN, 5, kNaN, -7,  2, 2, 2, 2, 2,  -kInf, -kInf, -kInf, -kInf, -kInf};
  std::vector<HostTensor> out = argAll(DType::Float32, {4, 5}, x, 1);
  EXPECT_EQ(out[0].dtype, DType::Int32);
  EXPECT_EQ(out[0].shape, (Shape{4}));
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{1, 1, 0, 0}));
  EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{4, 1, 0, 0}));
  EXPECT_EQ(valuesOf(out[2]), valuesOf(out[0]));
  EXPECT_EQ(valuesOf(out[4]), valuesOf(out[1]));
  std::vector<double> vmax = valuesOf(out[3]), vmin = valuesOf(out[5]);
  EXPECT_EQ(vmax[0], 3);
  EXPECT_TRUE(std::isnan(vmax[1]));
  EXPECT_EQ(vmax[2], 2);
  EXPECT_EQ(vmax[3], -kInf);
  EXPECT_EQ(vmin[0], 0);
  EXPECT_TRUE(std::isnan(vmin[1]));
  EXPECT_EQ(vmin[3], -kInf);
}

// argmax/argmin's later-combine (the kernels' lane fold) equals the combine wherever
// its contract holds: every pair of lifted elements (a before b) over values with ties,
// signed zeros, infinities, NaNs and each input type's extremes.
TEST(TupleReference, ArgExtremaLaterCombineIsTheCombineForOrderedElements) {
  const std::vector<double> values = {-kInf, -3, -0.0, 0.0, 0.5, 2, 2, kInf, kNaN, -kNaN, 127, -128, 255};
  for (bool max : {true, false})
    for (DType in : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int32, DType::Int8,
                     DType::UInt8, DType::Bool})
      for (DType index : {DType::Int32, DType::Int64}) {
        auto t = argExtremumTuple(max, in, index, 1000);
        ASSERT_TRUE(t->hasCombineLater());
        int checked = 0;
        for (size_t ia = 0; ia < values.size(); ++ia)
          for (size_t ib = 0; ib < values.size(); ++ib) {
            const Scalar va = Scalar::convert(values[ia], in), vb = Scalar::convert(values[ib], in);
            const Scalar i0 = Scalar::ofInt(t->inputs[1], static_cast<int64_t>(ia));
            const Scalar i1 = Scalar::ofInt(t->inputs[1], static_cast<int64_t>(ia + 1 + ib));
            const Scalar ea[2] = {va, i0}, eb[2] = {vb, i1};
            const TupleValue a = liftTuple(*t, ea), b = liftTuple(*t, eb);
            const TupleValue want = combineTuples(*t, a, b), got = combineLaterTuples(*t, a, b);
            for (size_t k = 0; k < want.size(); ++k)
              ASSERT_TRUE(got[k].identical(want[k]))
                  << t->name << " " << dtypeName(in) << ": a = " << va.toString() << ", b = " << vb.toString()
                  << ", field " << k << ": later " << got[k].toString() << ", combine " << want[k].toString();
            ++checked;
          }
        EXPECT_EQ(checked, static_cast<int>(values.size() * values.size()));
      }
}

TEST(TupleReference, SignedZerosTieToTheFirstIndex) {
  // -0 == +0: a tie, so the first index and its value (with its sign) win.
  std::vector<HostTensor> out = argAll(DType::Float32, {2, 2}, {-0.0, 0.0, 0.0, -0.0}, 1);
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{0, 0}));
  EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{0, 0}));
  EXPECT_TRUE(std::signbit(out[3].get(0).asDouble()));
  EXPECT_FALSE(std::signbit(out[3].get(1).asDouble()));
  EXPECT_TRUE(std::signbit(out[5].get(0).asDouble()));
  EXPECT_FALSE(std::signbit(out[5].get(1).asDouble()));
}

TEST(TupleReference, ArgmaxOverAxisZeroAndOverAVector) {
  // y-reduce: x[r][c] over r.
  std::vector<HostTensor> out = argAll(DType::Float32, {3, 4}, {0, 9, 2, 5,  7, 1, 2, 5,  3, 9, 8, 6}, 0);
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{1, 0, 2, 2}));
  EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(valuesOf(out[3]), (std::vector<double>{7, 9, 8, 6}));
  // all-reduce: a vector, axis -1.
  std::vector<HostTensor> v = argAll(DType::Float32, {6}, {4, -1, 8, 8, -1, 0}, -1);
  EXPECT_EQ(v[0].shape, Shape{});
  EXPECT_EQ(valuesOf(v[0]), (std::vector<double>{2}));
  EXPECT_EQ(valuesOf(v[1]), (std::vector<double>{1}));
  // a middle axis of a 3-D tensor, keepDims
  GraphBuilder b("mid");
  Value x = b.input("x", DType::Float32, {2, 3, 2});
  b.output(b.argmax(x, 1, DType::Int64, true));
  std::vector<HostTensor> m =
      evaluateReference(b.build(), {HostTensor::fromValues(DType::Float32, {2, 3, 2}, {1, 6, 5, 2, 3, 4,  9, 0, 9, 8, 1, 8})});
  EXPECT_EQ(m[0].dtype, DType::Int64);
  EXPECT_EQ(m[0].shape, (Shape{2, 1, 2}));
  EXPECT_EQ(valuesOf(m[0]), (std::vector<double>{1, 0, 0, 1}));
}

TEST(TupleReference, IntegerAndBoolInputsAtTheirLimits) {
  // int8 rows made only of -128 / 127: the identity must lose every tie.
  std::vector<HostTensor> i8 = argAll(DType::Int8, {2, 3}, {-128, -128, -128, 127, 127, 127}, 1);
  EXPECT_EQ(valuesOf(i8[0]), (std::vector<double>{0, 0}));
  EXPECT_EQ(valuesOf(i8[1]), (std::vector<double>{0, 0}));
  EXPECT_EQ(i8[3].dtype, DType::Int8);
  EXPECT_EQ(valuesOf(i8[3]), (std::vector<double>{-128, 127}));
  const double lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  std::vector<HostTensor> i32 = argAll(DType::Int32, {2, 3}, {lo, lo, lo, hi, lo, hi}, 1);
  EXPECT_EQ(valuesOf(i32[0]), (std::vector<double>{0, 0}));
  EXPECT_EQ(valuesOf(i32[1]), (std::vector<double>{0, 1}));
  std::vector<HostTensor> u8 = argAll(DType::UInt8, {1, 4}, {255, 0, 255, 0}, 1);
  EXPECT_EQ(valuesOf(u8[0]), (std::vector<double>{0}));
  EXPECT_EQ(valuesOf(u8[1]), (std::vector<double>{1}));
  std::vector<HostTensor> bl = argAll(DType::Bool, {2, 3}, {0, 1, 1, 0, 0, 0}, 1);
  EXPECT_EQ(valuesOf(bl[0]), (std::vector<double>{1, 0}));
  EXPECT_EQ(valuesOf(bl[1]), (std::vector<double>{0, 0}));
}

TEST(TupleReference, HalfInputsCompareInFloat32AndKeepTheirValue) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    std::vector<HostTensor> out = argAll(t, {2, 4}, {0.5, 1.5, -2, 1.5,  kNaN, 3, kNaN, 1}, 1);
    EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{1, 0})) << dtypeName(t);
    EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{2, 0})) << dtypeName(t);
    EXPECT_EQ(out[3].dtype, t);
    EXPECT_EQ(out[3].get(0).asDouble(), 1.5);
    EXPECT_EQ(out[5].get(0).asDouble(), -2);
  }
}

TEST(TupleReference, LargeIndicesNeedTheWholeRow) {
  // The maximum sits near the end of a long row (the multi-block case of a kernel).
  const int64_t n = 30000;
  std::vector<double> x(2 * n);
  for (int64_t k = 0; k < n; ++k) x[k] = x[n + k] = std::sin(0.001 * k);
  x[n - 3] = 7;
  x[n + 5] = 7;
  x[2 * n - 1] = 7;
  std::vector<HostTensor> out = argAll(DType::Float32, {2, n}, x, 1);
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{static_cast<double>(n - 3), 5}));
}

// An int64 argmax over an axis shorter than 2^31 - 1 carries its index in int32 (and
// its Iota feeds int32), yet stores int64: same indices as int32 output, and as the
// int64 index carried over a 2^31-element axis, whose index field stays int64.
TEST(TupleReference, Int64IndicesAreCarriedInInt32WhereTheyFit) {
  EXPECT_EQ(argIndexType(DType::Int64, 50257), DType::Int32);
  EXPECT_EQ(argIndexType(DType::Int64, int64_t{1} << 31), DType::Int64);
  EXPECT_EQ(argIndexType(DType::Int32, 50257), DType::Int32);
  auto narrow = argExtremumTuple(true, DType::Float16, DType::Int64, 50257);
  EXPECT_EQ(narrow->inputs[1], DType::Int32);
  EXPECT_EQ(narrow->fields[1].dtype, DType::Int32);
  EXPECT_EQ(narrow->fields[1].identity.i, std::numeric_limits<int32_t>::max());
  auto wide = argExtremumTuple(true, DType::Float16, DType::Int64, int64_t{1} << 31);
  EXPECT_EQ(wide->fields[1].dtype, DType::Int64);
  EXPECT_EQ(wide->fields[1].identity.i, std::numeric_limits<int64_t>::max());

  std::vector<double> x = {1, 3, 3, 2, 0,  1, kNaN, 5, kNaN, -7,  -kInf, -kInf, -kInf, -kInf, -kInf};
  GraphBuilder b("arg64");
  Value in = b.input("x", DType::Float32, {3, 5});
  b.output(b.argmax(in, 1, DType::Int64));
  b.output(b.argmin(in, 1, DType::Int64));
  std::vector<HostTensor> out = evaluateReference(b.build(), {HostTensor::fromValues(DType::Float32, {3, 5}, x)});
  EXPECT_EQ(out[0].dtype, DType::Int64);
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{4, 1, 0}));
}

namespace {

// Welford in float32 (no widening), folding elements in order; and the naive
// E[x^2] - E[x]^2 with float32 sums.
double welfordF32(const std::vector<float>& x) {
  auto t = welfordTuple(DType::Float32, 0);
  TupleValue acc = tupleIdentity(*t);
  for (float v : x) {
    Scalar s = Scalar::ofFloat(DType::Float32, v);
    acc = combineTuples(*t, acc, liftTuple(*t, std::span<const Scalar>(&s, 1)));
  }
  return finalizeTuple(*t, acc, 0).asDouble();
}

// The same, combined as a binary tree of partials (the order of a block reduction).
double welfordTreeF32(const std::vector<float>& x) {
  auto t = welfordTuple(DType::Float32, 0);
  std::vector<TupleValue> parts;
  for (float v : x) {
    Scalar s = Scalar::ofFloat(DType::Float32, v);
    parts.push_back(liftTuple(*t, std::span<const Scalar>(&s, 1)));
  }
  while (parts.size() > 1) {
    std::vector<TupleValue> next;
    for (size_t k = 0; k + 1 < parts.size(); k += 2) next.push_back(combineTuples(*t, parts[k], parts[k + 1]));
    if (parts.size() % 2) next.push_back(parts.back());
    parts = std::move(next);
  }
  return finalizeTuple(*t, parts[0], 0).asDouble();
}

}  // namespace

TEST(TupleReference, WelfordStaysAccurateWhereTheNaiveFormulaFails) {
  // mean 1e4, std 1, float32 (the numerics test).
  std::mt19937 rng(42);
  std::normal_distribution<double> normal(1e4, 1.0);
  std::vector<float> x(1 << 16);
  for (float& v : x) v = static_cast<float>(normal(rng));
  double mean = 0, m2 = 0;
  for (float v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (float v : x) m2 += (v - mean) * (v - mean);
  const double exact = m2 / static_cast<double>(x.size());

  float s = 0, sq = 0;
  for (float v : x) {
    s += v;
    sq += v * v;
  }
  const float n = static_cast<float>(x.size());
  const double naive = sq / n - (s / n) * (s / n);
  EXPECT_GT(std::abs(naive - exact) / exact, 1e-3) << "naive " << naive << " exact " << exact;
  EXPECT_LT(std::abs(welfordF32(x) - exact) / exact, 1e-3);
  EXPECT_LT(std::abs(welfordTreeF32(x) - exact) / exact, 1e-3);

  // And through the graph (the oracle evaluates float32 fields in float64).
  GraphBuilder b("varmean");
  Value in = b.input("x", DType::Float32, {static_cast<int64_t>(x.size())});
  auto [var, mu] = b.varMean(in, {0}, 0);
  b.output(var);
  b.output(mu);
  std::vector<double> xd(x.begin(), x.end());
  std::vector<HostTensor> out = evaluateReference(b.build(), {HostTensor::fromValues(DType::Float32, {static_cast<int64_t>(x.size())}, xd)});
  EXPECT_LT(std::abs(out[0].get(0).asDouble() - exact) / exact, 1e-6);
  EXPECT_NEAR(out[1].get(0).asDouble(), mean, 1e-3);
}

TEST(TupleReference, VarMeanCorrectionAndRows) {
  GraphBuilder b("varmean");
  Value in = b.input("x", DType::Float64, {2, 4});
  auto [v1, m1] = b.varMean(in, {1}, 1);
  auto [v0, m0] = b.varMean(in, {1}, 0);
  b.output(v1);
  b.output(m1);
  b.output(v0);
  std::vector<HostTensor> out = evaluateReference(b.build(), {HostTensor::fromValues(DType::Float64, {2, 4}, {1, 2, 3, 4, 5, 5, 5, 5})});
  EXPECT_DOUBLE_EQ(out[0].get(0).asDouble(), 5.0 / 3);
  EXPECT_DOUBLE_EQ(out[0].get(1).asDouble(), 0);
  EXPECT_DOUBLE_EQ(out[1].get(0).asDouble(), 2.5);
  EXPECT_DOUBLE_EQ(out[2].get(0).asDouble(), 1.25);
}

TEST(TupleReference, OnlineLogSumExp) {
  GraphBuilder b("lse");
  Value in = b.input("x", DType::Float32, {3, 3});
  b.output(b.logSumExp(in, {1}));
  std::vector<HostTensor> out = evaluateReference(
      b.build(), {HostTensor::fromValues(DType::Float32, {3, 3}, {1000, 1000, 999,  -kInf, -kInf, -kInf,  0, 1, 2})});
  EXPECT_NEAR(out[0].get(0).asDouble(), 1000 + std::log(2 + std::exp(-1.0)), 1e-3);
  EXPECT_EQ(out[0].get(1).asDouble(), -kInf);
  EXPECT_NEAR(out[0].get(2).asDouble(), std::log(1 + std::exp(1.0) + std::exp(2.0)), 1e-5);
}

namespace {

// "The last element": (seen, value), combine keeps b's value when b saw one. Associative,
// not commutative: the reference must fold in row-major order.
std::shared_ptr<const TupleReduction> lastTuple() {
  auto t = std::make_shared<TupleReduction>();
  t->name = "last";
  t->inputs = {DType::Float32};
  t->commutative = false;
  auto a = [](int f) { return ScalarExpr::tupleArg(0, f); };
  auto b = [](int f) { return ScalarExpr::tupleArg(1, f); };
  t->fields.push_back({"seen", DType::Bool, Scalar::ofBool(false), ScalarExpr::constant(Scalar::ofBool(true)),
                       ScalarExpr::apply(OpKind::LogicalOr, {a(0), b(0)})});
  t->fields.push_back({"value", DType::Float32, Scalar::ofFloat(DType::Float32, 0), ScalarExpr::tupleArg(2, 0),
                       ScalarExpr::apply(OpKind::Select, {b(0), b(1), a(1)})});
  t->results.push_back({"last", a(1)});
  return t;
}

}  // namespace

TEST(TupleReference, OrderedUserTupleFoldsInRowMajorOrder) {
  GraphBuilder b("last");
  Value in = b.input("x", DType::Float32, {2, 3, 2});
  b.output(b.reduceTuple({in}, lastTuple(), 0, {0, 2}, false, DType::Float32));
  std::vector<HostTensor> out = evaluateReference(
      b.build(), {HostTensor::fromValues(DType::Float32, {2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})});
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{7, 9, 11}));
}

TEST(TupleReference, MalformedTuplesAreRejected) {
  auto half = std::make_shared<TupleReduction>(*lastTuple());
  half->fields[1].dtype = DType::Float16;
  EXPECT_THROW(half->validate("t"), Error);
  auto wrongSide = std::make_shared<TupleReduction>(*lastTuple());
  wrongSide->fields[1].combine = ScalarExpr::tupleArg(2, 0);  // an element input inside combine
  EXPECT_THROW(wrongSide->validate("t"), Error);
  auto missing = std::make_shared<TupleReduction>(*lastTuple());
  missing->results[0].finalize = ScalarExpr::tupleArg(0, 5);
  EXPECT_THROW(missing->validate("t"), Error);
  auto intNan = std::make_shared<TupleReduction>(*lastTuple());
  intNan->fields[0].combine = ScalarExpr::apply(OpKind::IsNan, {ScalarExpr::tupleArg(0, 0)});
  EXPECT_THROW(intNan->validate("t"), Error);
  EXPECT_NO_THROW(lastTuple()->validate("t"));
  // The graph verifier checks the element inputs against the tuple.
  GraphBuilder b("bad");
  Value in = b.input("x", DType::Int32, {4});
  b.output(b.reduceTuple({in}, lastTuple(), 0, {0}, false, DType::Float32));
  EXPECT_THROW(b.build(), Error);
  GraphBuilder c("axis");
  Value y = c.input("x", DType::Float32, {4, 4});
  EXPECT_THROW(c.argmax(y, 2), Error);
}
