#include "codegen/cpu_block_sample.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

namespace polyred {

namespace {

// A sample of `keep` of the indices 0..count-1: the first, the last and pseudo-random
// others (Floyd's algorithm: no list of all `count` indices, which an elementwise
// kernel's millions of blocks would make long), in increasing order.
std::vector<int64_t> sampleIndices(int64_t count, int64_t keep) {
  std::vector<int64_t> chosen;
  if (keep >= count) {
    chosen.resize(static_cast<size_t>(count));
    std::iota(chosen.begin(), chosen.end(), 0);
    return chosen;
  }
  std::mt19937_64 rng(12345);
  std::set<int64_t> inner;  // from 1..count-2
  const int64_t innerCount = count - 2, innerKeep = keep - 2;
  for (int64_t j = innerCount - innerKeep; j < innerCount; ++j) {
    const int64_t t = std::uniform_int_distribution<int64_t>(0, j)(rng);
    if (!inner.insert(t + 1).second) inner.insert(j + 1);  // t drawn before: j, new by construction
  }
  chosen.push_back(0);
  chosen.insert(chosen.end(), inner.begin(), inner.end());
  chosen.push_back(count - 1);
  return chosen;
}

// The units (bx of an elementwise kernel, by of a reduction) and how many of them run.
struct UnitSample {
  int64_t units = 0, keep = 0;
  bool sampled = false;
};

UnitSample unitSample(const KernelPlan& plan, const Binding& binding, int64_t maxPoints) {
  const bool elementwise = plan.form == CanonicalForm::Elementwise;
  UnitSample s;
  s.units = elementwise ? binding.GX : binding.GY;
  if (s.units == 0) return s;  // a symbolic kernel without rows
  const int64_t pointsPerUnit = std::max<int64_t>(1, plan.M * plan.N / s.units);
  // A scatter adds into rows any block may reach: only all blocks give its sums.
  s.sampled = maxPoints > 0 && pointsPerUnit * s.units > maxPoints && s.units > 2 && !plan.hasScatterStore();
  s.keep = s.sampled ? std::clamp<int64_t>(maxPoints / pointsPerUnit, 2, s.units) : s.units;
  return s;
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> blocksToRun(const KernelPlan& plan, const Binding& binding, int64_t maxPoints,
                                                     bool& sampled) {
  const UnitSample s = unitSample(plan, binding, maxPoints);
  sampled = s.sampled;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  for (int64_t u : sampleIndices(s.units, s.keep)) {
    if (plan.form == CanonicalForm::Elementwise) blocks.emplace_back(u, 0);
    else
      for (int64_t bx = 0; bx < binding.GX; ++bx) blocks.emplace_back(bx, u);
  }
  return blocks;
}

int64_t blocksToRunBytes(const KernelPlan& plan, const Binding& binding, int64_t maxPoints) {
  const UnitSample s = unitSample(plan, binding, maxPoints);
  const int64_t blocks = plan.form == CanonicalForm::Elementwise ? s.keep : s.keep * binding.GX;
  // The chosen units (and, while sampling, their std::set: a ~48-byte node each), then
  // a (bx, by) pair per block.
  return s.keep * (s.sampled ? 56 : 8) + blocks * 16;
}

}  // namespace polyred
