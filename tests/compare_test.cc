// Tests of the comparison and tolerance rules (compare.h) and of the random inputs:
// tolerances must accept the rounding noise of a correct kernel and reject real
// errors.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "frontend/builder.h"
#include "interp/compare.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"

using namespace polyred;

namespace {

HostTensor floats(DType t, const std::vector<double>& v) {
  return HostTensor::fromValues(t, {static_cast<int64_t>(v.size())}, v);
}

// Each element of t multiplied by (1 + e), e drawn uniformly from [-relative, relative].
HostTensor perturbed(const HostTensor& t, double relative, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> noise(-relative, relative);
  HostTensor p = t;
  for (int64_t k = 0; k < t.size(); ++k) p.set(k, Scalar::convert(t.get(k).f * (1 + noise(rng)), t.dtype));
  return p;
}

// Each element of t multiplied by 1 + relative or 1 - relative, at random.
HostTensor scaledBy(const HostTensor& t, double relative, uint64_t seed) {
  std::mt19937_64 rng(seed);
  HostTensor p = t;
  for (int64_t k = 0; k < t.size(); ++k)
    p.set(k, Scalar::convert(t.get(k).f * (rng() % 2 ? 1 + relative : 1 - relative), t.dtype));
  return p;
}

}  // namespace

TEST(Compare, ToleranceTable) {
  Tolerance f32 = toleranceFor(DType::Float32, 1);
  EXPECT_EQ(f32.rtol, 1e-5);
  EXPECT_DOUBLE_EQ(f32.atol, 4e-5);
  EXPECT_DOUBLE_EQ(toleranceFor(DType::Float32, 10000).atol, 4e-5 * 100);
  EXPECT_EQ(toleranceFor(DType::Float64, 1).rtol, 1e-12);
  EXPECT_EQ(toleranceFor(DType::Float16, 1).rtol, 2e-3);
  EXPECT_DOUBLE_EQ(toleranceFor(DType::Float16, 100).atol, 8e-3);  // rounding to f16 dominates
  EXPECT_EQ(toleranceFor(DType::BFloat16, 1).rtol, 1.6e-2);
  for (DType t : {DType::Bool, DType::Int8, DType::UInt8, DType::Int32, DType::Int64}) {
    EXPECT_EQ(toleranceFor(t, 1000).rtol, 0);
    EXPECT_EQ(toleranceFor(t, 1000).atol, 0);
  }
}

// A product's rounding errors are relative and grow with its length, however large it
// is: outputs downstream of a product of P factors get rtol >= 4 sqrt(P) u(acc).
TEST(Compare, ProductsGetARelativeToleranceThatGrowsWithTheirLength) {
  GraphBuilder b("prod");
  Value x = b.input("x", DType::Float32, {300001});
  Value p = b.reduce(x, Reduction::prod(DType::Float32), {0});
  Value s = b.reduceSum(x, {0});
  Value both = b.mul(p, s);
  b.output(both);
  b.output(s);
  Graph g = b.build();
  EXPECT_EQ(productLength(g, x.id), 1);
  EXPECT_EQ(productLength(g, p.id), 300001);
  EXPECT_EQ(productLength(g, both.id), 300001);
  EXPECT_EQ(productLength(g, s.id), 1);
  EXPECT_EQ(accumulationLength(g, p.id), 300001);  // a product is also inexact

  const Tolerance tp = toleranceOf(g, p.id);
  EXPECT_DOUBLE_EQ(tp.rtol, 4 * std::sqrt(300001.0) * 0x1p-24);  // 1.3e-4
  EXPECT_EQ(toleranceOf(g, s.id).rtol, 1e-5);                      // a sum keeps the table's rtol
  EXPECT_EQ(toleranceFor(DType::Float32, 1000, 1000).rtol, 1e-5);  // short products too
  EXPECT_EQ(toleranceFor(DType::Float64, 300001, 300001).rtol, 1e-12);

  // A large product 3e-5 off (float32's drift over 300001 factors) matches; 1e-3 off does not.
  const HostTensor want = HostTensor::fromValues(DType::Float32, {}, {1e6});
  EXPECT_TRUE(compareTensors(HostTensor::fromValues(DType::Float32, {}, {1e6 * (1 + 3e-5)}), want, tp).ok);
  EXPECT_FALSE(compareTensors(HostTensor::fromValues(DType::Float32, {}, {1e6 * (1 + 1e-3)}), want, tp).ok);
  EXPECT_FALSE(compareTensors(HostTensor::fromValues(DType::Float32, {}, {1e6 * (1 + 3e-5)}), want,
                              toleranceOf(g, s.id)).ok);
}

