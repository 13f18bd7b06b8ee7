// codegen/lane_folds: logsumexp's closed form of a vector of lanes against the tree of
// the tuple's own combines (which the reference's meaning is), on random vectors and on
// every edge a row can hold (-inf, +inf, NaN, lanes outside the row as the identity,
// huge and tiny magnitudes, an accumulator that already holds any of those); and which
// tuples take it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "codegen/lane_folds.h"
#include "ir/tuple_program.h"
#include "ir/tuple_reduction.h"

namespace polyred {
namespace {

constexpr double kOutside = -12345.5;  // marks a lane outside the row (the identity)

TupleValue pair(double m, double s) { return {Scalar::ofFloat(DType::Float32, m), Scalar::ofFloat(DType::Float32, s)}; }

double logSumExpOf(const TupleReduction& t, const TupleValue& v) { return finalizeTuple(t, v, 0).asDouble(); }

// acc joined with the lanes both ways; the finalized logsumexp must agree: exactly where
// it is not finite, within 2e-6 relative (float32 sums, exact exponentials) elsewhere.
void expectSameLogSumExp(const std::vector<double>& x, const TupleValue& acc, const std::string& what) {
  const auto t = logSumExpTuple(DType::Float32);
  TuplePrograms programs(*t, false);
  std::vector<TupleValue> lifted;
  for (double v : x)
    lifted.push_back(v == kOutside ? tupleIdentity(*t) : pair(v, 1));
  std::vector<TupleValue> lanesA = lifted, lanesB = lifted;
  TupleValue closed = acc, tree = acc;
  foldLanesOnHost(TupleLaneFold::LogSumExp, *t, programs, lanesA, false, closed);
  ASSERT_EQ(laneFoldOf(*t), TupleLaneFold::LogSumExp);
  for (size_t step = 1; step < lanesB.size(); step *= 2)
    for (size_t l = 0; l + step < lanesB.size(); l += 2 * step) programs.combine.run(lanesB[l], lanesB[l + step]);
  programs.combine.run(tree, lanesB[0]);
  const double want = logSumExpOf(*t, tree), got = logSumExpOf(*t, closed);
  SCOPED_TRACE(what);
  if (!std::isfinite(want)) {
    EXPECT_EQ(std::isnan(got), std::isnan(want)) << got << " vs " << want;
    if (!std::isnan(want)) {
      EXPECT_EQ(got, want);
    }
  } else {
    EXPECT_NEAR(got, want, 2e-6 * std::max(1.0, std::abs(want)));
  }
}

TEST(LaneFolds, LogSumExpClosedFormMatchesTheTreeOfCombines) {
  const double inf = INFINITY, nan = std::nan(""), outside = kOutside;
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0.0, 20.0);
  const std::vector<std::vector<double>> vectors = {
      {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
      {1, 2, 3, inf, 5, 6, 7, 8},
      {1, -inf, inf, 2, 3, 4, 5, 6},
      {1, 2, nan, 4, 5, 6, 7, 8},
      {-inf, -inf, 2.5, -inf, -inf, -inf, -inf, -inf},
      {3e38, -3e38, 3e38, -3e38, 1, 2, 3, 4},
      {-3e38, -2.9e38, -3.3e38, -3e38},  // shifts past 2^127: the kernel's fused exponent would overflow
      {1e4, 1e4 + 1, 1e4 - 1, 1e4, 1e4, 1e4, 1e4, 1e4},
      {outside, outside, 1, 2, 3, outside, outside, outside},
      {outside, outside, outside, outside, outside, outside, outside, -inf},
      {0.25, 0.25, 0.25, 0.25},
      {-90, -100, -110, -120},
      {7, 7},
  };
  const std::vector<TupleValue> accumulators = {pair(-inf, 0), pair(0, 1), pair(5, 3.5), pair(200, 1),
                                                pair(-200, 7), pair(inf, inf), pair(-inf, 3), pair(1, 1e30)};
  for (size_t v = 0; v < vectors.size(); ++v)
    for (size_t a = 0; a < accumulators.size(); ++a)
      expectSameLogSumExp(vectors[v], accumulators[a], "vector " + std::to_string(v) + " accumulator " + std::to_string(a));
  for (int k = 0; k < 2000; ++k) {
    std::vector<double> x(static_cast<size_t>(1) << (k % 5));
    for (double& e : x) e = normal(rng);
    expectSameLogSumExp(x, pair(normal(rng), 1 + std::abs(normal(rng))), "random " + std::to_string(k));
  }
}

TEST(LaneFolds, OnlyFloat32LogSumExpTakesTheClosedForm) {
  EXPECT_EQ(laneFoldOf(*logSumExpTuple(DType::Float16)), TupleLaneFold::LogSumExp);
  EXPECT_EQ(laneFoldOf(*logSumExpTuple(DType::Float64)), TupleLaneFold::Tree);  // float64 fields
  EXPECT_EQ(laneFoldOf(*welfordTuple(DType::Float32, 1)), TupleLaneFold::Tree);
  EXPECT_EQ(laneFoldOf(*argExtremumTuple(true, DType::Float32, DType::Int64, 100)), TupleLaneFold::Tree);
  auto renamed = std::make_shared<TupleReduction>(*logSumExpTuple(DType::Float32));
  renamed->name = "my_lse";  // the structure decides, not the name
  EXPECT_EQ(laneFoldOf(*renamed), TupleLaneFold::LogSumExp);
  renamed->fields[1].combine = ScalarExpr::apply(OpKind::Add, {ScalarExpr::tupleArg(0, 1), ScalarExpr::tupleArg(1, 1)});
  EXPECT_EQ(laneFoldOf(*renamed), TupleLaneFold::Tree);
}

}  // namespace
}  // namespace polyred
