#include "codegen/lane_folds.h"

#include <array>
#include <cmath>

#include "ir/ops.h"
#include "support/error.h"

namespace polyred {

TupleLaneFold laneFoldOf(const TupleReduction& t) {
  if (isLogSumExpTuple(t) && t.fields.at(0).dtype == DType::Float32) return TupleLaneFold::LogSumExp;
  return TupleLaneFold::Tree;
}

TupleLaneFold laneFoldFor(const KernelPlan& plan, size_t r) {
  const Reduction& red = plan.reductions.at(r).reduction;
  return red.isTuple() ? laneFoldOf(*red.tuple) : TupleLaneFold::Tree;
}

namespace {

constexpr size_t kMaxLanes = 16;  // 16 bytes of 1-byte elements
constexpr float kLog2e = 1.4426950408889634f;

float maxOf(float a, float b) { return static_cast<float>(floatMaximum(a, b)); }
float expOf(float x) { return static_cast<float>(std::exp(static_cast<double>(x))); }
float exp2Of(float x) { return static_cast<float>(std::exp2(static_cast<double>(x))); }
float shiftOf(float m) { return std::isinf(m) ? 0.0f : m; }

// pr_fold_logsumexp_lanes, step for step (its fused exponent 2^(x log2(e) - z log2(e))
// included, so that a shift the kernel gets wrong shows here): the lanes' maximum and
// the sum of their exponentials as trees over (l, l + s), then the join.
void foldLogSumExp(std::span<TupleValue> lanes, TupleValue& acc) {
  const size_t V = lanes.size();
  std::array<float, kMaxLanes> x{}, m{}, e{};
  POLYRED_CHECK(V <= kMaxLanes, V << " lanes of a logsumexp tuple");
  for (size_t l = 0; l < V; ++l) m[l] = x[l] = static_cast<float>(lanes[l][0].asDouble());
  for (size_t step = 1; step < V; step *= 2)
    for (size_t l = 0; l + step < V; l += 2 * step) m[l] = maxOf(m[l], m[l + step]);
  const float z = shiftOf(m[0]);
  const float zl = z * kLog2e;
  for (size_t l = 0; l < V; ++l) e[l] = exp2Of(std::fma(x[l], kLog2e, -zl));
  for (size_t step = 1; step < V; step *= 2)
    for (size_t l = 0; l + step < V; l += 2 * step) e[l] += e[l + step];
  if (std::isinf(zl)) e[0] = 1.0f;
  const float M = static_cast<float>(acc[0].asDouble()), S = static_cast<float>(acc[1].asDouble());
  const float joined = maxOf(M, m[0]), zj = shiftOf(joined);
  acc[0] = Scalar::ofFloat(DType::Float32, joined);
  acc[1] = Scalar::ofFloat(DType::Float32, S * expOf(M - zj) + e[0] * expOf(m[0] - zj));
}

}  // namespace

void foldLanesOnHost(TupleLaneFold fold, const TupleReduction& t, TuplePrograms& programs, std::span<TupleValue> lanes,
                     bool whole, TupleValue& acc) {
  if (fold == TupleLaneFold::LogSumExp) return foldLogSumExp(lanes, acc);
  TupleProgram& tree = whole && t.hasCombineLater() ? *programs.later : programs.combine;
  for (size_t step = 1; step < lanes.size(); step *= 2)
    for (size_t l = 0; l + step < lanes.size(); l += 2 * step) tree.run(lanes[l], lanes[l + step]);
  programs.combine.run(acc, lanes[0]);
}

}  // namespace polyred