TEST(Compare, AccumulationLengthIsTheLongestInexactReductionUpstream) {
  GraphBuilder b("acc");
  Value x = b.input("x", DType::Float32, {4, 5, 6});
  Value s = b.reduceSum(x, {0, 2});                          // 24 elements per output
  Value e = b.neg(s);                                        // inherits 24
  Value m = b.reduceMax(x, {1, 2});                          // exact: counts as 1
  Value chained = b.reduceSum(b.reduceSum(x, {2}), {1});    // 6, then 5
  Value joined = b.add(b.reduceSum(x, {1, 2}), chained);     // 30 and 6
  b.output(e);
  b.output(m);
  b.output(joined);
  Graph g = b.build();
  EXPECT_EQ(accumulationLength(g, x.id), 1);
  EXPECT_EQ(accumulationLength(g, s.id), 24);
  EXPECT_EQ(accumulationLength(g, e.id), 24);
  EXPECT_EQ(accumulationLength(g, m.id), 1);
  EXPECT_EQ(accumulationLength(g, chained.id), 6);
  EXPECT_EQ(accumulationLength(g, joined.id), 30);
}

// A float32 output downstream of bfloat16 or float16 values that inexact ops computed
// takes their precision: a one-ulp difference in such a value (GPU logf against the
// host's double log) is legitimate. Exact ops (Add, Mul, Cast, movement) in narrow types,
// and float math in float32, keep the float32 tolerance.
TEST(Compare, NarrowInexactIntermediatesWidenTheTolerance) {
  GraphBuilder b("narrow");
  Value h = b.input("h", DType::BFloat16, {8, 129});
  Value f = b.input("f", DType::Float32, {8, 129});
  Value logged = b.unary(OpKind::Log, b.unary(OpKind::Abs, h));               // bfloat16 float math
  Value viaLog = b.reduceSum(b.cast(logged, DType::Float32), {1});
  Value viaAdd = b.reduceSum(b.cast(b.add(h, h), DType::Float32), {1});       // exact in float32
  Value viaF32Math = b.reduceSum(b.unary(OpKind::Exp, f), {1});
  Value halfDiv = b.binary(OpKind::Div, b.cast(h, DType::Float16), b.cast(h, DType::Float16));  // float16 Div
  Value viaBoth = b.add(b.reduceSum(b.cast(halfDiv, DType::Float32), {1}), viaLog);
  for (Value v : {viaLog, viaAdd, viaF32Math, viaBoth}) b.output(v);
  Graph g = b.build();
  EXPECT_EQ(inexactlyRoundedUpstream(g, viaLog.id), DType::BFloat16);
  EXPECT_EQ(inexactlyRoundedUpstream(g, viaAdd.id), std::nullopt);
  EXPECT_EQ(inexactlyRoundedUpstream(g, viaF32Math.id), std::nullopt);
  EXPECT_EQ(inexactlyRoundedUpstream(g, viaBoth.id), DType::BFloat16) << "the least precise of the two";
  const Tolerance plain = toleranceOf(g, viaAdd.id), narrow = toleranceOf(g, viaLog.id);
  EXPECT_EQ(plain.rtol, toleranceFor(DType::Float32, 129).rtol);
  EXPECT_EQ(narrow.rtol, toleranceFor(DType::BFloat16, 1).rtol);
  EXPECT_GE(narrow.atol, 4 * narrow.rtol);
  // One bfloat16 ulp of a term of about 2 in a sum of about 15 (the GPU's noise case)
  // passes the widened tolerance and not the plain one; a term of 1 missing fails both.
  const HostTensor expected = floats(DType::Float32, {15.005859375});
  const HostTensor offByUlp = floats(DType::Float32, {15.005859375 - 0x1p-6});
  const HostTensor missing = floats(DType::Float32, {14.005859375});
  EXPECT_TRUE(compareTensors(offByUlp, expected, narrow).ok);
  EXPECT_FALSE(compareTensors(offByUlp, expected, plain).ok);
  EXPECT_FALSE(compareTensors(missing, expected, narrow).ok);
  // The run's largest error: 0.015625 on a row summing to about 0.44 (3.6% relative).
  EXPECT_TRUE(compareTensors(floats(DType::Float32, {0.4375 - 0x1p-6}), floats(DType::Float32, {0.4375}), narrow).ok);
}

