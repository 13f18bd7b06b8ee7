// Count fields of tuple reductions (ir/tuple_counts.h) and how the tuple emitter prints
// their expressions (codegen/tuple_emitter.cc): which fields are counts (Welford's
// count; not a float64 count, one with identity -0, a fractional lift or any other
// combine), which divisions divide counts, and the printed combine -- each shared
// operation declared once as a local, a division of counts through pr_div_counts,
// other divisions as IEEE division.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "codegen/tuple_emitter.h"
#include "ir/tuple_counts.h"
#include "ir/tuple_reduction.h"

namespace polyred {
namespace {

ScalarExprPtr arg(int side, int field) { return ScalarExpr::tupleArg(side, field); }
ScalarExprPtr op(OpKind k, std::vector<ScalarExprPtr> xs) { return ScalarExpr::apply(k, std::move(xs)); }
ScalarExprPtr f32(double v) { return ScalarExpr::constant(Scalar::ofFloat(DType::Float32, v)); }

// Welford with field 0 changed by `edit`.
std::shared_ptr<TupleReduction> welfordWith(void (*edit)(TupleField&)) {
  auto t = std::make_shared<TupleReduction>(*welfordTuple(DType::Float32, 1));
  edit(t->fields[0]);
  return t;
}

// The device code tupleDefinitions prints for `t`.
std::string definitionsOf(std::shared_ptr<const TupleReduction> t) {
  Reduction red;
  red.tuple = std::move(t);
  return tupleDefinitions(red, 0, 0);
}

// The text from "struct Combine0" up to `end`.
std::string combineOf(const std::string& text, const std::string& end) {
  const size_t from = text.find("struct Combine0");
  return text.substr(from, text.find(end) - from);
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(TupleCounts, WelfordsCountIsTheOnlyCountField) {
  EXPECT_EQ(countFields(*welfordTuple(DType::Float32, 1)), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(countFields(*welfordTuple(DType::Float16, 0)), (std::vector<bool>{true, false, false}));
  // float64 fields divide with IEEE division (pr_div_counts is float32's sequence)
  EXPECT_EQ(countFields(*welfordTuple(DType::Float64, 1)), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(countFields(*argExtremumTuple(true, DType::Float32, DType::Int64, 1000)), (std::vector<bool>{false, false}));
  EXPECT_EQ(countFields(*logSumExpTuple(DType::Float16)), (std::vector<bool>{false, false}));
}

TEST(TupleCounts, OnlyWholeLiftsFromZeroAddedToThemselvesCount) {
  EXPECT_TRUE(countFields(*welfordWith([](TupleField& f) { f.lift = f32(3); }))[0]);
  EXPECT_TRUE(countFields(*welfordWith([](TupleField& f) { f.combine = op(OpKind::Add, {arg(1, 0), arg(0, 0)}); }))[0]);
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) { f.identity = Scalar::ofFloat(DType::Float32, -0.0); }))[0]);
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) { f.identity = Scalar::ofFloat(DType::Float32, 1); }))[0]);
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) { f.lift = f32(0.5); }))[0]);
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) { f.lift = f32(0); }))[0]);
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) { f.lift = f32(33554432); }))[0]);  // past 2^24
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) { f.lift = arg(2, 0); }))[0]);
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) {
    f.combine = op(OpKind::Add, {op(OpKind::Add, {arg(0, 0), arg(1, 0)}), f32(1)});
  }))[0]);
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) { f.combine = op(OpKind::Add, {arg(0, 0), arg(1, 1)}); }))[0]);
  EXPECT_FALSE(countFields(*welfordWith([](TupleField& f) { f.combine = op(OpKind::Maximum, {arg(0, 0), arg(1, 0)}); }))[0]);
}

TEST(TupleCounts, DivisionsOfSumsOfCountsAndWholeConstants) {
  const std::vector<bool> counts = {true, false, false};
  const ScalarExprPtr sum = op(OpKind::Add, {arg(0, 0), arg(1, 0)});
  EXPECT_TRUE(dividesCounts(*arg(1, 0), *sum, counts));
  EXPECT_TRUE(dividesCounts(*op(OpKind::Add, {arg(0, 0), f32(2)}), *arg(1, 0), counts));
  EXPECT_EQ(countBound(*op(OpKind::Add, {sum, sum}), counts), 4);
  EXPECT_FALSE(dividesCounts(*arg(0, 1), *sum, counts));                                      // a mean
  EXPECT_FALSE(dividesCounts(*arg(1, 0), *op(OpKind::Sub, {arg(0, 0), f32(1)}), counts));     // may be negative
  EXPECT_FALSE(dividesCounts(*arg(1, 0), *op(OpKind::Add, {arg(0, 0), f32(0.5)}), counts));   // not whole
  EXPECT_FALSE(dividesCounts(*arg(1, 0), *op(OpKind::Add, {arg(0, 0), f32(-0.0)}), counts));  // -0
  EXPECT_FALSE(dividesCounts(*arg(2, 0), *sum, counts));                                      // an element input
  // A sum of more terms than the bound that keeps counts below 2^100.
  ScalarExprPtr many = arg(0, 0);
  for (int k = 1; k < kCountTermsForDivision + 1; ++k) many = op(OpKind::Add, {many, arg(1, 0)});
  EXPECT_FALSE(dividesCounts(*arg(1, 0), *many, counts));
}

TEST(TupleCounts, SharedOperationsPrintOnceAndCountsDivideWithoutTheRangeCheck) {
  const std::string text = definitionsOf(welfordTuple(DType::Float32, 1));
  const std::string combine = combineOf(text, "lift0");
  // count sum, empty test, mean difference and share: one local each
  EXPECT_EQ(occurrences(combine, "(a.f0 + b.f0)"), 1u) << combine;
  EXPECT_EQ(occurrences(combine, "(b.f1 - a.f1)"), 1u) << combine;
  EXPECT_EQ(occurrences(combine, "pr_div_counts(b.f0, v"), 1u) << combine;
  EXPECT_EQ(occurrences(combine, " / "), 0u) << combine;
  // The variance divides by count - 1: not a count, IEEE division.
  EXPECT_NE(text.find("finalize0(const Tuple0& a) { return (a.f2 / (a.f0 - 0x1p+0f)); }"), std::string::npos) << text;

  const std::string text64 = definitionsOf(welfordTuple(DType::Float64, 1));
  EXPECT_EQ(occurrences(text64, "pr_div_counts"), 0u) << text64;
  EXPECT_EQ(occurrences(text64, "(b.f0 / v"), 1u) << text64;

  // argmax's winner test picks both fields: declared once, both selects read it.
  const std::string argCombine =
      combineOf(definitionsOf(argExtremumTuple(true, DType::Float32, DType::Int32, 1000)), "struct CombineLater0");
  EXPECT_EQ(occurrences(argCombine, "(a.f1 < b.f1)"), 1u) << argCombine;
  EXPECT_EQ(occurrences(argCombine, " ? a.f0 : b.f0)"), 1u) << argCombine;
  EXPECT_EQ(occurrences(argCombine, " ? a.f1 : b.f1)"), 1u) << argCombine;
}

}  // namespace
}  // namespace polyred
