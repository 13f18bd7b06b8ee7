#include <cmath>

#include <gtest/gtest.h>

#include "frontend/builder.h"
#include "ir/graph.h"
#include "support/error.h"

using namespace polyred;

TEST(DType, HalfRoundTripAndRounding) {
  EXPECT_EQ(halfBitsToFloat(floatToHalfBits(1.0f)), 1.0f);
  EXPECT_EQ(halfBitsToFloat(floatToHalfBits(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(halfBitsToFloat(floatToHalfBits(65520.0f))));
  // 1 + 2^-11 is halfway between two halves: ties to even -> 1.0
  EXPECT_EQ(halfBitsToFloat(floatToHalfBits(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(halfBitsToFloat(floatToHalfBits(0x1p-24f)), 0x1p-24f);  // smallest subnormal
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(NAN))));
  EXPECT_EQ(bfloat16BitsToFloat(floatToBFloat16Bits(1.0f + 0x1p-8f)), 1.0f);
}

TEST(DType, IntegerWrap) {
  EXPECT_EQ(Scalar::convert(int64_t{300}, DType::Int8).i, 44);
  EXPECT_EQ(Scalar::convert(int64_t{-1}, DType::UInt8).i, 255);
  EXPECT_EQ(Scalar::convert(2.9, DType::Int32).i, 2);
  EXPECT_EQ(Scalar::convert(-2.9, DType::Int32).i, -2);
}

TEST(Reduction, BuiltinsAreRecognizedAndCombine) {
  Reduction s = Reduction::sum(DType::Float16);
  EXPECT_EQ(s.accType, DType::Float32);
  EXPECT_EQ(s.builtin(), BuiltinCombiner::Sum);
  EXPECT_EQ(s.combine(Scalar::ofFloat(DType::Float32, 1.5), Scalar::ofFloat(DType::Float32, 2)).f, 3.5);
  Reduction m = Reduction::max(DType::Float32);
  EXPECT_TRUE(std::isinf(m.identity.f) && m.identity.f < 0);
  EXPECT_TRUE(std::isnan(m.combine(Scalar::ofFloat(DType::Float32, NAN), Scalar::ofFloat(DType::Float32, 2)).f));
  EXPECT_TRUE(std::isnan(m.combine(Scalar::ofFloat(DType::Float32, 2), Scalar::ofFloat(DType::Float32, NAN)).f));
  Reduction mi8 = Reduction::max(DType::Int8);
  EXPECT_EQ(mi8.identity.i, -128);
  Reduction user;
  user.name = "sumsq";
  user.accType = DType::Float32;
  user.identity = Scalar::ofFloat(DType::Float32, 0);
  user.combiner = ScalarExpr::apply(OpKind::Add, {ScalarExpr::argument(0),
      ScalarExpr::apply(OpKind::Mul, {ScalarExpr::argument(1), ScalarExpr::argument(1)})});
  EXPECT_EQ(user.builtin(), BuiltinCombiner::None);
  EXPECT_EQ(user.combine(Scalar::ofFloat(DType::Float32, 1), Scalar::ofFloat(DType::Float32, 3)).f, 10);
}

TEST(Builder, InfersShapesAndVerifies) {
  GraphBuilder b("t");
  Value x = b.input("x", DType::Float32, {64, 128, 768});
  Value bias = b.input("b", DType::Float32, {768});
  Value s = b.reduceSum(b.add(x, bias), {0, -2});
  b.output(s);
  Graph g = b.build();
  EXPECT_EQ(g.tensor(s.id).shape, (Shape{768}));
  EXPECT_EQ(g.nodes.back().axes, (std::vector<int64_t>{0, 1}));
}

TEST(Builder, RejectsBadAxisAndShapes) {
  GraphBuilder b("t");
  Value x = b.input("x", DType::Float32, {4, 5});
  EXPECT_THROW(b.reduceSum(x, {2}), Error);
  Value y = b.input("y", DType::Float32, {3});
  EXPECT_THROW(b.add(x, y), Error);
}

TEST(Verifier, RejectsDtypeMismatchAndZeroSize) {
  GraphBuilder b("t");
  Value x = b.input("x", DType::Float32, {4});
  Value y = b.input("y", DType::Float16, {4});
  b.output(b.add(x, y));
  EXPECT_THROW(b.build(), Error);
  GraphBuilder z("z");
  Value e = z.input("e", DType::Float32, {4, 0});
  z.output(z.neg(e));
  EXPECT_THROW(z.build(), Error);
}

TEST(Shape, OverflowIsAnError) {
  EXPECT_THROW(numElements({int64_t{1} << 40, int64_t{1} << 40}), Error);
  EXPECT_EQ(numElements({3, 5}), 15);
}