TEST(Compare, IdenticalTensorsMatch) {
  HostTensor t = floats(DType::Float32, {1, -2, 3.5});
  CompareResult r = compareTensors(t, t, toleranceFor(DType::Float32, 1));
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.firstBadIndex, -1);
  EXPECT_EQ(r.maxAbsError, 0);
}

TEST(Compare, ReportsTheFirstMismatchAndTheMaxima) {
  HostTensor want = HostTensor::fromValues(DType::Float32, {2, 2}, {1, 2, 4, 8});
  HostTensor got = HostTensor::fromValues(DType::Float32, {2, 2}, {1, 2.5, 4, 6});
  CompareResult r = compareTensors(got, want, toleranceFor(DType::Float32, 1));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.firstBadIndex, 1);
  EXPECT_EQ(r.maxAbsError, 2);
  EXPECT_EQ(r.maxRelError, 0.25);
  EXPECT_NE(r.message.find("index 1 [0,1]"), std::string::npos) << r.message;
}

TEST(Compare, NaNAndInfinitiesMatchOnlyThemselves) {
  Tolerance tol = toleranceFor(DType::Float32, 1);
  HostTensor special = floats(DType::Float32, {NAN, INFINITY, -INFINITY});
  EXPECT_TRUE(compareTensors(special, special, tol).ok);
  EXPECT_FALSE(compareTensors(floats(DType::Float32, {1}), floats(DType::Float32, {NAN}), tol).ok);
  EXPECT_FALSE(compareTensors(floats(DType::Float32, {NAN}), floats(DType::Float32, {1}), tol).ok);
  EXPECT_FALSE(compareTensors(floats(DType::Float32, {-INFINITY}), floats(DType::Float32, {INFINITY}), tol).ok);
  EXPECT_FALSE(compareTensors(floats(DType::Float32, {3e38}), floats(DType::Float32, {INFINITY}), tol).ok);
  CompareResult r = compareTensors(floats(DType::Float32, {INFINITY}), floats(DType::Float32, {1}), tol);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(std::isinf(r.maxAbsError));
}

TEST(Compare, IntegersAndBoolMustMatchExactly) {
  Tolerance tol = toleranceFor(DType::Int32, 1000);
  HostTensor want = HostTensor::fromValues(DType::Int32, {3}, {100000, -5, 7});
  EXPECT_TRUE(compareTensors(want, want, tol).ok);
  EXPECT_FALSE(compareTensors(HostTensor::fromValues(DType::Int32, {3}, {100001, -5, 7}), want, tol).ok);
  HostTensor yes = HostTensor::fromValues(DType::Bool, {2}, {1, 1});
  EXPECT_FALSE(compareTensors(HostTensor::fromValues(DType::Bool, {2}, {1, 0}), yes, toleranceFor(DType::Bool, 1)).ok);
}

TEST(Compare, DtypeOrShapeDifferencesFail) {
  HostTensor a = HostTensor::zeros(DType::Float32, {2, 3});
  EXPECT_FALSE(compareTensors(HostTensor::zeros(DType::Float32, {3, 2}), a, {1, 1}).ok);
  EXPECT_FALSE(compareTensors(HostTensor::zeros(DType::Float16, {2, 3}), a, {1, 1}).ok);
}

TEST(Compare, Float16ToleranceIsAboutTwoUlps) {
  // Near 1 a float16 ulp is 2^-10.
  Tolerance tol = toleranceFor(DType::Float16, 1);
  HostTensor one = floats(DType::Float16, {1.0});
  EXPECT_TRUE(compareTensors(floats(DType::Float16, {1 + 0x1p-10}), one, tol).ok);
  EXPECT_TRUE(compareTensors(floats(DType::Float16, {1 + 0x1p-9}), one, tol).ok);
  EXPECT_FALSE(compareTensors(floats(DType::Float16, {1 + 0x1p-6}), one, tol).ok);
}

