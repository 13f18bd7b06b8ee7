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

}  // namespace

std::vector<std::pair<int64_t, int64_t>> blocksToRun(const PolyKernel& k, int64_t maxPoints, bool& sampled) {
  const Binding& b = k.binding;
  bool elementwise = k.plan.form == CanonicalForm::Elementwise;
  int64_t units = elementwise ? b.GX : b.GY;
  int64_t pointsPerUnit = std::max<int64_t>(1, k.plan.M * k.plan.N / units);
  // A scatter adds into rows any block may reach: only all blocks give its sums.
  sampled = maxPoints > 0 && pointsPerUnit * units > maxPoints && units > 2 && !k.plan.hasScatterStore();
  int64_t keep = sampled ? std::clamp<int64_t>(maxPoints / pointsPerUnit, 2, units) : units;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  for (int64_t u : sampleIndices(units, keep)) {
    if (elementwise) blocks.emplace_back(u, 0);
    else
      for (int64_t bx = 0; bx < b.GX; ++bx) blocks.emplace_back(bx, u);
  }
  return blocks;
}

}  // namespace polyred