// A float32 kernel summing 8192 O(1) terms sequentially in float32 (the worst order)
// must pass; summing one element too few must not.
TEST(Compare, Float32SumNoiseIsAcceptedAndAMissingTermIsNot) {
  const int64_t rows = 64, length = 8192;
  GraphBuilder b("rowsum");
  Value x = b.input("x", DType::Float32, {rows, length});
  b.output(b.reduceSum(x, {1}));
  Graph g = b.build();
  for (ValueRange range : {ValueRange::Symmetric, ValueRange::Positive}) {
    std::vector<HostTensor> in = makeRandomInputs(g, 11, range);
    HostTensor want = evaluateReference(g, in)[0];
    HostTensor sequential = HostTensor::zeros(DType::Float32, {rows});
    HostTensor missingOne = HostTensor::zeros(DType::Float32, {rows});
    for (int64_t r = 0; r < rows; ++r) {
      float sum = 0;
      for (int64_t k = 0; k < length - 1; ++k) sum += static_cast<float>(in[0].get(r * length + k).f);
      missingOne.set(r, Scalar::ofFloat(DType::Float32, sum));
      sum += static_cast<float>(in[0].get(r * length + length - 1).f);
      sequential.set(r, Scalar::ofFloat(DType::Float32, sum));
    }
    Tolerance tol = toleranceFor(DType::Float32, accumulationLength(g, g.outputs[0].tensor));
    CompareResult noisy = compareTensors(sequential, want, tol);
    EXPECT_TRUE(noisy.ok) << noisy.message;
    CompareResult wrong = compareTensors(missingOne, want, tol);
    EXPECT_FALSE(wrong.ok);
    EXPECT_GT(wrong.mismatches, rows / 2) << wrong.message;
  }
}

// A float16 output of a float32-accumulated sum, rounded once at the end, must pass.
TEST(Compare, Float16SumWithFloat32AccumulationIsAccepted) {
  const int64_t rows = 64, length = 4096;
  GraphBuilder b("rowsum16");
  Value x = b.input("x", DType::Float16, {rows, length});
  b.output(b.reduceSum(x, {1}));
  Graph g = b.build();
  std::vector<HostTensor> in = makeRandomInputs(g, 5, ValueRange::Positive);
  HostTensor want = evaluateReference(g, in)[0];
  HostTensor got = HostTensor::zeros(DType::Float16, {rows});
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0;
    for (int64_t k = 0; k < length; ++k) sum += static_cast<float>(in[0].get(r * length + k).f);
    got.set(r, Scalar::ofFloat(DType::Float32, sum));
  }
  CompareResult c = compareTensors(got, want, toleranceFor(DType::Float16, length));
  EXPECT_TRUE(c.ok) << c.message;
}

// ---- property: random graphs ----------------------------------------------------

namespace {

// A random float32 graph: a few elementwise ops over two inputs (one broadcast along
// the leading dims), a sum or max over random axes, and one op after it.
Graph randomGraph(std::mt19937_64& rng) {
  auto pick = [&rng](size_t n) { return static_cast<size_t>(rng() % n); };
  Shape shape;
  size_t rank = 1 + pick(3);
  for (size_t d = 0; d < rank; ++d) shape.push_back(static_cast<int64_t>(1 + pick(48)));
  GraphBuilder b("random");
  std::vector<Value> pool{b.input("x", DType::Float32, shape), b.input("y", DType::Float32, {shape.back()})};
  const OpKind unary[] = {OpKind::Neg, OpKind::Abs, OpKind::Tanh};
  const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Maximum, OpKind::Minimum};
  for (size_t n = 1 + pick(5); n > 0; --n) {
    Value a = pool[pick(pool.size())];
    Value c = pool[pick(pool.size())];
    if (c.id == a.id) c = a.id == pool[0].id ? pool[1] : pool[0];  // a - a would be all zeros
    pool.push_back(pick(3) == 0 ? b.unary(unary[pick(3)], a) : b.binary(binary[pick(5)], a, c));
  }
  Value last = b.binary(OpKind::Mul, pool.back(), pool[0]);  // full rank
  std::vector<int64_t> axes;
  for (size_t d = 0; d < rank; ++d)
    if (rng() % 2) axes.push_back(static_cast<int64_t>(d));
  if (axes.empty()) axes.push_back(static_cast<int64_t>(pick(rank)));
  Value r = pick(3) == 0 ? b.reduceMax(last, axes, rng() % 2) : b.reduceSum(last, axes, rng() % 2);
  b.output(b.add(r, b.unary(OpKind::Tanh, r)));
  return b.build();
}

// True if scaling some element by 1% moves it clearly (2x) outside the tolerance.
bool onePercentIsVisible(const HostTensor& t, Tolerance tol) {
  for (int64_t k = 0; k < t.size(); ++k)
    if (0.01 * std::fabs(t.get(k).f) > 2 * (tol.atol + tol.rtol * std::fabs(t.get(k).f))) return true;
  return false;
}

}  // namespace

TEST(Compare, RandomGraphsAcceptTinyNoiseAndRejectOnePercent) {
  std::mt19937_64 rng(2024);
  int visible = 0;
  const int trials = 200;
  for (int trial = 0; trial < trials; ++trial) {
    Graph g = randomGraph(rng);
    std::vector<HostTensor> in = makeRandomInputs(g, static_cast<uint64_t>(trial));
    HostTensor want = evaluateReference(g, in)[0];
    Tolerance tol = toleranceFor(DType::Float32, accumulationLength(g, g.outputs[0].tensor));
    CompareResult tiny = compareTensors(perturbed(want, 3e-7, rng()), want, tol);
    EXPECT_TRUE(tiny.ok) << g.toString() << tiny.message;
    if (!onePercentIsVisible(want, tol)) continue;  // every element is 0 or tiny
    ++visible;
    CompareResult large = compareTensors(scaledBy(want, 0.01, rng()), want, tol);
    EXPECT_FALSE(large.ok) << g.toString() << large.message;
  }
  EXPECT_GT(visible, trials * 3 / 4);
}

// ---- random inputs -----------------------------------------------------------------

TEST(RandomInputs, DeterministicAndNeverZero) {
  HostTensor a = makeRandomTensor(DType::Float32, {100000}, 9);
  EXPECT_EQ(a.bytes, makeRandomTensor(DType::Float32, {100000}, 9).bytes);
  EXPECT_NE(a.bytes, makeRandomTensor(DType::Float32, {100000}, 10).bytes);
  double lo = 1, hi = -1;
  for (int64_t k = 0; k < a.size(); ++k) {
    double v = a.get(k).f;
    EXPECT_NE(v, 0);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -1);
  EXPECT_LT(hi, 1);
  EXPECT_LT(lo, -0.99);
  EXPECT_GT(hi, 0.99);
}

TEST(RandomInputs, RangesPerDtype) {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float64}) {
    HostTensor p = makeRandomTensor(t, {20000}, 1, ValueRange::Positive);
    HostTensor s = makeRandomTensor(t, {20000}, 1, ValueRange::Symmetric);
    for (int64_t k = 0; k < p.size(); ++k) {
      ASSERT_GE(p.get(k).f, 0.5) << dtypeName(t);
      ASSERT_LE(p.get(k).f, 2.0) << dtypeName(t);  // 2 - eps may round up to 2 in float16
      ASSERT_NE(s.get(k).f, 0) << dtypeName(t);
      ASSERT_LE(std::fabs(s.get(k).f), 1.0) << dtypeName(t);
    }
  }
  HostTensor i8 = makeRandomTensor(DType::Int8, {20000}, 2);
  HostTensor u8 = makeRandomTensor(DType::UInt8, {20000}, 2);
  HostTensor i64 = makeRandomTensor(DType::Int64, {20000}, 2, ValueRange::Positive);
  int64_t lo = 0, hi = 0;
  for (int64_t k = 0; k < i8.size(); ++k) {
    lo = std::min(lo, i8.get(k).i);
    hi = std::max(hi, i8.get(k).i);
    ASSERT_GE(u8.get(k).i, 1);
    ASSERT_LT(u8.get(k).i, 100);
    ASSERT_GE(i64.get(k).i, 1);
  }
  EXPECT_EQ(lo, -100);
  EXPECT_EQ(hi, 99);
}

TEST(RandomInputs, BoolIsMostlyTrue) {
  HostTensor b = makeRandomTensor(DType::Bool, {100000}, 4);
  int64_t trues = 0;
  for (int64_t k = 0; k < b.size(); ++k) trues += b.get(k).i;
  EXPECT_GT(trues, 88000);
  EXPECT_LT(trues, 92000);
}

TEST(RandomInputs, OneTensorPerGraphInputInOrder) {
  GraphBuilder b("g");
  Value x = b.input("x", DType::Float16, {3, 4});
  Value m = b.input("m", DType::Bool, {4});
  b.output(b.select(m, x, x));
  std::vector<HostTensor> in = makeRandomInputs(b.build(), 1);
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].dtype, DType::Float16);
  EXPECT_EQ(in[0].shape, (Shape{3, 4}));
  EXPECT_EQ(in[1].dtype, DType::Bool);
  EXPECT_EQ(in[1].byteSize(), 4);
}
